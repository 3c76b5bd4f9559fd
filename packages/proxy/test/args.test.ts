/** The command-line definitions every `mcpguard` command is built from (src/args.ts, on commander). */
import { afterEach, describe, expect, it, vi } from "vitest";
import { defineCommand, dispatch, UsageError } from "../src/args.ts";

const TEST = defineCommand({
  name: "mcpguard test",
  description: "A command to test the definitions with.",
  withCommand: "required",
  options: {
    config: { type: "string", default: "C0", value: "name", help: "the config" },
    /** An alias: no help, so no line in the help. */
    configs: { type: "string", value: "list" },
    root: { type: "string", multiple: true, value: "dir", help: "a folder (repeatable)" },
    decision: { type: "string", choices: ["allow", "deny"], help: "a decision" },
    "no-direct": { type: "boolean", help: "skip it" },
    yes: { type: "boolean", short: "y", help: "do it" },
  },
  more: "formats:\n  a   the first",
});

const PLAIN = defineCommand({
  name: "mcpguard plain",
  description: "Takes one file.",
  args: [["<file>", "the file"]],
  options: { json: { type: "boolean", help: "as JSON" } },
});

function usage(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    const message = (error as Error).message;
    expect(message).not.toContain("\n");
    return message;
  }
  throw new Error("no usage error");
}

afterEach(() => vi.restoreAllMocks());

describe("defineCommand", () => {
  it("parses options by their names, with defaults, lists, choices and --no- flags", () => {
    const parsed = TEST.parse([
      "--root",
      "a",
      "--root=b",
      "-y",
      "--no-direct",
      "--decision",
      "deny",
      "--",
      "node",
      "s.js",
    ]);
    expect(parsed?.values).toEqual({
      config: "C0",
      configs: undefined,
      root: ["a", "b"],
      decision: "deny",
      "no-direct": true,
      yes: true,
    });
    expect(parsed?.command).toEqual(["node", "s.js"]);
    expect(TEST.parse(["--", "x"])?.values["no-direct"]).toBeUndefined();
  });

  it("takes the server's command from the first word that is not an option, untouched", () => {
    const parsed = TEST.parse(["--config", "C-app", "node", "server.js", "--config", "x"]);
    expect(parsed?.values.config).toBe("C-app");
    expect(parsed?.command).toEqual(["node", "server.js", "--config", "x"]);
  });

  it("refuses a word before -- instead of dropping it", () => {
    expect(usage(() => TEST.parse(["echo", "hi", "--", "there"]))).toBe(
      'unexpected argument "echo" before --: the server\'s command goes after --',
    );
  });

  it("says what is wrong in one line: unknown options (with the likely one), missing values, choices", () => {
    expect(usage(() => TEST.parse(["--confg", "C0", "--", "x"]))).toBe(
      "unknown option '--confg' (Did you mean --config?)",
    );
    expect(usage(() => TEST.parse(["--config"]))).toBe("option '--config <name>' argument missing");
    expect(usage(() => TEST.parse(["--decision", "maybe", "--", "x"]))).toMatch(
      /argument 'maybe' is invalid. Allowed choices are allow, deny/,
    );
  });

  it("checks positional words against the definition", () => {
    expect(PLAIN.parse(["f.json", "--json"])).toMatchObject({
      positionals: ["f.json"],
      values: { json: true },
    });
    expect(usage(() => PLAIN.parse([]))).toBe("missing required argument 'file'");
    expect(usage(() => PLAIN.parse(["a", "b"]))).toBe('unexpected argument "b" (see mcpguard plain --help)');
  });

  it("prints the help from the same definition: every option with help, aliases left out, the text after", () => {
    const write = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    expect(TEST.parse(["--help"])).toBeUndefined();
    const help = String(write.mock.calls.map((c) => c[0]).join(""));
    expect(help).toBe(TEST.help());
    expect(help).toMatch(/^usage: mcpguard test \[options\] -- <command> \[args\.\.\.\]\n/);
    for (const flag of [
      "--config <name>",
      "--root <dir>",
      "--decision <value>",
      "--no-direct",
      "-y, --yes",
      "-h, --help",
    ])
      expect(help).toContain(flag);
    expect(help).not.toContain("--configs");
    expect(help).toMatch(/formats:\n {2}a {3}the first\n$/);
  });
});

describe("dispatch", () => {
  const subs = { one: { summary: "the first", run: (argv: string[]) => argv.length } };

  it("runs the subcommand the first word names, with the rest", () => {
    expect(dispatch("mcpguard group", "A group.", subs, ["one", "a", "b"])).toBe(2);
  });

  it("lists the subcommands when asked, or when none is given (exit 2)", () => {
    const write = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    expect(dispatch("mcpguard group", "A group.", subs, [])).toBe(2);
    expect(dispatch("mcpguard group", "A group.", subs, ["--help"])).toBe(0);
    const help = String(write.mock.calls[0]?.[0]);
    expect(help).toMatch(/^usage: mcpguard group <command> \[options\]/);
    expect(help).toMatch(/ {2}one +the first/);
    expect(help).not.toMatch(/help \[command\]/);
  });

  it("refuses an unknown subcommand, and never one from Object's prototype", () => {
    expect(usage(() => dispatch("mcpguard group", "A group.", subs, ["two"]))).toBe(
      'unknown group command "two" (one)',
    );
    expect(usage(() => dispatch("mcpguard group", "A group.", subs, ["toString"]))).toMatch(
      /unknown group command/,
    );
  });
});
