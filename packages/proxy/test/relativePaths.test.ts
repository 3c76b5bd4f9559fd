/**
 * Issue 30: L1 judges a path where the server opens it. `policy derive` asks the server where it
 * resolves a relative path, in a scratch world under the kernel layer (probeBase.ts), instead of a
 * table of versions: server-filesystem 2025.7.29 resolves against its working directory, 2026.8.31
 * against its first allowed folder. A repository tool's files resolve against its repo_path, and a
 * git ref is a name, never a path or an option. Against the real server-filesystem releases and a
 * git server with mcp-server-git's schemas.
 */
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Policy } from "@mcpguard/policy/schema";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MCPGUARD, RawProxy } from "./helpers.ts";

const ROOT = join(import.meta.dirname, "..", "..", "..");
const GIT = join(import.meta.dirname, "fixtures", "git-server.mjs");
const filesystem = (version: string) =>
  join(ROOT, "servers", "real", "node_modules", `server-filesystem-${version}`, "dist", "index.js");

const doctor = spawnSync(process.execPath, [MCPGUARD, "doctor", "--json"], { encoding: "utf8" });
const l3 = doctor.status === 0;
if (!l3)
  console.warn(`relative-path probes skipped: mcpguard doctor says L3 cannot run here:\n${doctor.stdout}`);

let scratch: string;
beforeEach(() => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), "mcpguard-relative-")));
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * `policy derive`, its scratch worlds made in a TMPDIR of the test's own: what it leaves there is
 * its own, whatever other tests make in /tmp meanwhile.
 */
function derive(args: string[], cwd = scratch) {
  mkdirSync(join(scratch, "tmp"), { recursive: true });
  const r = spawnSync(process.execPath, [MCPGUARD, "policy", "derive", ...args], {
    cwd,
    encoding: "utf8",
    timeout: 90_000,
    env: { ...process.env, TMPDIR: join(scratch, "tmp") },
  });
  expect(r.status, r.stderr).toBe(0);
  return { draft: Policy.parse(JSON.parse(r.stdout)), text: r.stdout };
}

const text = (message: unknown) =>
  ((message as { result: { content: { text: string }[] } }).result.content[0] as { text: string }).text;

describe.skipIf(!l3)("where a server resolves a relative path, asked of the server", () => {
  it("server-filesystem 2025.7.29 against its working directory, 2026.8.31 against its first folder", () => {
    const allowed = join(scratch, "allowed");
    mkdirSync(allowed);
    const older = derive(["--", process.execPath, filesystem("2025.7.29"), allowed]);
    expect(older.draft.relativeTo).toBeUndefined();
    expect(older.draft.relativePaths).toBeUndefined();
    expect(older.draft.description).toMatch(/resolved a relative path against its working directory/);
    const newer = derive(["--", process.execPath, filesystem("2026.8.31"), allowed]);
    expect(newer.draft.relativeTo).toBe(allowed);
    expect(newer.draft.description).toMatch(new RegExp(`resolved a relative path against ${allowed}`));
    // Nothing of the scratch world is left, and nothing was written to the real folder.
    expect(readdirSync(join(scratch, "tmp")).filter((name) => name.startsWith("mcpguard-probe-"))).toEqual(
      [],
    );
  });

  it("C-app with 2025.7.29's draft, the client started in the folder above: L1 judges the file the server opens", async () => {
    const allowed = join(scratch, "allowed");
    const evil = join(scratch, "allowed_evil");
    mkdirSync(allowed);
    mkdirSync(evil);
    writeFileSync(join(evil, "secret.txt"), "secret");
    writeFileSync(join(allowed, "notes.txt"), "notes");
    const policy = join(scratch, "fs.json");
    writeFileSync(policy, derive(["--", process.execPath, filesystem("2025.7.29"), allowed]).text);
    const proxy = new RawProxy(
      ["--config", "C-app", "--policy", policy, "--", process.execPath, filesystem("2025.7.29"), allowed],
      { cwd: scratch },
    );
    await proxy.initialize();
    proxy.request(1, "tools/call", {
      name: "read_text_file",
      arguments: { path: "allowed_evil/secret.txt" },
    });
    expect(text(await proxy.next())).toMatch(
      /Blocked by mcpguard \(L1\): .*allowed_evil\/secret.txt is outside/,
    );
    proxy.request(2, "tools/call", { name: "read_text_file", arguments: { path: "allowed/notes.txt" } });
    expect(text(await proxy.next())).toBe("notes");
    proxy.child.stdin.end();
    expect((await proxy.exited).code).toBe(0);
  });

  it("a git server's files resolve against repo_path and its refs are names: derived, then judged under C-app", async () => {
    const repo = join(scratch, "repo");
    mkdirSync(repo);
    spawnSync(
      "sh",
      ["-c", "git init -q && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m init"],
      {
        cwd: repo,
      },
    );
    writeFileSync(join(repo, "a.txt"), "a\n");
    writeFileSync(join(scratch, "outside.txt"), "outside\n");
    const { draft, text: policyText } = derive(["--root", repo, "--", process.execPath, GIT]);
    expect(draft.tools.git_add).toMatchObject({
      args: { repo_path: "path.write", files: "path.write" },
      base: { files: "repo_path" },
    });
    expect(draft.tools.git_diff?.args).toMatchObject({ target: "ref" });
    expect(draft.tools.git_checkout?.args).toMatchObject({ branch_name: "ref" });
    const policy = join(scratch, "git.json");
    writeFileSync(policy, policyText);
    // Started in /, as a desktop client does: files are read against the repository all the same.
    const proxy = new RawProxy(["--config", "C-app", "--policy", policy, "--", process.execPath, GIT], {
      cwd: "/",
    });
    await proxy.initialize();
    proxy.request(1, "tools/call", { name: "git_add", arguments: { repo_path: repo, files: ["a.txt"] } });
    expect(text(await proxy.next())).toBe("Files staged successfully");
    proxy.request(2, "tools/call", {
      name: "git_add",
      arguments: { repo_path: repo, files: ["../outside.txt"] },
    });
    expect(text(await proxy.next())).toMatch(/Blocked by mcpguard \(L1\): .*outside.txt is outside/);
    const pwned = join(repo, "pwned.txt");
    proxy.request(3, "tools/call", {
      name: "git_diff",
      arguments: { repo_path: repo, target: `--output=${pwned}` },
    });
    expect(text(await proxy.next())).toMatch(/starts with "-": git would read it as an option/);
    expect(existsSync(pwned)).toBe(false);
    proxy.request(4, "tools/call", { name: "git_diff", arguments: { repo_path: repo, target: "HEAD" } });
    expect(text(await proxy.next())).toMatch(/^Diff with HEAD:/);
    proxy.child.stdin.end();
    expect((await proxy.exited).code).toBe(0);
    expect(readFileSync(join(repo, "a.txt"), "utf8")).toBe("a\n");
  });
});
