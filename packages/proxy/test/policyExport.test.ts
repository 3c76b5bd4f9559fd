/** `mcpguard policy export`: the CLI, and the grant it exports being the kernel layer's own. */
import { spawnSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { compile, resolveLaunch } from "@mcpguard/kernel";
import { loadPolicy, policyNeeds, resolvePolicy } from "@mcpguard/policy";
import { afterAll, describe, expect, it } from "vitest";
import { exportPolicy, srtFromPath } from "../src/export.ts";
import { MCPGUARD } from "./helpers.ts";

const ROOT = join(import.meta.dirname, "..", "..", "..");
const POLICY = join(ROOT, "policies", "servers", "filesystem.json");
const SERVER = ["python3", join(ROOT, "servers", "python", "filesystem.py")];
/** The project's own srt: a pnpm shell shim in the runner's node_modules/.bin. */
const SRT_BIN = join(ROOT, "runner", "node_modules", ".bin");
/** The tests' npm cache, which `npm run setup` fills (scripts/dev.mjs), used offline. */
const NPM_CACHE = join(ROOT, ".cache", "npm");
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "mcpguard-export-")));
const work = join(scratch, "work");
const home = join(scratch, "home");
const tmp = join(scratch, "tmp");
for (const dir of [work, home, tmp]) mkdirSync(dir);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const env: Record<string, string> = {
  PATH: `${SRT_BIN}${delimiter}${process.env.PATH ?? "/usr/bin:/bin"}`,
  HOME: home,
  TMPDIR: tmp,
  LANG: "C.UTF-8",
  SECRET_KEY: "s3cr3t-value",
};
const npxEnv = { ...env, npm_config_cache: NPM_CACHE, npm_config_offline: "true" };
const NPX_SERVER = ["npx", "-y", "@modelcontextprotocol/server-filesystem", work];
const cached =
  spawnSync("npx", ["--yes", "--package=@modelcontextprotocol/server-filesystem", "-c", "true"], {
    cwd: "/",
    env: npxEnv,
    stdio: "ignore",
    timeout: 60_000,
  }).status === 0;
if (!cached)
  console.warn(
    `policy export of an npx command skipped: @modelcontextprotocol/server-filesystem is not in ${NPM_CACHE} (npm run setup fills it)`,
  );

function mcpguard(...args: string[]) {
  return mcpguardIn(env, ...args);
}

function mcpguardIn(environment: Record<string, string>, ...args: string[]) {
  return spawnSync(process.execPath, [MCPGUARD, "policy", "export", ...args], {
    cwd: work,
    env: environment,
    encoding: "utf8",
    timeout: 60_000,
  });
}

/** An executable file. */
function executable(path: string, text: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text, { mode: 0o755 });
  return path;
}

/** A sandbox-runtime package as npm installs it: its manifest, its cli.js and its seccomp helper. */
function fakeSrtPackage(dir: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "@anthropic-ai/sandbox-runtime" }));
  executable(join(dir, "dist", "cli.js"), "#!/usr/bin/env node\n");
  // A nameless manifest on the way up is not the package's.
  writeFileSync(join(dir, "dist", "package.json"), '{"type": "module"}\n');
  const arch = process.arch === "arm64" ? "arm64" : "x64";
  executable(join(dir, "vendor", "seccomp", arch, "apply-seccomp"), "");
  return dir;
}

/** The Landlock records of a compiled ruleset, `path -> rights`. */
function compiledRules(ruleset: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const record of ruleset.split("\0\0")) {
    const [kind, rights, path] = record.split("\0");
    if (kind === "fs" && rights && path) out.set(path, rights);
  }
  return out;
}

describe("policy export", () => {
  it("grants exactly what the kernel layer compiles for the same policy, server and world", async () => {
    const { exported } = await exportPolicy({
      format: "landlock",
      policy: POLICY,
      cwd: work,
      env,
      argv: SERVER,
    });
    const doc = JSON.parse(exported.text) as { rules: { path: string; allowedAccess: string[] }[] };
    const resolved = resolvePolicy(await loadPolicy(POLICY), undefined, { cwd: work, home, tmp });
    // The command as run starts it under the kernel layer (python3 may be a pyenv shim on PATH).
    const launched = await resolveLaunch(SERVER, { env, cwd: work });
    const { ruleset } = await compile(policyNeeds(resolved), launched.argv, env);
    expect(new Map(doc.rules.map((r) => [r.path, r.allowedAccess.join(",")]))).toEqual(
      compiledRules(ruleset),
    );
    expect(doc.rules.some((r) => r.path === work)).toBe(true);
    expect(doc.rules.some((r) => r.path === home || r.path === tmp)).toBe(false);
  });

  it("writes bwrap arguments with the world bound at its own paths and withheld variables unset", () => {
    const r = mcpguard("--format", "bwrap", "--policy", POLICY, "--", ...SERVER);
    expect(r.status, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as { args: string[]; notes: string[] };
    const joined = doc.args.join(" ");
    expect(joined).toContain(`--bind ${work} ${work}`);
    expect(joined).toContain(`--dir ${home}`);
    expect(joined).toContain("--unsetenv SECRET_KEY");
    expect(joined).not.toContain("--share-net");
    expect(joined).not.toContain("s3cr3t-value");
    expect(doc.notes.join("\n")).toMatch(/network: an empty network namespace/);
  });

  it("writes every format, each saying what it cannot express", () => {
    // A name in / or /usr that firejail would read as a glob cannot be hidden by its profile: the
    // export refuses (another test's files may leave such names behind).
    const globs = ["/", "/usr"].flatMap((dir) =>
      readdirSync(dir, { withFileTypes: true })
        .filter((e) => !e.isSymbolicLink() && /[*?$"\\]|\[.*\]/.test(e.name))
        .map((e) => join(dir, e.name)),
    );
    for (const format of ["srt", "bwrap", "firejail", "landlock", "cgroup", "sbpl"]) {
      const r = mcpguard("--format", format, "--policy", POLICY, "--pids-max", "77", "--", ...SERVER);
      if (format === "firejail" && globs.length > 0) {
        console.warn(`firejail export refused, as it must on this host: ${globs.join(", ")}`);
        expect(r.status, r.stderr).toBe(2);
        expect(r.stderr).toMatch(/cannot express .* in a firejail profile/);
        continue;
      }
      expect(r.status, `${format}: ${r.stderr}`).toBe(0);
      expect(r.stdout, format).toMatch(/per call: arguments and results are not inspected/);
      if (format === "cgroup") expect(JSON.parse(r.stdout).files["pids.max"]).toBe("77");
    }
  });

  it.skipIf(!cached)(
    "exports for what npx runs, as the kernel layer resolves it: C-full's ruleset for that command",
    async () => {
      const { grant, exported } = await exportPolicy({
        format: "landlock",
        policy: POLICY,
        cwd: work,
        env: npxEnv,
        argv: NPX_SERVER,
      });
      const resolved = await resolveLaunch(NPX_SERVER, { env: npxEnv, cwd: work });
      expect(resolved.via).toBe("npx @modelcontextprotocol/server-filesystem");
      expect(grant.command).toEqual(resolved.argv);
      expect(grant.launcher).toEqual({ command: NPX_SERVER, via: resolved.via });
      const doc = JSON.parse(exported.text) as {
        command: string[];
        notes: string[];
        rules: { path: string; allowedAccess: string[] }[];
      };
      expect(doc.command).toEqual(resolved.argv);
      const resolvedPolicy = resolvePolicy(await loadPolicy(POLICY), undefined, { cwd: work, home, tmp });
      const { ruleset } = await compile(policyNeeds(resolvedPolicy), resolved.argv, npxEnv);
      expect(new Map(doc.rules.map((r) => [r.path, r.allowedAccess.join(",")]))).toEqual(
        compiledRules(ruleset),
      );
      // The package's own files, not npm's: npx runs nothing under the profile.
      const dist = dirname(resolved.script as string);
      expect(doc.rules.some((r) => r.path === dist)).toBe(true);
      expect(doc.rules.some((r) => /npx-cli\.js$|\/npm\/bin$/.test(r.path))).toBe(false);
      expect(doc.notes.join("\n")).toMatch(
        /command: npx -y @modelcontextprotocol\/server-filesystem \S+ starts a launcher \(npx @modelcontextprotocol\/server-filesystem\), resolved as mcpguard run resolves it under the kernel layer; this profile is for what it runs, \/\S+\/node \S+\/dist\/index\.js \S+: run that under it/,
      );
    },
  );

  it("refuses a launcher it cannot resolve as run would, in one line, exit status 2", () => {
    const bin = join(scratch, "launchers");
    executable(join(bin, "pnpm"), "#!/bin/sh\nexit 1\n");
    executable(join(bin, "bunx"), "#!/bin/sh\nexit 1\n");
    const withLaunchers = { ...npxEnv, PATH: `${bin}${delimiter}${env.PATH}` };
    const cases = [
      [
        ["pnpm", "dlx", "@modelcontextprotocol/server-filesystem", work],
        /pnpm is a launcher that mcpguard does not resolve/,
      ],
      [
        ["bunx", "@modelcontextprotocol/server-filesystem", work],
        /bunx is a launcher that mcpguard does not resolve/,
      ],
      [
        ["npx", "-y", "@mcpguard-test/not-a-package-anywhere", work],
        /npx could not install @mcpguard-test\/not-a-package-anywhere/,
      ],
    ] as const;
    for (const [command, message] of cases) {
      const r = mcpguardIn(withLaunchers, "--format", "bwrap", "--", ...command);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stdout).toBe("");
    }
  });

  it("finds srt's files through the project's pnpm shim, npm's cmd-shim and npm's link", () => {
    const own = srtFromPath({ PATH: env.PATH });
    if (typeof own === "string") throw new Error(own);
    expect(own.bin).toBe(join(SRT_BIN, "srt"));
    expect(own.cli).toMatch(/\/@anthropic-ai\/sandbox-runtime\/dist\/cli\.js$/);
    expect(own.packageDir).toBe(dirname(dirname(own.cli)));
    // npm's cmd-shim: node on "$basedir/../<package>/dist/cli.js", with no target comment.
    const modules = join(scratch, "cmdshim", "node_modules");
    const pkg = fakeSrtPackage(join(modules, "@anthropic-ai", "sandbox-runtime"));
    executable(
      join(modules, ".bin", "srt"),
      '#!/bin/sh\nbasedir=$(dirname "$(echo "$0" | sed -e \'s,\\\\,/,g\')")\nexec node  "$basedir/../@anthropic-ai/sandbox-runtime/dist/cli.js" "$@"\n',
    );
    expect(srtFromPath({ PATH: `${join(modules, ".bin")}${delimiter}/usr/bin` })).toEqual({
      bin: join(modules, ".bin", "srt"),
      cli: join(pkg, "dist", "cli.js"),
      packageDir: pkg,
    });
    // npm install -g: a link to the package's cli.js.
    const global = fakeSrtPackage(
      join(scratch, "global", "lib", "node_modules", "@anthropic-ai", "sandbox-runtime"),
    );
    mkdirSync(join(scratch, "global", "bin"));
    symlinkSync(join(global, "dist", "cli.js"), join(scratch, "global", "bin", "srt"));
    expect(srtFromPath({ PATH: `${join(scratch, "global", "bin")}${delimiter}/usr/bin` })).toMatchObject({
      packageDir: global,
    });
  });

  it("grants srt's own files, found through its shim, and says where it found them", () => {
    const r = mcpguard("--format", "srt", "--policy", POLICY, "--", ...SERVER);
    expect(r.status, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    const own = srtFromPath({ PATH: env.PATH });
    if (typeof own === "string") throw new Error(own);
    const arch = process.arch === "arm64" ? "arm64" : "x64";
    expect(doc.filesystem.allowRead).toContain(join(realpathSync(own.packageDir), "vendor", "seccomp", arch));
    expect(doc.filesystem.allowRead).toContain(realpathSync("/bin/bash"));
    expect(doc.mcpguard.notes.join("\n")).toContain(`srt on PATH: ${own.bin} runs ${own.cli}`);
  });

  it("refuses an srt profile that could not run: srt not found, or a wrapper it cannot read", () => {
    const noSrt = { ...env, PATH: process.env.PATH ?? "/usr/bin:/bin" };
    const wrapper = join(scratch, "wrapper");
    executable(join(wrapper, "srt"), '#!/bin/sh\nexec /opt/somewhere/srt "$@"\n');
    const wrapped = { ...env, PATH: `${wrapper}${delimiter}${noSrt.PATH}` };
    const cases = [
      [noSrt, /cannot write an srt profile that would run: srt is not on PATH/],
      [
        wrapped,
        /cannot write an srt profile that would run: \S+\/wrapper\/srt is neither a link to @anthropic-ai\/sandbox-runtime's cli\.js nor a pnpm or npm shim that names it/,
      ],
    ] as const;
    for (const [environment, message] of cases) {
      const r = mcpguardIn(
        environment,
        "--format",
        "srt",
        "--policy",
        POLICY,
        "--out",
        join(scratch, "srt.json"),
        "--",
        ...SERVER,
      );
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }
    expect(() => realpathSync(join(scratch, "srt.json"))).toThrow();
  });

  it("refuses a bad command line in one line, exit status 2", () => {
    const cases = [
      [["--policy", POLICY], /--format is required/],
      [["--format", "docker", "--policy", POLICY], /unknown format "docker"/],
      [["--format", "bwrap", "--policy", join(scratch, "none.json")], /cannot read/],
      [
        ["--format", "bwrap", "--policy", POLICY, "--", "no-such-program-here"],
        /cannot find the server's program/,
      ],
    ] as const;
    for (const [args, message] of cases) {
      const r = mcpguard(...args);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }
  });
});
