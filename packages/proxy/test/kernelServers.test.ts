/**
 * Real servers under the L3 configs, started the way mcpServers configs start them (issue 13):
 * server-filesystem moves files inside its folder, `npx -y <package>` and a pyenv shim start
 * confined (the launcher resolved before confinement, offline from the npm cache), a rename out
 * of the grant is refused in the kernel and audited with both paths, and a server whose start the
 * kernel refused says why.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  connect,
  eventually,
  FILESYSTEM,
  FIXTURE,
  MCPGUARD,
  makeWorkspace,
  processesWith,
  readNdjson,
  toolText,
} from "./helpers.ts";

const ROOT = join(import.meta.dirname, "..", "..", "..");
const doctor = spawnSync(process.execPath, [MCPGUARD, "doctor", "--json"], { encoding: "utf8" });
const ready = doctor.status === 0;
if (!ready)
  console.warn(`L3 server tests skipped: mcpguard doctor says L3 cannot run here:\n${doctor.stdout}`);

/** The tests' own npm cache, which `npm run setup` fills (scripts/dev.mjs). */
const NPM_CACHE = join(ROOT, ".cache", "npm");
/** npm told to stay offline: whatever npx needs must come from the cache. */
const OFFLINE = { npm_config_cache: NPM_CACHE, npm_config_offline: "true" };
const cached =
  ready &&
  spawnSync("npx", ["--yes", "--package=@modelcontextprotocol/server-filesystem", "-c", "true"], {
    cwd: tmpdir(),
    env: { ...process.env, ...OFFLINE },
    stdio: "ignore",
    timeout: 60_000,
  }).status === 0;
if (ready && !cached)
  console.warn(
    `npx test skipped: @modelcontextprotocol/server-filesystem is not in ${NPM_CACHE} (run npm run setup)`,
  );

let scratch: string;
let ws: string;
beforeEach(() => {
  ({ scratch } = makeWorkspace("mcpguard-l3-servers-"));
  ws = join(scratch, "project");
  mkdirSync(ws);
  writeFileSync(join(ws, "a.txt"), "alpha");
});
// A proxy that is still shutting down writes its last audit records (and reopens a log removed
// from under it): remove the scratch folder once no process started on it is left.
afterEach(async () => {
  await eventually(() => processesWith(scratch).length === 0, 10_000);
  rmSync(scratch, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
});

/** `mcpguard policy derive`, from /, as a desktop client's folder would be: the draft's file. */
function derive(command: string[], env: NodeJS.ProcessEnv = process.env): string {
  const out = join(scratch, "policy.json");
  const r = spawnSync(process.execPath, [MCPGUARD, "policy", "derive", "--out", out, "--", ...command], {
    cwd: "/",
    encoding: "utf8",
    timeout: 60_000,
    env,
  });
  expect(r.status, r.stderr).toBe(0);
  return out;
}

function run(config: string, policy: string, command: string[], env: NodeJS.ProcessEnv = process.env) {
  const log = join(scratch, `audit-${config}.ndjson`);
  const args = [
    MCPGUARD,
    "run",
    "--config",
    config,
    "--policy",
    policy,
    "--audit-log",
    log,
    "--",
    ...command,
  ];
  return { log, session: connect(args, env as Record<string, string>, "/") };
}

describe.skipIf(!ready)("real servers under L3", () => {
  it("server-filesystem moves a file into a subfolder and back under C-ebpf and C-full", async () => {
    const command = [process.execPath, FILESYSTEM, ws];
    const policy = derive(command);
    for (const config of ["C-ebpf", "C-full"]) {
      const { log, session } = run(config, policy, command);
      const s = await session;
      const call = (name: string, args: Record<string, unknown>) =>
        s.client.callTool({ name, arguments: args });
      expect((await call("create_directory", { path: join(ws, "sub") })).isError, config).toBeFalsy();
      const moved = await call("move_file", {
        source: join(ws, "a.txt"),
        destination: join(ws, "sub", "a.txt"),
      });
      expect(toolText(moved), config).toMatch(/^Successfully moved/);
      expect(readFileSync(join(ws, "sub", "a.txt"), "utf8")).toBe("alpha");
      const back = await call("move_file", {
        source: join(ws, "sub", "a.txt"),
        destination: join(ws, "a.txt"),
      });
      expect(toolText(back), config).toMatch(/^Successfully moved/);
      expect(toolText(await call("read_text_file", { path: join(ws, "a.txt") }))).toBe("alpha");
      await s.client.close();
      rmSync(join(ws, "sub"), { recursive: true });
      const refusals = readNdjson(log).filter(
        (e) => e.type === "kernel" && /^(rename|link)/.test(String(e.syscall)),
      );
      expect(refusals, config).toEqual([]);
    }
  });

  it("refuses a rename out of the grant in the kernel (C-ebpf) and audits both paths", async () => {
    const policy = join(scratch, "mover.json");
    writeFileSync(
      policy,
      JSON.stringify({
        version: 1,
        server: "mover",
        tools: { run: { args: { argv: "text" }, read: [`${ws}/**`], write: [`${ws}/**`], exec: ["mv"] } },
      }),
    );
    const out = join(scratch, "moved-out.txt");
    const { log, session } = run("C-ebpf", policy, [process.execPath, FIXTURE]);
    const s = await session;
    const result = JSON.parse(
      toolText(await s.client.callTool({ name: "run", arguments: { argv: ["mv", join(ws, "a.txt"), out] } })),
    );
    await s.client.close();
    expect(result.status).not.toBe(0);
    expect(existsSync(out)).toBe(false);
    expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("alpha");
    // The grant is a mount of its own in the server's mount namespace (read-only elsewhere): the
    // rename out of it fails with EXDEV, and mv's copy instead with EROFS, both in the log.
    const events = readNdjson(log);
    expect(events).toContainEqual(
      expect.objectContaining({
        type: "kernel",
        event: "denied",
        decision: "deny",
        backend: "landlock",
        syscall: expect.stringMatching(/^rename/),
        errno: 18,
        path: join(ws, "a.txt"),
        to: out,
      }),
    );
    expect(events).toContainEqual(
      expect.objectContaining({ event: "denied", backend: "read-only-mounts", errno: 30, path: out }),
    );
  });

  it.skipIf(!cached).each([
    ["npx", "-y"],
    ["npm", "exec", "-y"],
  ])(
    "%s %s @modelcontextprotocol/server-filesystem <dir> starts under C-full, offline from the npm cache",
    async (...launcher) => {
      const env = { ...process.env, ...OFFLINE };
      const command = [...launcher, "@modelcontextprotocol/server-filesystem", ws];
      const policy = derive(command, env);
      const { log, session } = run("C-full", policy, command, env);
      const s = await session;
      expect(s.client.getServerVersion()?.name).toBe("secure-filesystem-server");
      const listing = toolText(await s.client.callTool({ name: "list_directory", arguments: { path: ws } }));
      expect(listing).toContain("[FILE] a.txt");
      expect(
        toolText(await s.client.callTool({ name: "read_text_file", arguments: { path: join(ws, "a.txt") } })),
      ).toBe("alpha");
      // Confined as usual: the npm cache it was installed from is not the server's to read.
      const npmrc = await s.client.callTool({
        name: "read_text_file",
        arguments: { path: join(NPM_CACHE, "_logs") },
      });
      expect(npmrc.isError).toBe(true);
      await s.client.close();
      const start = readNdjson(log).find((e) => e.event === "start");
      expect(start.launcher).toBe("npx @modelcontextprotocol/server-filesystem");
      expect(start.launched).toEqual([
        expect.stringMatching(/\/node$/),
        expect.stringMatching(
          /\/_npx\/[0-9a-f]+\/node_modules\/@modelcontextprotocol\/server-filesystem\/dist\/index\.js$/,
        ),
        ws,
      ]);
    },
  );

  it("env as a command's prefix runs under C-full (L1 judges what it runs); C-ebpf keeps env out", async () => {
    const python = realpathSync(
      execFileSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" }).trim(),
    );
    writeFileSync(join(ws, "words.txt"), "b\nB\na\n");
    const policy = join(ROOT, "policies", "servers", "shell.json");
    const command = [python, "-u", "-B", join(ROOT, "servers", "python", "shell.py")];
    const results: Record<string, { returncode: number; stdout: string }> = {};
    for (const config of ["C-ebpf", "C-full"]) {
      const args = [MCPGUARD, "run", "--config", config, "--policy", policy, "--", ...command];
      const s = await connect(args, process.env as Record<string, string>, ws);
      const result = await s.client.callTool({
        name: "run_command",
        arguments: { command: "env LC_ALL=C sort words.txt" },
      });
      results[config] = JSON.parse(toolText(result));
      // Bare env prints the environment: still not a program the shell policy lists.
      expect(
        toolText(await s.client.callTool({ name: "run_command", arguments: { command: "env" } })),
        config,
      ).toMatch(
        config === "C-full" ? /^Blocked by mcpguard \(L1\): env is not a program/ : /"returncode": 126/,
      );
      await s.client.close();
    }
    expect(results["C-full"]).toMatchObject({ returncode: 0, stdout: "B\na\nb\n" });
    // Without L1 the kernel cannot tell `env cmd` from a bare env: it may not run env at all.
    expect(results["C-ebpf"]).toMatchObject({ returncode: 126 });
  });

  describe("a pyenv shim", () => {
    const victim = ["-u", "-B", join(ROOT, "servers", "python", "filesystem.py")];
    const policyFile = join(ROOT, "policies", "servers", "filesystem.json");

    /** A pyenv layout whose python3 shim stands for `target`, as pyenv writes shims. */
    function fakeShims(target: string): string {
      const pyenv = join(scratch, "pyenv");
      mkdirSync(join(pyenv, "shims"), { recursive: true });
      mkdirSync(join(pyenv, "libexec"), { recursive: true });
      const shim = join(pyenv, "shims", "python3");
      writeFileSync(
        shim,
        `#!/usr/bin/env bash\nset -e\nprogram="\${0##*/}"\nexport PYENV_ROOT="${pyenv}"\nexec "${pyenv}/libexec/pyenv" exec "$program" "$@"\n`,
      );
      const manager = join(pyenv, "libexec", "pyenv");
      writeFileSync(
        manager,
        `#!/bin/sh\ncase "$1" in\nwhich) echo ${target} ;;\nexec) shift; shift; exec ${target} "$@" ;;\nesac\n`,
      );
      chmodSync(shim, 0o755);
      chmodSync(manager, 0o755);
      return join(pyenv, "shims");
    }

    async function startsUnderCFull(path: string) {
      // The victim's policy grants its working directory: the workspace, not /.
      const work = join(scratch, "work");
      const log = join(scratch, "audit-pyenv.ndjson");
      const s = await connect(
        [
          MCPGUARD,
          "run",
          "--config",
          "C-full",
          "--policy",
          policyFile,
          "--audit-log",
          log,
          "--",
          "python3",
          ...victim,
        ],
        { ...(process.env as Record<string, string>), PATH: path },
        work,
      );
      expect(
        toolText(await s.client.callTool({ name: "read_file", arguments: { path: "readme.txt" } })),
      ).toContain("inside");
      await s.client.close();
      return readNdjson(log)
        .filter((e) => e.event === "start")
        .at(-1);
    }

    it("python3 that is a shim starts under C-full, as the interpreter it stands for", async () => {
      const python = realpathSync(
        execFileSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" }).trim(),
      );
      const start = await startsUnderCFull(`${fakeShims(python)}:${process.env.PATH}`);
      expect(start).toMatchObject({ launcher: "pyenv shim python3", launched: [python, ...victim] });
    });

    const hostShim = process.env.PATH?.includes("pyenv/shims") === true;
    if (!hostShim)
      console.warn("host pyenv shim test skipped: no pyenv shims on PATH (the fake shim test runs)");
    it.skipIf(!hostShim)("this host's own pyenv python3 starts under C-full, as pyenv's python", async () => {
      const pyenvs = execFileSync("pyenv", ["which", "python3"], {
        encoding: "utf8",
        cwd: join(scratch, "work"),
      });
      const start = await startsUnderCFull(process.env.PATH as string);
      expect(start).toMatchObject({ launcher: "pyenv shim python3", launched: [pyenvs.trim(), ...victim] });
    });
  });

  it("says why when the kernel refused the server's start: to the client and on stderr", async () => {
    const policy = join(scratch, "empty.json");
    writeFileSync(policy, JSON.stringify({ version: 1, server: "starter", tools: {} }));
    const script = "require('fs').readFileSync('/etc/resolv.conf'); process.exit(3)";
    const { session, log } = run("C-ebpf", policy, [process.execPath, "-e", script]);
    const error = await session.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(String(error)).toMatch(
      /exited with status 1 before answering "initialize": under L3 the server's start was denied: open \/etc\/resolv\.conf/,
    );
    // The proxy has the last word in its log once the server is gone.
    expect(
      await eventually(() => existsSync(log) && readNdjson(log).some((e) => e.event === "exit"), 5000),
    ).toBe(true);
  });
});
