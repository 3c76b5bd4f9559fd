/**
 * Every export format against golden files (test/fixtures/export/golden/*.golden, an extension no
 * formatter rewrites), from hand-made grants, so the files do not depend on this host.
 * `UPDATE_GOLDEN=1` rewrites them; read the diff.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EXPORT_FORMATS, ExportError, exportGrant, type Grant, srtCommand } from "../../src/export/index.ts";

const FIXTURES = join(import.meta.dirname, "..", "fixtures", "export");
const GOLDEN = join(FIXTURES, "golden");
const grant = (name: string): Grant => JSON.parse(readFileSync(join(FIXTURES, `grant-${name}.json`), "utf8"));
const SRT_RUNTIME = ["/opt/srt/vendor/seccomp/x64", "/usr/bin/bash", "/usr/bin/socat"];

function golden(file: string, text: string): void {
  const path = join(GOLDEN, file);
  if (process.env.UPDATE_GOLDEN || !existsSync(path)) {
    mkdirSync(GOLDEN, { recursive: true });
    writeFileSync(path, text);
  }
  expect(text).toBe(readFileSync(path, "utf8"));
}

describe("policy export, golden files", () => {
  for (const name of ["notes", "shell"]) {
    for (const format of EXPORT_FORMATS) {
      it(`${format} for the ${name} grant`, () => {
        const exported = exportGrant(format, grant(name), { srt: { runtime: SRT_RUNTIME } });
        expect(exported.format).toBe(format);
        expect(exported.notes.length).toBeGreaterThan(2);
        golden(`${name}.${format}.golden`, exported.text);
      });
    }
  }

  it("says in every format what it cannot express of the policy", () => {
    const g = grant("shell");
    const text = (format: (typeof EXPORT_FORMATS)[number]) =>
      exportGrant(format, g, { srt: { runtime: SRT_RUNTIME } }).text;
    expect(text("srt")).toMatch(/exec: none; srt has no rule for which programs run/);
    expect(text("bwrap")).toMatch(
      /network: all or nothing; the policy names api\.example\.com:443, \[2001:db8::1\]:8443/,
    );
    expect(text("firejail")).toMatch(/^# network: all or nothing/m);
    expect(text("sbpl")).toMatch(/^;; network: SBPL names a remote host only as \* or localhost/m);
    expect(text("landlock")).toMatch(/Landlock sees ports, not addresses/);
    for (const format of EXPORT_FORMATS)
      expect(text(format)).toMatch(/per call: arguments and results are not inspected/);
  });

  it("keeps JSON formats valid JSON, with the notes inside", () => {
    for (const format of ["srt", "bwrap", "landlock", "cgroup"] as const) {
      const doc = JSON.parse(exportGrant(format, grant("shell")).text);
      const notes = format === "srt" ? doc.mcpguard.notes : doc.notes;
      expect(Array.isArray(notes) && notes.length > 0).toBe(true);
    }
  });

  it("refuses a path firejail would read as a glob, rather than grant something else", () => {
    const g = grant("notes");
    g.paths.push({ ...(g.paths[4] as Grant["paths"][number]), path: "/srv/world/workspace/notes-*" });
    expect(() => exportGrant("firejail", g)).toThrow(ExportError);
    expect(() => exportGrant("firejail", g)).toThrow(/globs, macros/);
    // srt marks such a path literal instead of reading it as a pattern.
    const srt = JSON.parse(exportGrant("srt", g).text);
    expect(srt.filesystem.allowRead).toContainEqual({ path: "/srv/world/workspace/notes-*", literal: true });
  });

  it("hides a top-level host entry whose name firejail would misread through a pattern that keeps the view", () => {
    const g = grant("notes");
    g.hostEntries = [...g.hostEntries, "/$\\q,{:b", "/*", "/ a "];
    const text = exportGrant("firejail", g).text;
    expect(text).toMatch(/^blacklist \/\?\?q,\{:b$/m);
    expect(text).toMatch(/^blacklist \/\?$/m);
    expect(text).toMatch(/^blacklist \/\?a\?$/m);
    // a pattern that would hide what the policy keeps is refused instead
    const kept = g.paths[0]?.path.split("/")[1] as string;
    g.hostEntries.push(`/${kept.slice(0, -1)}*`);
    expect(() => exportGrant("firejail", g)).toThrow(/would also match/);
  });

  it("keeps a writable directory inside a read-only one writable (srt and firejail would not)", () => {
    const g = grant("notes");
    const ws = g.paths.find((p) => p.path === "/srv/world/workspace/notes") as Grant["paths"][number];
    g.paths.push({ ...ws, path: "/srv/world/workspace", rights: ["read_dir", "read_file"], write: false });
    const listing: Record<string, string[]> = {
      "/srv/world/workspace": ["data", "notes", "readme.txt"],
    };
    const exported = exportGrant("srt", g, { srt: { listDirectory: (dir) => listing[dir] } });
    const srt = JSON.parse(exported.text);
    expect(srt.filesystem.allowRead).toEqual(
      expect.arrayContaining([
        "/srv/world/workspace/data",
        "/srv/world/workspace/readme.txt",
        "/srv/world/workspace/notes",
      ]),
    );
    expect(srt.filesystem.allowRead).not.toContain("/srv/world/workspace");
    expect(srt.filesystem.allowWrite).toEqual(["/srv/world/workspace/notes"]);
    expect(exported.notes.join("\n")).toMatch(/granted entry by entry around the writable/);
    const profile = exportGrant("firejail", g).text.split("\n");
    expect(profile.indexOf("read-write /srv/world/workspace/notes")).toBeGreaterThan(
      profile.indexOf("read-only /srv/world/workspace"),
    );
  });

  it("leaves a writable file inside a writable directory to the directory (srt: a file bind breaks rename)", () => {
    const g = grant("notes");
    const dir = g.paths.find((p) => p.path === "/srv/world/workspace/notes") as Grant["paths"][number];
    g.paths.push({ ...dir, path: "/srv/world/workspace/notes/index.json", directory: false });
    const srt = JSON.parse(exportGrant("srt", g).text);
    expect(srt.filesystem.allowWrite).toEqual(["/srv/world/workspace/notes"]);
    expect(JSON.parse(exportGrant("bwrap", g).text).args.join(" ")).not.toContain("index.json");
  });

  it("quotes srt's command, which srt would otherwise join without quoting", () => {
    const g = grant("shell");
    expect(srtCommand(g, ["/usr/bin/node", "/srv/a b.mjs", "$(id)", "it's"])).toBe(
      `cd '/srv/world/it'\\''s space' 2>/dev/null; exec /usr/bin/node '/srv/a b.mjs' '$(id)' 'it'\\''s'`,
    );
    const notes = grant("notes");
    expect(srtCommand(notes, notes.command)).toBe(
      "cd /srv/world/workspace 2>/dev/null; export TMPDIR=/srv/world/tmp; exec /usr/bin/python3.11 /srv/mcp/servers/python/notes.py",
    );
  });

  it("keeps a usage line or a note about a command with a line break on one comment line", () => {
    const g = grant("shell");
    g.command = ["/usr/bin/node", "/srv/mcp/servers/js/shell.mjs", "a\nquit"];
    g.launcher = { command: ["npx", "-y", "@mcp-test/shell", "a\nquit"], via: "npx @mcp-test/shell" };
    for (const format of ["firejail", "sbpl"] as const) {
      const text = exportGrant(format, g).text;
      expect(text.split("\n").filter((l) => l === "quit" || l.startsWith("quit"))).toEqual([]);
    }
    expect(exportGrant("firejail", g).text).toContain(
      '# usage: firejail --profile=<this file> <the argv ["/usr/bin/node","/srv/mcp/servers/js/shell.mjs","a\\nquit"]>',
    );
    // JSON formats carry the argv itself, and srt's usage the line break inside its quotes.
    expect(JSON.parse(exportGrant("bwrap", g).text).command).toEqual(g.command);
    expect(JSON.parse(exportGrant("srt", g).text).mcpguard.usage).toContain("a\nquit");
  });
});
