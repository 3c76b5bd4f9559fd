/**
 * Issue 31: Python servers as people install them, under the kernel layer. A stdlib-only MCP server
 * installed with pip into a virtual environment (Debian's python3 and pyenv's, whose libpython sits
 * in its own prefix) starts under C-full with a raw `policy derive` draft, from `/`, as its console
 * script and as `python -m`: the launcher grants pyvenv.cfg, the environment's site-packages and the
 * base interpreter's standard library, and nothing else of the environment. A start refused before
 * any server runs answers the client's initialize with the reason instead of a closed connection.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, lstatSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MCPGUARD, RawProxy } from "./helpers.ts";
import { buildWheel, PY_ECHO as FIXTURE, installByLayout } from "./venvFixture.ts";

const doctor = spawnSync(process.execPath, [MCPGUARD, "doctor", "--json"], { encoding: "utf8" });
const l3 = doctor.status === 0;
if (!l3)
  console.warn(
    `Python venv tests under L3 skipped: mcpguard doctor says L3 cannot run here:\n${doctor.stdout}`,
  );

/** The interpreters to make environments with: Debian's, and pyenv's where pyenv is installed. */
function interpreters(): { name: string; python: string }[] {
  const found = [{ name: "debian", python: "/usr/bin/python3" }];
  const pyenv = spawnSync("sh", ["-c", "command -v pyenv >/dev/null && pyenv which python3"], {
    encoding: "utf8",
  });
  const target = pyenv.stdout.trim();
  if (pyenv.status === 0 && target && target !== "/usr/bin/python3")
    found.push({ name: "pyenv", python: target });
  return found;
}

let scratch: string;
const venvs = new Map<string, string>();
beforeAll(() => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), "mcpguard-venv-")));
  for (const { name, python } of interpreters()) {
    const venv = join(scratch, `venv-${name}`);
    const made = spawnSync(python, ["-m", "venv", venv], { encoding: "utf8" });
    if (made.status !== 0) throw new Error(`${python} -m venv: ${made.stderr}`);
    // pip builds in the source folder: a copy of the fixture. The legacy setup.py install needs no
    // wheel package (no index is reachable here), but setuptools, which Debian's venv has and a
    // venv of pyenv's 3.11 lacks: there the files go where pip puts them (installByLayout).
    const source = join(scratch, `src-${name}`);
    cpSync(FIXTURE, source, { recursive: true });
    const pip = spawnSync(
      join(venv, "bin", "pip"),
      ["install", "-q", "--no-index", "--no-build-isolation", "--no-use-pep517", source],
      { encoding: "utf8", env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: "1" } },
    );
    if (pip.status !== 0) installByLayout(venv, source);
    venvs.set(name, venv);
  }
}, 180_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A raw draft of `mcpguard policy derive` for the command, derived from `/`. */
function derive(command: string[]): string {
  const r = spawnSync(process.execPath, [MCPGUARD, "policy", "derive", "--", ...command], {
    cwd: "/",
    encoding: "utf8",
    timeout: 60_000,
  });
  expect(r.status, r.stderr).toBe(0);
  const file = join(scratch, `policy-${venvs.size}-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, r.stdout);
  return file;
}

const text = (message: unknown) =>
  ((message as { result: { content: { text: string }[] } }).result.content[0] as { text: string }).text;

describe.skipIf(!l3)("a Python server in a virtual environment, under C-full", () => {
  for (const { name } of interpreters()) {
    for (const how of ["console script", "python -m"]) {
      it(`${name}'s python, ${how}, with a raw draft, started from /`, async () => {
        const venv = venvs.get(name) as string;
        const command =
          how === "console script"
            ? [join(venv, "bin", "mcp-echo-server")]
            : [join(venv, "bin", "python"), "-m", "mcp_echo_server"];
        const policy = derive(command);
        const proxy = new RawProxy(["--config", "C-full", "--policy", policy, "--", ...command], {
          cwd: "/",
        });
        await proxy.initialize();
        proxy.request(1, "tools/call", { name: "echo", arguments: { text: "hello from the venv" } });
        expect(text(await proxy.next())).toBe("hello from the venv");
        proxy.request(2, "tools/call", { name: "where", arguments: {} });
        const where = JSON.parse(text(await proxy.next())) as { prefix: string; module: string };
        expect(where.prefix).toBe(venv);
        expect(where.module.startsWith(join(venv, "lib"))).toBe(true);
        proxy.child.stdin.end();
        expect((await proxy.exited).code, proxy.stderr).toBe(0);
      });
    }
  }

  it("grants the environment's files to read, and nothing of its bin folder or HOME", () => {
    const venv = venvs.get("debian") as string;
    const command = [join(venv, "bin", "mcp-echo-server")];
    const policy = derive(command);
    const r = spawnSync(
      process.execPath,
      [MCPGUARD, "policy", "export", "--format", "landlock", "--policy", policy, "--", ...command],
      { cwd: "/", encoding: "utf8" },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(join(venv, "pyvenv.cfg"));
    expect(r.stdout).toContain(join(venv, "lib"));
    expect(r.stdout).not.toMatch(new RegExp(`read[^\\n]*${join(venv, "bin")}\\n`));
  });
});

const PIPX = ["/usr/bin/pipx", "/usr/local/bin/pipx"].find((p) => existsSync(p));
if (!PIPX)
  console.warn("the pipx test is skipped: Debian's pipx is not installed (npm run setup installs it)");

describe.skipIf(!l3 || !PIPX)("a server installed with pipx, under C-full", () => {
  let bin: string;
  beforeAll(() => {
    // pipx puts each app in a venv of its own under PIPX_HOME and links its console script into
    // PIPX_BIN_DIR (~/.local/bin), which is what a client config names. No index is reachable
    // here: pipx installs the fixture from a wheel, as it would from PyPI.
    const home = join(scratch, "pipx");
    bin = join(scratch, "pipx-bin");
    const r = spawnSync(PIPX as string, ["install", buildWheel(scratch)], {
      encoding: "utf8",
      timeout: 150_000,
      env: { ...process.env, PIPX_HOME: home, PIPX_BIN_DIR: bin, PIP_NO_INDEX: "1", USE_EMOJI: "0" },
    });
    if (r.status !== 0) throw new Error(`pipx install: ${r.stderr}${r.stdout}`);
  }, 180_000);

  it("starts its linked console script from /, with a raw draft, and serves", async () => {
    const script = join(bin, "mcp-echo-server");
    expect(lstatSync(script).isSymbolicLink()).toBe(true);
    const policy = derive([script]);
    const proxy = new RawProxy(["--config", "C-full", "--policy", policy, "--", script], { cwd: "/" });
    await proxy.initialize();
    proxy.request(1, "tools/call", { name: "echo", arguments: { text: "hello from pipx" } });
    expect(text(await proxy.next())).toBe("hello from pipx");
    proxy.request(2, "tools/call", { name: "where", arguments: {} });
    const where = JSON.parse(text(await proxy.next())) as { prefix: string };
    expect(where.prefix).toBe(join(scratch, "pipx", "venvs", "mcp-echo-server"));
    proxy.child.stdin.end();
    expect((await proxy.exited).code, proxy.stderr).toBe(0);
  });
});

describe("a start refused before any server runs", () => {
  it("answers the client's initialize with the reason, and exits 2", async () => {
    const policy = join(scratch, "broken.json");
    writeFileSync(policy, "{ not json");
    const proxy = new RawProxy(["--config", "C-app", "--policy", policy, "--", "/usr/bin/true"]);
    proxy.request(0, "initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "t", version: "1" },
    });
    const answer = (await proxy.next()) as { id: number; error: { code: number; message: string } };
    expect(answer.id).toBe(0);
    expect(answer.error.message).toMatch(/^mcpguard did not start the server: config C-app: .*broken.json/);
    expect((await proxy.exited).code).toBe(2);
    expect(proxy.stderr).toMatch(/^mcpguard run: config C-app: .*broken.json/);
  });
});
