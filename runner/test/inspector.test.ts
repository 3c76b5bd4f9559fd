/**
 * A real client in front of the proxy: the MCP Inspector's CLI (pinned devDependency), configured
 * the way a user configures a client (`mcpServers` with the proxy in front of the server), gets the
 * same answers from server-everything through C0 and C-full as straight from the server, for every
 * method it can call. Timestamps that the server puts in its answers are normalised.
 */
import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { repoPath } from "../src/paths.ts";
import { loadRealRegistry, scriptPath } from "../src/registry.ts";

const run = promisify(execFile);
const MCPGUARD = repoPath("packages", "proxy", "bin", "mcpguard.js");
const inspectorPackage = createRequire(import.meta.url).resolve(
  "@modelcontextprotocol/inspector/package.json",
);
const { bin, version } = JSON.parse(readFileSync(inspectorPackage, "utf8")) as {
  bin: Record<string, string>;
  version: string;
};
const INSPECTOR = join(dirname(inspectorPackage), bin["mcp-inspector"] as string);
const everything = loadRealRegistry().get("everything");
if (!everything) throw new Error("servers/real/registry.json has no everything server");
const SERVER = ["node", ...everything.argv.slice(1).map((arg) => scriptPath(everything, arg))];
const l3 = spawnSync(process.execPath, [MCPGUARD, "doctor"], { encoding: "utf8" }).status === 0;
if (!l3) console.warn("inspector: C-full is left out, the kernel layer cannot run here");

const scratch = mkdtempSync(join(tmpdir(), "mcpguard-inspector-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The client's configuration: the server as it is, and behind the proxy under each config. */
const proxied = (config: string) => ({
  command: process.execPath,
  args: [
    MCPGUARD,
    "run",
    "--config",
    config,
    "--policy",
    repoPath("policies", "servers", "everything.json"),
    "--manifest",
    repoPath("policies", "agentbound", "everything.json"),
    ...SERVER,
  ],
});
const CONFIG = join(scratch, "mcp.json");
writeFileSync(
  CONFIG,
  JSON.stringify({
    mcpServers: {
      direct: { command: SERVER[0], args: SERVER.slice(1) },
      C0: proxied("C0"),
      "C-full": proxied("C-full"),
    },
  }),
);
const PATHS = ["direct", "C0", ...(l3 ? ["C-full"] : [])];

/** What the inspector prints for one method on one path, parsed, with the server's clock times normalised. */
async function inspect(server: string, method: string[]): Promise<unknown> {
  const { stdout } = await run(
    process.execPath,
    [INSPECTOR, "--cli", "--config", CONFIG, "--server", server, "--method", ...method],
    { cwd: scratch, timeout: 30_000, maxBuffer: 16 * 1024 * 1024 },
  );
  return JSON.parse(
    stdout.replace(/\d{1,2}:\d{2}:\d{2}\s?[AP]M/g, "<time>").replace(/\d{4}-\d{2}-\d{2}T[\d:.]+Z/g, "<date>"),
  );
}

const METHODS: [string, string[]][] = [
  ["tools/list", ["tools/list"]],
  ["tools/call", ["tools/call", "--tool-name", "get-sum", "--tool-arg", "a=17", "b=25"]],
  ["resources/list", ["resources/list"]],
  // A resource the server makes on the fly, with the time of day in it.
  ["resources/read", ["resources/read", "--uri", "demo://resource/dynamic/text/1"]],
  ["prompts/list", ["prompts/list"]],
  [
    "prompts/get",
    ["prompts/get", "--prompt-name", "args-prompt", "--prompt-args", "city=Paris", "state=Texas"],
  ],
];

describe(`MCP Inspector ${version} CLI: direct, ${PATHS.slice(1).join(" and ")} give the same answers`, () => {
  // Every path of every method at once, six at a time: each answer starts a fresh client, proxy and
  // server, and most of its time is spent waiting for them to exit.
  const answers = new Map<string, Promise<unknown>>();
  const queue = METHODS.flatMap(([name, method]) =>
    PATHS.map((path) => ({ key: `${name} ${path}`, path, method })),
  );
  let running = 0;
  const waiting: (() => void)[] = [];
  const limited = async <T>(task: () => Promise<T>): Promise<T> => {
    while (running >= 6) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await task();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
  for (const { key, path, method } of queue) {
    const answer = limited(() => inspect(path, method));
    answer.catch(() => {}); // Reported by the test that reads it.
    answers.set(key, answer);
  }

  it.each(METHODS)(
    "%s",
    async (name) => {
      const direct = await answers.get(`${name} direct`);
      expect(direct).toBeTruthy();
      for (const path of PATHS.slice(1)) expect(await answers.get(`${name} ${path}`), path).toEqual(direct);
    },
    60_000,
  );

  it("answered for real (the sum, the prompt's argument, the resource)", async () => {
    expect(JSON.stringify(await answers.get("tools/call direct"))).toContain("The sum of 17 and 25 is 42.");
    expect(JSON.stringify(await answers.get("prompts/get direct"))).toContain("Paris");
    expect(JSON.stringify(await answers.get("resources/read direct"))).toContain(
      "Resource 1: This is a plaintext resource created at <time>",
    );
  });
});
