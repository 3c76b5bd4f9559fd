/** The grant every exporter reads: the kernel layer's own plan, plus the names that lead to it. */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { planAccess } from "../../src/compile.ts";
import { buildGrant, symlinkChain } from "../../src/export/grant.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "mcpguard-grant-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const env = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: join(root, "home"),
  TMPDIR: join(root, "tmp"),
};
const limits = { pids: 1024, memoryBytes: 1 << 30, from: "defaults" };

describe("grant", () => {
  it("follows symbolic links the way the kernel does, relative ones from the link's directory", () => {
    mkdirSync(join(root, "real", "bin"), { recursive: true });
    writeFileSync(join(root, "real", "bin", "tool"), "");
    symlinkSync("real", join(root, "alias"));
    symlinkSync("tool", join(root, "real", "bin", "short"));
    symlinkSync(join(root, "alias", "bin", "short"), join(root, "abs"));
    expect(symlinkChain(join(root, "abs"))).toEqual([
      { path: join(root, "abs"), target: join(root, "alias", "bin", "short") },
      { path: join(root, "alias"), target: "real" },
      { path: join(root, "real", "bin", "short"), target: "tool" },
    ]);
    expect(symlinkChain(join(root, "real", "bin", "tool"))).toEqual([]);
    expect(symlinkChain(join(root, "missing", "x"))).toEqual([]);
  });

  it("holds the kernel layer's plan, the links to the programs, and the environment to withhold", () => {
    const script = join(root, "server.mjs");
    writeFileSync(script, "");
    const needs = { read: [root], write: [], exec: [], network: ["api.example.com:443"], shell: true };
    const grant = buildGrant({
      server: "s",
      needs,
      argv: [process.execPath, script],
      env,
      cwd: root,
      keptEnv: [],
      withheldEnv: ["SECRET_KEY"],
      limits,
    });
    const plan = planAccess(needs, [process.execPath, script], env);
    expect(grant.paths.map((p) => p.path).sort()).toEqual([...plan.fs.keys()].sort());
    const node = grant.paths.find((p) => p.path === realpathSync(process.execPath));
    expect(node).toMatchObject({ exec: true, write: false, directory: false });
    expect(grant.paths.find((p) => p.path === "/dev/null")).toMatchObject({ device: true, write: true });
    // /bin/sh is reached through links on most hosts; every link met on the way is in the grant.
    for (const link of symlinkChain("/bin/sh")) expect(grant.links).toContainEqual(link);
    expect(grant.network).toEqual([{ host: "api.example.com", port: 443 }]);
    expect(grant).toMatchObject({ home: env.HOME, tmp: env.TMPDIR, env: { withheld: ["SECRET_KEY"] } });
    expect(grant.hostEntries).toContain("/usr/lib");
  });

  it("runs the program by the path the server's PATH finds it, and keeps the launcher it was resolved from", () => {
    const bin = join(root, "bin");
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(root, "tool-real"), "#!/bin/sh\n", { mode: 0o755 });
    symlinkSync(join(root, "tool-real"), join(bin, "tool"));
    const launcher = { command: ["npx", "-y", "tool"], via: "npx tool" };
    const grant = buildGrant({
      server: "s",
      needs: { read: [], write: [], exec: [], network: [], shell: false },
      argv: ["tool", "--flag"],
      launcher,
      env: { ...env, PATH: `${bin}:/usr/bin:/bin` },
      cwd: root,
      keptEnv: [],
      withheldEnv: [],
      limits,
    });
    // The link, as found on PATH: a view holds it (grant.links), and firejail needs an absolute path.
    expect(grant.command).toEqual([join(bin, "tool"), "--flag"]);
    expect(grant.links).toContainEqual({ path: join(bin, "tool"), target: join(root, "tool-real") });
    expect(grant.launcher).toEqual(launcher);
  });
});
