import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentBound, argumentKind, loadManifest } from "../src/index.ts";
import { Manifest } from "../src/manifest.ts";

let work: string;
beforeAll(() => {
  work = realpathSync(mkdtempSync(join(tmpdir(), "mcpguard-ab-")));
  mkdirSync(join(work, "data"));
  symlinkSync("/etc", join(work, "data", "etc"));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

function ab(manifest: unknown): AgentBound {
  return new AgentBound(Manifest.parse(manifest), { cwd: work, home: "/h", tmp: "/t" });
}

describe("AgentBound manifests", () => {
  it("refuse scopes for permissions they do not grant, and unknown permissions", () => {
    expect(
      Manifest.safeParse({
        version: 1,
        server: "s",
        permissions: [],
        scopes: { "mcp.ac.system.exec": ["ls"] },
      }).error?.issues[0]?.message,
    ).toMatch(/does not grant/);
    expect(Manifest.safeParse({ version: 1, server: "s", permissions: ["mcp.ac.everything"] }).success).toBe(
      false,
    );
  });

  it("load the 14 shipped manifests", async () => {
    const names = [
      "filesystem",
      "notes",
      "shell",
      "sqlite",
      "malicious",
      "trojan_notes",
      "trojan_sqlite",
      "weather",
      "env",
      "git",
      "trojan_git",
      "js_filesystem",
      "js_malicious",
      "js_sqlite",
    ];
    for (const n of names) {
      const manifest = await loadManifest(
        join(import.meta.dirname, "..", "..", "..", "policies", "agentbound", `${n}.json`),
      );
      expect(manifest.server).toBe(n);
    }
  });
});

describe("AgentBound checks", () => {
  const files = () =>
    ab({
      version: 1,
      server: "fs",
      permissions: ["mcp.ac.filesystem.read", "mcp.ac.filesystem.write"],
      scopes: { "mcp.ac.filesystem.read": ["{{cwd}}/**"], "mcp.ac.filesystem.write": ["{{cwd}}/out/**"] },
    });

  it("recognises arguments by name", () => {
    expect(argumentKind("path")).toBe("path");
    expect(argumentKind("url")).toBe("url");
    expect(argumentKind("command")).toBe("command");
    expect(argumentKind("text")).toBeUndefined();
  });

  it("checks paths lexically against the permission of the tool's kind", () => {
    expect(files().check("read_file", { path: "data/x" })).toEqual({ allow: true });
    expect(files().check("read_file", { path: "../../etc/passwd" })).toMatchObject({
      allow: false,
      rule: "ab.scope",
    });
    expect(files().check("write_file", { path: "data/x" })).toMatchObject({ allow: false, rule: "ab.scope" });
    expect(files().check("write_file", { path: "out/x" })).toEqual({ allow: true });
    expect(files().check("delete_file", { path: "out/x" })).toMatchObject({
      allow: false,
      rule: "ab.permission",
    });
    // The baseline does not resolve symlinks: a link out of the scope passes.
    expect(files().check("read_file", { path: "data/etc/passwd" })).toEqual({ allow: true });
  });

  it("checks the first program of a command and the host of a URL", () => {
    const shell = ab({
      version: 1,
      server: "sh",
      permissions: ["mcp.ac.system.exec", "mcp.ac.network.client"],
      scopes: { "mcp.ac.system.exec": ["date", "ls"], "mcp.ac.network.client": ["api.example.com:443"] },
    });
    expect(shell.check("run", { command: "date" })).toEqual({ allow: true });
    expect(shell.check("run", { command: "curl http://x" })).toMatchObject({
      allow: false,
      rule: "ab.scope",
    });
    expect(shell.check("run", { command: "ls; curl http://x" })).toEqual({ allow: true });
    expect(shell.check("fetch", { url: "https://api.example.com/x" })).toEqual({ allow: true });
    expect(shell.check("fetch", { url: "https://evil.example.net/x" })).toMatchObject({ allow: false });
    expect(files().check("run", { command: "date" })).toMatchObject({ allow: false, rule: "ab.permission" });
  });

  it("gives the server only the environment variables env.read grants", () => {
    const env = { HOME: "/h", PATH: "/bin", LOG_LEVEL: "x", AWS_SECRET_ACCESS_KEY: "abcdEFGH1234ijklMNOP" };
    expect(files().environment(env).env).toEqual({ HOME: "/h", PATH: "/bin" });
    const scoped = ab({
      version: 1,
      server: "e",
      permissions: ["mcp.ac.system.env.read"],
      scopes: { "mcp.ac.system.env.read": ["LOG_LEVEL"] },
    });
    expect(scoped.environment(env).env).toEqual({ HOME: "/h", PATH: "/bin", LOG_LEVEL: "x" });
    const unscoped = ab({ version: 1, server: "e", permissions: ["mcp.ac.system.env.read"] });
    expect(unscoped.environment(env).env).toEqual(env);
  });
});
