/**
 * The variables a server's code reads (policy derive keeps the set ones): found in its own files,
 * as the runtime finds them (an installed package whole, a script's folder, a Python package).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeRoots, envNames, serverCode } from "../src/serverCode.ts";

let root: string;
beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "mcpguard-code-")));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("environment names in code", () => {
  it("reads JavaScript's and Python's ways of reading the environment", () => {
    const js = `
      const token = process.env.GITHUB_TOKEN;
      const dir = process.env["NOTES_DIR"] ?? "notes";
      const { API_KEY, DB_PATH: db, LEVEL = "info" } = process.env;
      if (process.env.debug) {}
    `;
    expect(envNames(js)).toEqual(["API_KEY", "DB_PATH", "GITHUB_TOKEN", "LEVEL", "NOTES_DIR"]);
    const py = `
import os
from os import environ, getenv
a = os.environ["SLACK_TOKEN"]
b = os.environ.get('DATA_DIR', 'data')
c = getenv("REPO_PATH")
d = environ.setdefault("MODE", "x")
`;
    expect(envNames(py)).toEqual(["DATA_DIR", "MODE", "REPO_PATH", "SLACK_TOKEN"]);
  });

  it("reads an installed package whole, a script of one's own with its folder", () => {
    const pkg = join(root, "node_modules", "srv");
    mkdirSync(join(pkg, "dist", "lib"), { recursive: true });
    writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: "srv" }));
    writeFileSync(join(pkg, "dist", "index.js"), "import './lib/x.js';");
    writeFileSync(join(pkg, "dist", "lib", "x.js"), "process.env.SRV_TOKEN");
    expect(
      serverCode(["node", join(pkg, "dist", "index.js")], join(pkg, "dist", "index.js"), {}, root),
    ).toEqual({
      read: [pkg],
      names: ["SRV_TOKEN"],
    });
    const own = join(root, "mine");
    mkdirSync(own);
    writeFileSync(join(own, "server.mjs"), "process.env.MINE_DIR");
    expect(codeRoots(["node", "server.mjs"], "mine/server.mjs", {}, root)).toEqual([own]);
  });

  it("finds a module started with python -m where that interpreter's import system does", () => {
    const site = join(root, "site");
    mkdirSync(join(site, "journal_srv"), { recursive: true });
    writeFileSync(join(site, "journal_srv", "__init__.py"), "");
    writeFileSync(join(site, "journal_srv", "__main__.py"), "import os\nos.getenv('JOURNAL_HOME')\n");
    const python = spawnSync("sh", ["-c", "command -v python3"], { encoding: "utf8" }).stdout.trim();
    // -I in the lookup ignores PYTHONPATH; a .pth in a venv is how an install would place it.
    const venv = join(root, "venv");
    expect(spawnSync(python, ["-m", "venv", "--without-pip", venv]).status).toBe(0);
    const lib = spawnSync(
      join(venv, "bin", "python"),
      ["-c", "import sysconfig;print(sysconfig.get_paths()['purelib'])"],
      {
        encoding: "utf8",
      },
    ).stdout.trim();
    writeFileSync(join(lib, "site.pth"), `${site}\n`);
    const code = serverCode([join(venv, "bin", "python"), "-m", "journal_srv"], undefined, process.env, root);
    expect(code.read).toEqual([join(site, "journal_srv")]);
    expect(code.names).toEqual(["JOURNAL_HOME"]);
  });
});
