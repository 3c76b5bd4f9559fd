/** What a server command really runs: launchers and shims resolved before confinement. */
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  LaunchError,
  packageName,
  parseNpx,
  parseUvx,
  privateFolder,
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
      "--python 3.11 --offline --no-build --from mcp-server-time@2025.1.1 python -I -S -c import os, sys; print(os.path.dirname(sys.executable))",
    );
    expect(parseUvx(["uv", "tool", "run", "--from", "git+https://x/y", "serve", "-v"])).toEqual({
      from: "git+https://x/y",
      command: "serve",
      args: ["-v"],
      flags: [],
    });
  });
});

/**
 * What a launcher runs here runs outside the sandbox: nothing of it may be the server's. Each case
 * runs the real npx (npm's own reading of its settings and PATH) on a package installed in a
 * project folder, offline, once as the server may write that folder and once, the control, without
 * the write grants: the control shows what the server's files would have run.
 */
describe("resolveLaunch, where the server may write", () => {
  const npx = execFileSync("sh", ["-c", "command -v npx || true"], { encoding: "utf8" }).trim();
  const base = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: join(root, "home") };

  /** A project the server may write (its write grant), holding a package npx runs from it. */
  function project(name: string): {
    dir: string;
    marker: string;
    writable: (p: string) => string | undefined;
  } {
    const dir = join(root, name);
    const pkg = join(dir, "node_modules", "tiny-server");
    mkdirSync(pkg, { recursive: true });
    mkdirSync(join(dir, "node_modules", ".bin"), { recursive: true });
    mkdirSync(base.HOME, { recursive: true });
    writeFileSync(join(dir, "package.json"), '{"name":"proj","version":"1.0.0"}\n');
    writeFileSync(
      join(pkg, "package.json"),
      '{"name":"tiny-server","version":"1.0.0","bin":{"tiny-server":"index.js"}}\n',
    );
    writeFileSync(join(pkg, "index.js"), "#!/usr/bin/env node\nconsole.log('tiny');\n", { mode: 0o755 });
    symlinkSync("../tiny-server/index.js", join(dir, "node_modules", ".bin", "tiny-server"));
    const marker = join(root, `${name}.ran`);
    const writable = (p: string) =>
      p === dir || p.startsWith(`${dir}/`) ? "the workspace's write grant" : undefined;
    return { dir, marker, writable };
  }
  /** A program the server wrote: it leaves a mark where it ran, then does what it stands in for. */
  function planted(file: string, marker: string, then: string): void {
    writeFileSync(file, `#!/bin/sh\necho ran > ${marker}\nexec ${then} "$@"\n`, { mode: 0o755 });
  }

  it.skipIf(!npx)(
    "leaves out a project's .npmrc the server may write (its script-shell, its folders: none is read)",
    async () => {
      const { dir, marker, writable } = project("npmrc");
      planted(join(dir, "shell.sh"), marker, "/bin/sh");
      // Settings npm acts on here: a shell for the command, and a folder it writes its log to.
      const logs = join(root, "npmrc-logs");
      writeFileSync(join(dir, ".npmrc"), `script-shell=${join(dir, "shell.sh")}\nlogs-dir=${logs}\n`);
      const launch = await resolveLaunch(["npx", "tiny-server", "/a"], { env: base, cwd: dir, writable });
      expect(existsSync(marker)).toBe(false);
      expect(existsSync(logs)).toBe(false);
      expect(launch.argv.slice(-2)).toEqual([
        realpathSync(join(dir, "node_modules", "tiny-server", "index.js")),
        "/a",
      ]);
      expect(launch.notes).toEqual([
        `npx ran without the project's npm settings: the server may write ${join(dir, ".npmrc")} (the workspace's write grant)`,
      ]);
      // The control: without the grants npm reads the project's settings (its shell is never taken).
      const control = await resolveLaunch(["npx", "tiny-server", "/a"], { env: base, cwd: dir });
      expect(existsSync(logs)).toBe(true);
      expect(existsSync(marker)).toBe(false);
      expect(control.argv).toEqual(launch.argv);
    },
  );

  it.skipIf(!npx)(
    "runs npx's command with /bin/sh, not a package's bin named sh, granted or not",
    async () => {
      const { dir, marker, writable } = project("shbin");
      // The server's own package (or one it depends on) links a bin named `sh`, which npm's PATH
      // for the command puts first.
      planted(join(dir, "node_modules", "tiny-server", "sh.js"), marker, "/bin/sh");
      symlinkSync("../tiny-server/sh.js", join(dir, "node_modules", ".bin", "sh"));
      await resolveLaunch(["npx", "tiny-server"], { env: base, cwd: dir, writable });
      await resolveLaunch(["npx", "tiny-server"], { env: base, cwd: dir });
      expect(existsSync(marker)).toBe(false);
    },
  );

  it.skipIf(!npx)(
    "installs a package npm has not cached where the project's settings are left out",
    async () => {
      const { dir, marker, writable } = project("uncached");
      planted(join(dir, "shell.sh"), marker, "/bin/sh");
      writeFileSync(join(dir, ".npmrc"), `script-shell=${join(dir, "shell.sh")}\n`);
      // A package from a tarball: npx installs it into its cache, as one from the registry.
      const pkg = join(root, "tarball", "package");
      mkdirSync(pkg, { recursive: true });
      writeFileSync(
        join(pkg, "package.json"),
        '{"name":"other-server","version":"1.0.0","bin":{"other-server":"main.js"}}\n',
      );
      writeFileSync(join(pkg, "main.js"), "#!/usr/bin/env node\n", { mode: 0o755 });
      const tgz = join(root, "other-server-1.0.0.tgz");
      execFileSync("tar", ["-czf", tgz, "-C", dirname(pkg), "package"]);
      const env = { ...base, npm_config_cache: join(root, "npm-cache") };
      const launch = await resolveLaunch(["npx", "-y", "-p", tgz, "other-server"], {
        env,
        cwd: dir,
        writable,
      });
      expect(launch.argv.at(-1)).toMatch(/\/_npx\/[0-9a-f]+\/node_modules\/other-server\/main\.js$/);
      expect(existsSync(marker)).toBe(false);
    },
  );

  it.skipIf(!npx)(
    "keeps npm's global settings, and a workspace root's packages, where the project's are left out",
    async () => {
      const mono = join(root, "mono");
      const member = join(mono, "packages", "a");
      mkdirSync(member, { recursive: true });
      writeFileSync(
        join(mono, "package.json"),
        '{"name":"mono","private":true,"workspaces":["packages/*"]}\n',
      );
      writeFileSync(join(member, "package.json"), '{"name":"a","version":"1.0.0"}\n');
      const pkg = join(mono, "node_modules", "hoisted-server");
      mkdirSync(pkg, { recursive: true });
      mkdirSync(join(mono, "node_modules", ".bin"), { recursive: true });
      writeFileSync(
        join(pkg, "package.json"),
        '{"name":"hoisted-server","version":"1.0.0","bin":"main.js"}\n',
      );
      writeFileSync(join(pkg, "main.js"), "#!/usr/bin/env node\n", { mode: 0o755 });
      symlinkSync("../hoisted-server/main.js", join(mono, "node_modules", ".bin", "hoisted-server"));
      writeFileSync(join(member, ".npmrc"), "registry=http://127.0.0.1:9/\n");
      // npm's global settings file (PREFIX/etc/npmrc), naming a folder for its logs: read or not.
      const prefix = join(root, "global-prefix");
      const logs = join(root, "global-logs");
      mkdirSync(join(prefix, "etc"), { recursive: true });
      writeFileSync(join(prefix, "etc", "npmrc"), `logs-dir=${logs}\n`);
      const writable = (p: string) =>
        p === mono || p.startsWith(`${mono}/`) ? "the workspace's write grant" : undefined;
      const launch = await resolveLaunch(["npx", "hoisted-server"], {
        env: { ...base, PREFIX: prefix },
        cwd: member,
        writable,
      });
      expect(launch.argv.at(-1)).toBe(realpathSync(join(pkg, "main.js")));
      expect(existsSync(logs)).toBe(true);
    },
  );

  it("makes npx's own folder where the server's grants do not reach, never in a granted temporary folder", () => {
    const granted = (p: string) =>
      p.startsWith("/tmp/") || p.startsWith(`${tmpdir()}/`) ? "the tmp grant" : undefined;
    const own = privateFolder({ env: {}, cwd: root, writable: granted });
    try {
      expect(granted(join(own, "x"))).toBeUndefined();
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });

  it.skipIf(!npx)("runs npx without the PATH folders the server may write (its `node` first)", async () => {
    const { dir, marker, writable } = project("pathnode");
    const bin = join(dir, "bin");
    mkdirSync(bin);
    planted(join(bin, "node"), marker, process.execPath);
    const env = { ...base, PATH: `${bin}:${base.PATH}` };
    await resolveLaunch(["npx", "tiny-server"], { env, cwd: dir, writable });
    expect(existsSync(marker)).toBe(false);
    await resolveLaunch(["npx", "tiny-server"], { env, cwd: dir });
    expect(existsSync(marker)).toBe(true);
  });

  it("runs a launcher the server may have written confined, as the server's program, not here", async () => {
    const { dir, marker, writable } = project("ownnpx");
    const bin = join(dir, "bin");
    mkdirSync(bin);
    planted(join(bin, "npx"), marker, "/bin/false");
    const env = { ...base, PATH: `${bin}:${base.PATH}` };
    expect(await resolveLaunch(["npx", "tiny-server"], { env, cwd: dir, writable })).toEqual({
      argv: ["npx", "tiny-server"],
      args: ["tiny-server"],
    });
    expect(existsSync(marker)).toBe(false);
  });

  it("refuses a shim whose manager the server may write, and npm user settings it may write", async () => {
    const shims = fakePyenv("/usr/bin/python3");
    const pyenv = dirname(shims);
    const grant = (p: string) =>
      p.startsWith(`${pyenv}/`) && !p.startsWith(`${shims}/`) ? "a grant" : undefined;
    await expect(
      resolveLaunch(["python3", "srv.py"], {
        env: { PATH: `${shims}:${base.PATH}` },
        cwd: root,
        writable: grant,
      }),
    ).rejects.toThrow(
      /python3 is a pyenv shim .* whose pyenv, .*libexec\/pyenv, lies where the server may write \(a grant\)/,
    );
    // A shim's choice the server may write (a pip-installable interpreter's folder) is not run here.
    const target = join(pyenv, "versions", "9.9", "bin", "npx");
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, "#!/bin/sh\n", { mode: 0o755 });
    const shimmed = join(root, "pyenv-npx");
    mkdirSync(shimmed, { recursive: true });
    writeFileSync(join(shimmed, "npx"), readFileSync(join(shims, "python3")), { mode: 0o755 });
    const manager = join(pyenv, "libexec", "pyenv");
    const answers = readFileSync(manager, "utf8");
    writeFileSync(
      manager,
      `#!/bin/sh\n[ "$1" = which ] && [ "$2" = npx ] && echo ${target} && exit 0\nexit 127\n`,
    );
    const versions = (p: string) =>
      p.startsWith(`${pyenv}/versions/`) ? "the interpreter's grant" : undefined;
    await expect(
      resolveLaunch(["npx", "tiny-server"], {
        env: { PATH: `${shimmed}:${base.PATH}` },
        cwd: root,
        writable: versions,
      }),
    ).rejects.toThrow(`npx is ${target} here, where the server may write (the interpreter's grant)`);
    writeFileSync(manager, answers);
    const home = (p: string) => (p === join(base.HOME, ".npmrc") ? "the home grant" : undefined);
    await expect(
      resolveLaunch(["npx", "tiny-server"], { env: base, cwd: root, writable: home }),
    ).rejects.toThrow(
      `npx would read its user settings from ${join(base.HOME, ".npmrc")}, where the server may write (the home grant)`,
    );
  });

  it("runs uvx with --no-config where the server may write a pyproject.toml above its folder", async () => {
    const { dir } = project("uvproj");
    // A grant of that one file, in a folder above the one uvx runs in.
    const writable = (p: string) =>
      p === join(dir, "pyproject.toml") ? "the workspace's write grant" : undefined;
    const sub = join(dir, "sub");
    mkdirSync(sub);
    const venv = join(root, "uv-cache2", "archive-v0", "x1");
    execFileSync("/usr/bin/python3", ["-m", "venv", "--without-pip", venv]);
    writeFileSync(join(venv, "bin", "srv"), `#!${join(venv, "bin", "python")}\n`, { mode: 0o755 });
    const bin = join(root, "uvbin2");
    mkdirSync(bin, { recursive: true });
    const log = join(root, "uvx2.log");
    writeFileSync(
      join(bin, "uvx"),
      `#!/bin/sh\necho "$*" >> ${log}\nwhile [ "$1" != python ]; do shift; done\nshift\nexec ${join(venv, "bin", "python")} "$@"\n`,
      { mode: 0o755 },
    );
    const launch = await resolveLaunch(["uvx", "srv"], {
      env: { PATH: `${bin}:/usr/bin:/bin` },
      cwd: sub,
      writable,
    });
    expect(readFileSync(log, "utf8").split("\n")[0]).toMatch(
      /^--no-config --offline --no-build --from srv python -I -S -c /,
    );
    expect(launch.notes).toEqual([
      `uvx ran without uv's settings files: the server may write ${join(dir, "pyproject.toml")} (the workspace's write grant)`,
    ]);
    // uv's cache, where the tool's environment and the Python uv runs here live: refused.
    const cache = join(root, "uv-cache-granted");
    const cached = (p: string) => (p.startsWith(`${cache}/`) ? "a grant of uv's cache" : undefined);
    await expect(
      resolveLaunch(["uvx", "srv"], {
        env: { PATH: `${bin}:/usr/bin:/bin`, UV_CACHE_DIR: cache },
        cwd: sub,
        writable: cached,
      }),
    ).rejects.toThrow(`uvx would use ${cache}, where the server may write (a grant of uv's cache)`);
  });
});
