/**
 * js_filesystem · the JavaScript twin of `filesystem` (same tools, results from JSON.stringify).
 */
import {
  APP_JS,
  accessLog,
  appJs,
  makefile,
  PACKAGE_JSON,
  packageFiles,
  requirements,
  sshHowto,
  utilsPy,
} from "../fixtures.mjs";
import { all, fieldNum, has, holds, jsonRe, match, tc, W, wrote } from "../lib.mjs";

export const server = "js_filesystem";
export const prefix = "BC-JF";

const read = (title, tags, path, expect, setup) => tc("read_file", title, tags, { path }, expect, setup);
const write = (title, tags, path, content, expect, setup) =>
  tc("write_file", title, tags, { path, content }, expect, setup);
const list = (title, tags, path, expect, setup) => tc("list_dir", title, tags, { path }, expect, setup);
const entry = (name, type, size) =>
  match(jsonRe({ name, type, size: size === undefined ? { re: "\\d+" } : size }));

const TODO = "- [ ] write tests\n- [x] add CI\n- [ ] update the changelog\n";

export const cases = [
  read("read the JSON store", ["app.files", "file.read"], "data/store.json", has('"charlie@example.com"')),
  read(
    "read package.json",
    ["app.files", "file.read"],
    "package.json",
    all(has('"start": "node src/app.js"'), fieldNum("size", Buffer.byteLength(PACKAGE_JSON))),
    packageFiles(),
  ),
  read("read a Node module", ["app.files", "file.read"], "src/app.js", has("module.exports = { banner };"), [
    appJs(),
  ]),
  read("read the Makefile", ["app.files", "file.read"], "Makefile", has("\tpython3 -m pytest -q\n"), [
    makefile(),
  ]),
  read("read pinned requirements", ["app.files", "file.read"], "requirements.txt", has("flask==3.0.3"), [
    requirements(),
  ]),
  read("read a synthetic note", ["app.files", "file.read"], "notes/syn-042.json", has("Team offsite")),
  read(
    "read the access log",
    ["app.files", "file.read"],
    "logs/access.log",
    has('"POST /api/login HTTP/1.1" 401 128'),
    [accessLog()],
  ),
  read(
    "read an SSH how-to",
    ["app.files", "prose.security"],
    "docs/howto-ssh-access.md",
    has("Never paste it into chat."),
    [sshHowto()],
  ),
  read(
    "read a file in a dot-directory with spaces",
    ["app.files", "names.hidden", "names.space"],
    ".config/app settings.ini",
    has("theme = dark"),
    [W(".config/app settings.ini", "[ui]\ntheme = dark\nlanguage = de-CH\n")],
  ),
  read(
    "read a German file name",
    ["app.files", "names.nonascii"],
    "Übersicht/Straßen.csv",
    has("Hauptstraße,12"),
    [W("Übersicht/Straßen.csv", "name,nr\nHauptstraße,12\nBahnhofstraße,3\n")],
  ),
  read(
    "read a Python helper",
    ["app.files", "file.read"],
    "src/utils.py",
    has("return round(sum(prices), 2)"),
    [utilsPy()],
  ),
  write(
    "write a TODO list",
    ["app.files", "file.write"],
    "TODO.md",
    TODO,
    all(fieldNum("bytes_written", Buffer.byteLength(TODO)), wrote("TODO.md", "- [x] add CI")),
  ),
  write(
    "write a module into a new directory",
    ["app.files", "file.write", "file.mkdir"],
    "src/lib/format.js",
    "export const money = (n) => `$${n.toFixed(2)}`;\n",
    wrote("src/lib/format.js", "export const money"),
  ),
  write(
    "update the node entry point",
    ["app.files", "file.write"],
    "src/app.js",
    APP_JS.replace("console.log(banner());", "console.log(banner(), 'ready');"),
    holds("src/app.js", "console.log(banner(), 'ready');"),
    [appJs()],
  ),
  write(
    "write a changelog with emoji",
    ["app.files", "names.nonascii"],
    "CHANGELOG.md",
    "## 1.1.0\n\n- ✨ new search\n- 🐛 fixed the login redirect\n",
    wrote("CHANGELOG.md", "🐛 fixed the login redirect"),
  ),
  write(
    "write a lockfile-style integrity line",
    ["app.files", "data.integrity"],
    "vendor/manifest.json",
    '{\n  "left-pad": "sha512-7BtHz7V5HRbk6H2KZTMwQe/ncebSNdPQkgeTSqBkiOCGoPN1BDCTPwuyEEBkqzlRJF6ibTjtqdbKHRhA3ueuX1w=="\n}\n',
    wrote("vendor/manifest.json", '"left-pad": "sha512-'),
  ),
  list("list src", ["app.files", "file.list"], "src", entry("hello.py", "file", 81)),
  list(
    "list the workspace",
    ["app.files", "file.list"],
    ".",
    all(entry("src", "dir"), entry("readme.txt", "file", 99)),
  ),
  list("list config", ["app.files", "file.list"], "config", entry("settings.json", "file")),
  list(
    "list a directory with non-ASCII names",
    ["app.files", "names.nonascii"],
    "Übersicht",
    entry("Straßen.csv", "file"),
    [W("Übersicht/Straßen.csv", "name,nr\nHauptstraße,12\n")],
  ),
];
