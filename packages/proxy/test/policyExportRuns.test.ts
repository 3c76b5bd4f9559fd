/**
 * Issue 31, item 4: an exported profile runs what `mcpguard run` runs. Each profile (bwrap,
 * firejail, srt) is exported by the CLI for a server started as people start them, then run by
 * hand, outside the runner and outside mcpguard, by the usage line the profile carries (its
 * placeholders filled), with an SDK client over stdio: the tools are listed, a file in the granted
 * folder is read, and one beside it, which the server itself would read, is not.
 * - `npx -y @modelcontextprotocol/server-filesystem <folder>`, offline from the tests' npm cache:
 *   the profile is for `node <the package's dist/index.js> <folder>`, as the kernel layer runs it.
 * - the py-echo server in a virtual environment (as pythonVenv.test.ts makes it): its console
 *   script, `python -m` from the environment, and `uvx` (a stand-in that answers as uv does, as in
 *   the kernel's launchers test: uv cannot be installed here), whose profile is for the console
 *   script with the environment's python.
 * The server is given the parent of the granted folder, so a read beside it is refused by the
 * sandbox, not by the server. A backend that cannot run here is skipped, and the test's name says why.
 */
import { spawnSync } from "node:child_process";
import {
  accessSync,
  constants,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, isAbsolute, join } from "node:path";
import { shellQuote } from "@mcpguard/kernel/export";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, MCPGUARD, processesWith, toolText } from "./helpers.ts";
import { installByLayout } from "./venvFixture.ts";

const ROOT = join(import.meta.dirname, "..", "..", "..");
/** The project's own srt: a pnpm shell shim in the runner's node_modules/.bin. */
const SRT_BIN = join(ROOT, "runner", "node_modules", ".bin");
/** The tests' npm cache, which `npm run setup` fills (scripts/dev.mjs), used offline. */
const NPM_CACHE = join(ROOT, ".cache", "npm");
const env: Record<string, string> = {
  ...(process.env as Record<string, string>),
  PATH: `${SRT_BIN}${delimiter}${process.env.PATH ?? "/usr/bin:/bin"}`,
  npm_config_cache: NPM_CACHE,
  npm_config_offline: "true",
};

function which(name: string): string | undefined {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // Not here.
    }
  }
  return undefined;
}

/** null when `command` exits 0, else the first line it wrote. */
function trial(command: string[]): string | null {
  const r = spawnSync(command[0] as string, command.slice(1), { encoding: "utf8", env, timeout: 20_000 });
  if (r.status === 0) return null;
  return `${r.stderr}${r.stdout}`.trim().split("\n")[0] || r.error?.message || `exit status ${r.status}`;
}

/**
 * Names directly in / or /usr that a firejail profile cannot hold (firejail reads globs and macros
 * in paths and rejects some characters outright), so the exported profile cannot hide them: the
 * export refuses, or firejail refuses the profile.
 */
function unnameable(): string[] {
  const out: string[] = [];
  for (const dir of ["/", "/usr"])
    for (const entry of readdirSync(dir, { withFileTypes: true }))
      if (!entry.isSymbolicLink() && !/^[\w.@+-]+$/.test(entry.name)) out.push(join(dir, entry.name));
  return out;
}

/** Why each backend cannot run here, or null. */
function whyNot(backend: string): string | null {
  if (backend === "bwrap") {
    if (!which("bwrap")) return "bwrap is not installed (apt-get install bubblewrap; npm run setup does)";
    const failed = trial([
      "bwrap",
      "--unshare-all",
      "--unshare-user",
      "--disable-userns",
      "--ro-bind",
      "/",
      "/",
      "true",
    ]);
    return failed && `bwrap cannot start a sandbox here: ${failed}`;
  }
  if (backend === "firejail") {
    if (!which("firejail")) return "firejail is not installed (apt-get install firejail; npm run setup does)";
    const failed = trial(["firejail", "--noprofile", "--quiet", "/bin/true"]);
    if (failed) return `firejail cannot start a sandbox here: ${failed}`;
    const odd = unnameable();
    return odd.length
      ? `this host has names in / or /usr that a firejail profile cannot hold, so it cannot hide them: ${odd.map((p) => JSON.stringify(p)).join(", ")}`
      : null;
  }
  if (!which("srt")) return `srt is not in ${SRT_BIN} (pnpm install)`;
  for (const [tool, pkg] of [
    ["bwrap", "bubblewrap"],
    ["socat", "socat"],
    ["rg", "ripgrep"],
  ] as const)
    if (!which(tool)) return `srt needs ${tool}, which is not installed (apt-get install ${pkg})`;
  return null;
}

const BACKENDS = ["bwrap", "firejail", "srt"] as const;
const skipped = new Map(BACKENDS.map((b) => [b, whyNot(b)]));
const cached =
  spawnSync("npx", ["--yes", "--package=@modelcontextprotocol/server-filesystem", "-c", "true"], {
    cwd: "/",
    env,
    stdio: "ignore",
    timeout: 60_000,
  }).status === 0;
const NPX_SKIP = cached
  ? null
  : `@modelcontextprotocol/server-filesystem is not in ${NPM_CACHE} (npm run setup fills it)`;
for (const [backend, reason] of skipped)
  if (reason) console.warn(`export runs, ${backend} skipped: ${reason}`);
if (NPX_SKIP) console.warn(`export runs, npx server skipped: ${NPX_SKIP}`);

let scratch: string;
/** The folder the server is given; the policy grants only its `granted` folder. */
let served: string;
let granted: string;
let venv: string;
beforeAll(() => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), "mcpguard-export-runs-")));
  served = join(scratch, "served");
  granted = join(served, "granted");
  mkdirSync(granted, { recursive: true });
  writeFileSync(join(granted, "a.txt"), "inside the grant");
  writeFileSync(join(served, "secret.txt"), "beside the grant");
  // The environment as pythonVenv.test.ts lays it out, without pip (faster; the same files).
  venv = join(scratch, "venv");
  const made = spawnSync("/usr/bin/python3", ["-m", "venv", "--without-pip", venv], { encoding: "utf8" });
  if (made.status !== 0) throw new Error(`python3 -m venv: ${made.stderr}`);
  installByLayout(venv);
  // A stand-in uvx whose tool environment is that one: it runs the Python code uv is asked to run there.
  const uvbin = join(scratch, "uvbin");
  mkdirSync(uvbin);
  writeFileSync(
    join(uvbin, "uvx"),
    `#!/bin/sh\nwhile [ "$1" != python ]; do shift; done\nshift\nexec ${join(venv, "bin", "python")} "$@"\n`,
    { mode: 0o755 },
  );
  env.PATH = `${uvbin}${delimiter}${env.PATH}`;
});
afterAll(async () => {
  await eventually(() => processesWith(scratch).length === 0, 10_000);
  rmSync(scratch, { recursive: true, force: true });
});

/** A policy whose tools read the granted folder only. */
function policy(name: string, tools: string[]): string {
  const file = join(scratch, `${name}.json`);
  const read = { args: { path: "path.read" }, read: [`${granted}/**`] };
  writeFileSync(
    file,
    JSON.stringify({ version: 1, server: name, tools: Object.fromEntries(tools.map((t) => [t, read])) }),
  );
  return file;
}

type Backend = (typeof BACKENDS)[number];

/** Export the profile with the CLI; and the shell command line its usage line says, filled in. */
function exported(backend: Backend, policyFile: string, command: string[]) {
  const out = join(scratch, `${backend}-${Math.random().toString(36).slice(2)}.profile`);
  const r = spawnSync(
    process.execPath,
    [
      MCPGUARD,
      "policy",
      "export",
      "--format",
      backend,
      "--policy",
      policyFile,
      "--out",
      out,
      "--",
      ...command,
    ],
    { cwd: scratch, env, encoding: "utf8", timeout: 60_000 },
  );
  expect(r.status, r.stderr).toBe(0);
  const text = readFileSync(out, "utf8");
  let usage: string;
  if (backend === "bwrap") {
    const doc = JSON.parse(text) as { usage: string; args: string[] };
    usage = doc.usage.replace("<args...>", doc.args.map(shellQuote).join(" "));
  } else if (backend === "firejail") {
    usage = (/^# usage: (.*)$/m.exec(text)?.[1] ?? "").replace("<this file>", shellQuote(out));
  } else {
    const doc = JSON.parse(text) as { mcpguard: { usage: string } };
    usage = doc.mcpguard.usage.replace("<this file>", shellQuote(out));
  }
  return { text, usage };
}

/** Run the usage line, as a person would paste it into a shell, with an SDK client on its stdio. */
async function session(usage: string): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: "/bin/sh",
    args: ["-c", `exec ${usage}`],
    env,
    cwd: scratch,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: "mcpguard-export-test", version: "1.0.0" });
  try {
    await client.connect(transport);
  } catch (error) {
    throw new Error(`${(error as Error).message}; stderr: ${stderr}`);
  }
  return { client, stderr: () => stderr };
}

interface Server {
  name: string;
  skip: string | null;
  command: () => string[];
  /** The policy's tools (each reads the granted folder), the reading one first. */
  tools: string[];
  /** What the usage line must run: the resolved command, never the launcher. */
  runs: () => RegExp | string;
  /** A note the profile must carry. */
  note?: RegExp;
}

const venvPython = () => join(venv, "bin", "python");
const SERVERS: Server[] = [
  {
    name: "npx -y @modelcontextprotocol/server-filesystem <folder>",
    skip: NPX_SKIP,
    command: () => ["npx", "-y", "@modelcontextprotocol/server-filesystem", served],
    tools: ["read_text_file", "list_directory"],
    // node and the package's entry, from npx's cache: what the kernel layer runs.
    runs: () =>
      new RegExp(
        `/node \\S+/_npx/[0-9a-f]+/node_modules/@modelcontextprotocol/server-filesystem/dist/index\\.js ${served}'?$`,
      ),
    note: /command: npx -y @modelcontextprotocol\/server-filesystem \S+ starts a launcher \(npx @modelcontextprotocol\/server-filesystem\)/,
  },
  {
    name: "a console script in a virtual environment",
    skip: null,
    command: () => [join(venv, "bin", "mcp-echo-server")],
    tools: ["read"],
    runs: () => `${join(venv, "bin", "mcp-echo-server")}`,
  },
  {
    name: "python -m from a virtual environment",
    skip: null,
    command: () => [venvPython(), "-m", "mcp_echo_server"],
    tools: ["read"],
    runs: () => `${venvPython()} -m mcp_echo_server`,
  },
  {
    name: "uvx mcp-echo-server (a stand-in uvx)",
    skip: null,
    command: () => ["uvx", "mcp-echo-server"],
    tools: ["read"],
    runs: () => `${join(venv, "bin", "python3")} ${join(venv, "bin", "mcp-echo-server")}`,
    note: /command: uvx mcp-echo-server starts a launcher \(uvx mcp-echo-server\)/,
  },
];

describe("an exported profile runs what mcpguard run runs", () => {
  for (const backend of BACKENDS) {
    for (const server of SERVERS) {
      const reason = skipped.get(backend) ?? server.skip;
      it.skipIf(!!reason)(`${backend}: ${server.name}${reason ? ` (skipped: ${reason})` : ""}`, async () => {
        const read = server.tools[0] as string;
        const { text, usage } = exported(
          backend,
          policy(server.tools[0] as string, server.tools),
          server.command(),
        );
        const runs = server.runs();
        if (typeof runs === "string") expect(usage.replace(/'$/, "").endsWith(` ${runs}`), usage).toBe(true);
        else expect(usage).toMatch(runs);
        expect(usage).not.toMatch(/\b(npx|uvx)\b|npx-cli\.js/);
        if (server.note) expect(text).toMatch(server.note);
        const { client, stderr } = await session(usage);
        try {
          const tools = (await client.listTools()).tools.map((t) => t.name);
          expect(tools).toContain(read);
          const inside = await client.callTool({ name: read, arguments: { path: join(granted, "a.txt") } });
          expect(toolText(inside), stderr()).toBe("inside the grant");
          // The server may read its whole folder (or anything); the sandbox lets it read the grant only.
          const beside = await client.callTool({
            name: read,
            arguments: { path: join(served, "secret.txt") },
          });
          expect(beside.isError, toolText(beside)).toBe(true);
          expect(toolText(beside)).not.toContain("beside the grant");
          if (read === "read") {
            const where = JSON.parse(toolText(await client.callTool({ name: "where", arguments: {} })));
            expect(where.prefix, stderr()).toBe(venv);
          }
        } finally {
          await client.close();
        }
      });
    }
  }
});
