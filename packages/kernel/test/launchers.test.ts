/** What a server command really runs: launchers and shims resolved before confinement. */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  LaunchError,
  packageName,
  parseNpx,
  parseUvx,
  resolveLaunch,
  splitCommand,
} from "../src/launchers.ts";

const root = mkdtempSync(join(tmpdir(), "mcpguard-launchers-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A version manager's layout as pyenv writes it: a shim in shims/, the manager in libexec/. */
function fakePyenv(target: string): string {
  const pyenv = join(root, "pyenv");
  mkdirSync(join(pyenv, "shims"), { recursive: true });
  mkdirSync(join(pyenv, "libexec"), { recursive: true });
  const shim = join(pyenv, "shims", "python3");
  writeFileSync(
    shim,
    [
      "#!/usr/bin/env bash",
      "set -e",
      '[ -n "$PYENV_DEBUG" ] && set -x',
      "",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's own expansion, as pyenv writes it.
      'program="${0##*/}"',
      "",
      `export PYENV_ROOT="${pyenv}"`,
      `exec "${pyenv}/libexec/pyenv" exec "$program" "$@"`,
      "",
    ].join("\n"),
  );
  chmodSync(shim, 0o755);
  const manager = join(pyenv, "libexec", "pyenv");
  writeFileSync(
    manager,
    `#!/bin/sh\n[ "$1" = which ] && [ "$2" = python3 ] && [ -n "$PYENV_ROOT" ] && echo ${target} && exit 0\necho "pyenv: $2: command not found" >&2\nexit 127\n`,
  );
  chmodSync(manager, 0o755);
  return join(pyenv, "shims");
}

describe("splitCommand", () => {
  it("finds the script after an interpreter's options, and the server's own arguments after it", () => {
    expect(splitCommand(["python3", "-u", "-B", "srv.py", "/data", "--x"])).toEqual({
      script: "srv.py",
      args: ["/data", "--x"],
    });
    expect(splitCommand(["node", "--import", "tsx", "srv.ts", "/data"])).toEqual({
      script: "srv.ts",
      args: ["/data"],
    });
    expect(splitCommand(["python3", "-m", "mcp_server_git", "--repository", "/r"])).toEqual({
      args: ["--repository", "/r"],
    });
    expect(splitCommand(["/opt/bin/server", "/data"])).toEqual({ args: ["/data"] });
  });
});

describe("npx", () => {
  it("reads the package, the bin and the server's arguments", () => {
    expect(parseNpx(["npx", "-y", "@modelcontextprotocol/server-filesystem", "/a", "-v"])).toEqual({
      packages: [],
      command: "@modelcontextprotocol/server-filesystem",
      args: ["/a", "-v"],
      flags: ["--yes"],
    });
    expect(parseNpx(["npm", "exec", "--package=pkg@1", "--offline", "--", "pkg-bin", "/a"])).toEqual({
      packages: ["pkg@1"],
      command: "pkg-bin",
      args: ["/a"],
      flags: ["--offline"],
    });
    expect(parseNpx(["node", "x.js"])).toBeUndefined();
    expect(() => parseNpx(["npx", "-c", "echo hi"])).toThrow(/npx -c runs a shell command line/);
    expect(() => parseNpx(["npx", "--weird", "pkg"])).toThrow(
      /cannot tell what npx would run with the option --weird/,
    );
    expect(packageName("@scope/name@^1.2")).toBe("@scope/name");
    expect(packageName("name@latest")).toBe("name");
    expect(packageName("github:user/repo")).toBeUndefined();
  });
});

describe("resolveLaunch", () => {
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

  it("runs a plain command as it is", async () => {
    expect(await resolveLaunch(["node", "srv.js", "/a"], { env, cwd: root })).toEqual({
      argv: ["node", "srv.js", "/a"],
      script: "srv.js",
      args: ["/a"],
    });
    await expect(resolveLaunch(["no-such-server-anywhere"], { env, cwd: root })).rejects.toThrow(
      /cannot find the server's program "no-such-server-anywhere"/,
    );
  });

  it("replaces a pyenv shim by the interpreter `pyenv which` names", async () => {
    const shims = fakePyenv("/usr/bin/python3");
    const launch = await resolveLaunch(["python3", "-u", "srv.py", "/a"], {
      env: { PATH: `${shims}:${env.PATH}` },
      cwd: root,
    });
    expect(launch).toEqual({
      argv: ["/usr/bin/python3", "-u", "srv.py", "/a"],
      script: "srv.py",
      args: ["/a"],
      via: "pyenv shim python3",
    });
  });

  it("says why when the shim's manager does not know the interpreter", async () => {
    const shims = fakePyenv("/usr/bin/python3");
    const shim = join(shims, "python3");
    writeFileSync(join(shims, "python9"), readFileSync(shim));
    chmodSync(join(shims, "python9"), 0o755);
    await expect(
      resolveLaunch(["python9", "srv.py"], { env: { PATH: `${shims}:${env.PATH}` }, cwd: root }),
    ).rejects.toThrow("python9 is a pyenv shim (");
  });

  const hostPyenv = process.env.PATH?.includes("pyenv/shims") === true;
  if (!hostPyenv) console.warn("host pyenv test skipped: no pyenv shims on PATH (the fake shim still runs)");
  it.skipIf(!hostPyenv)("resolves this host's own pyenv shim", async () => {
    const real = execFileSync("pyenv", ["which", "python3"], { encoding: "utf8" }).trim();
    const launch = await resolveLaunch(["python3", "srv.py"], { env: process.env, cwd: root });
    expect(launch.argv[0]).toBe(real);
    expect(launch.via).toBe("pyenv shim python3");
  });

  it("refuses a launcher it cannot resolve, saying what to do instead", async () => {
    const bin = join(root, "bin");
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, "bunx"), "#!/bin/sh\n", { mode: 0o755 });
    const error = await resolveLaunch(["bunx", "some-server"], { env: { PATH: bin }, cwd: root }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LaunchError);
    expect(String(error)).toMatch(/bunx is a launcher that mcpguard does not resolve before confinement yet/);
  });

  /**
   * uv cannot be installed here (no Python package index): its tool environment is laid out as uv
   * lays it out (a venv in its cache, `archive-v0/<id>/`, with the tool's console script), and a
   * stand-in `uvx` answers as uv does: it runs Python in that environment, and logs how it was asked.
   */
  it("resolves uvx to the tool's console script in uv's cache, asking uv offline first", async () => {
    const env = join(root, "uv-cache", "archive-v0", "q3xw9");
    execFileSync("/usr/bin/python3", ["-m", "venv", "--without-pip", env]);
    const script = join(env, "bin", "mcp-server-time");
    writeFileSync(script, `#!${join(env, "bin", "python")}\nimport sys\nprint("time")\n`, { mode: 0o755 });
    const bin = join(root, "uvbin");
    mkdirSync(bin, { recursive: true });
    const log = join(root, "uvx.log");
    writeFileSync(
      join(bin, "uvx"),
      `#!/bin/sh\necho "$*" >> ${log}\nwhile [ "$1" != python ]; do shift; done\nshift\nexec ${join(env, "bin", "python")} "$@"\n`,
      { mode: 0o755 },
    );
    const launch = await resolveLaunch(
      ["uvx", "--python", "3.11", "mcp-server-time@2025.1.1", "--local-timezone", "UTC"],
      {
        env: { PATH: `${bin}:/usr/bin:/bin` },
        cwd: root,
      },
    );
    expect(launch.via).toBe("uvx mcp-server-time@2025.1.1");
    // The environment's interpreter, as the script names it: started as the link, it is the venv's.
    expect(launch.argv).toEqual([join(env, "bin", "python"), script, "--local-timezone", "UTC"]);
    expect(readFileSync(log, "utf8").split("\n")[0]).toBe(
      "--python 3.11 --offline --from mcp-server-time@2025.1.1 python -c import sysconfig; print(sysconfig.get_path('scripts'))",
    );
    expect(parseUvx(["uv", "tool", "run", "--from", "git+https://x/y", "serve", "-v"])).toEqual({
      from: "git+https://x/y",
      command: "serve",
      args: ["-v"],
      flags: [],
    });
  });
});
