/**
 * git's settings against the installed git: the list of those it knows (src/shell/gitConfigKeys.ts)
 * is the one `git help --config` prints, and settings the table calls commands are ones the real
 * git runs. A setting git does not list is code the layers cannot see (`elsewhere`).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { gitKeyKind } from "../src/index.ts";
import { COMMAND_NAME } from "../src/shell/git.ts";
import { GIT_CONFIG_KEYS } from "../src/shell/gitConfigKeys.ts";

/** Settings git lists whose last name reads like a program's but whose value is none (reviewed). */
const REVIEWED_DATA = new Set([
  "advice.ignoredhook",
  "advice.waitingforeditor",
  "color.pager",
  "diff.<driver>.cachetextconv",
  "gitcvs.dbdriver",
  "rebase.reschedulefailedexec",
  // A browser or viewer by name; a program of one's own needs browser.<tool>.cmd or man.<tool>.cmd.
  "help.browser",
  "instaweb.browser",
  "man.viewer",
]);

const hasGit = spawnSync("git", ["--version"]).status === 0;
const scratch = mkdtempSync(join(tmpdir(), "mcpguard-gitkeys-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** What `git help --config` lists: setting names, one a line. */
function installedKeys(): string[] {
  return execFileSync("git", ["help", "--config"], { encoding: "utf8" })
    .split("\n")
    .filter((line) => /^[A-Za-z][A-Za-z0-9.<>*_-]*$/.test(line));
}

describe.skipIf(!hasGit)("git's settings, held to the installed git", () => {
  it("lists the settings the installed git knows", () => {
    const keys = installedKeys();
    const file = join(import.meta.dirname, "..", "src", "shell", "gitConfigKeys.ts");
    if (process.env.UPDATE_GIT_KEYS) {
      const version = execFileSync("git", ["--version"], { encoding: "utf8" }).trim();
      const text = readFileSync(file, "utf8").replace(/of git version [^ ]+ lists/, `of ${version} lists`);
      writeFileSync(
        file,
        text.replace(
          /export const GIT_CONFIG_KEYS = .*;/,
          `export const GIT_CONFIG_KEYS = ${JSON.stringify(keys.join("\n"))};`,
        ),
      );
    }
    expect(keys.length).toBeGreaterThan(500);
    expect(GIT_CONFIG_KEYS.split("\n")).toEqual(keys);
  });

  it("calls a setting a command where the real git runs its value", () => {
    const repo = join(scratch, "repo");
    execFileSync("git", ["init", "-q", repo]);
    execFileSync("git", [
      "-C",
      repo,
      "-c",
      "user.email=a@b",
      "-c",
      "user.name=a",
      "commit",
      "-q",
      "--allow-empty",
      "-m",
      "x",
    ]);
    const ran = (args: string[]) =>
      spawnSync("git", ["-C", repo, ...args], { encoding: "utf8", input: "" }).stdout;
    expect(ran(["-c", "trailer.t.command=echo RAN", "interpret-trailers", "--trailer", "t"])).toContain(
      "RAN",
    );
    expect(ran(["-c", "tar.x.command=echo RAN", "archive", "--format=x", "HEAD"])).toContain("RAN");
    expect(gitKeyKind("trailer.t.command")).toBe("command");
    expect(gitKeyKind("Trailer.Where.Cmd")).toBe("command");
    expect(gitKeyKind("tar.x.command")).toBe("command");
  });

  it("classes every setting git lists whose name reads like a program's", () => {
    const unclassed = installedKeys().filter((key) => {
      const k = key.toLowerCase();
      if (!COMMAND_NAME.test(k.slice(k.lastIndexOf(".") + 1)) || REVIEWED_DATA.has(k)) return false;
      return gitKeyKind(k.replace(/<[^>]+>/g, "x")) === undefined;
    });
    expect(unclassed).toEqual([]);
  });

  it("reads every other setting git lists as data, and one it does not by its name", () => {
    for (const key of [
      "gpg.ssh.defaultKeyCommand",
      "interactive.diffFilter",
      "imap.tunnel",
      "core.alternateRefsCommand",
    ])
      expect(gitKeyKind(key), key).toBe("command");
    for (const key of [
      "protocol.allow",
      "protocol.ext.allow",
      "remote.origin.vcs",
      "instaweb.httpd",
      "myext.hook",
      "lfs.x.helper",
    ])
      expect(gitKeyKind(key), key).toBe("elsewhere");
    // An extension's settings, a newer git's, and vendors' under a branch: data, by their names.
    for (const key of [
      "filter.lfs.required",
      "lfs.locksverify",
      "maintenance.repo",
      "init.defaultObjectFormat",
      "branch.main.vscode-merge-base",
    ])
      expect(gitKeyKind(key), key).toBeUndefined();
    for (const key of [
      "user.name",
      "pull.rebase",
      "branch.main.description",
      "http.https://x.example.sslVerify",
      "color.ui",
    ])
      expect(gitKeyKind(key), key).toBeUndefined();
  });
});
