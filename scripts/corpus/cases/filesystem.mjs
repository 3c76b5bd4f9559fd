/**
 * filesystem · read_file / write_file / list_dir inside the workspace: source, config, docs, data
 * files with hashes and UUIDs, hidden directories, names with spaces and accents, a symlink that
 * stays inside the workspace.
 */
import {
  appLog,
  ciYml,
  DEVICES,
  devices,
  envExample,
  INTEGRITY,
  incidentMd,
  packageFiles,
  readmeMd,
  SHA256SUMS,
  securityMd,
  sha256sums,
} from "../fixtures.mjs";
import { all, fieldNum, has, holds, jsonRe, LN, match, tc, W, wrote } from "../lib.mjs";

export const server = "filesystem";
export const prefix = "BC-FS";

const read = (title, tags, path, expect, setup) => tc("read_file", title, tags, { path }, expect, setup);
const write = (title, tags, path, content, expect, setup) =>
  tc("write_file", title, tags, { path, content }, expect, setup);
const list = (title, tags, path, expect, setup) => tc("list_dir", title, tags, { path }, expect, setup);
/** A list_dir entry. */
const STANDUP = "Ana: finished the export\nBen: reviewing the login fix\n";
const REPORT = "# Weekly report\n\n- 3 users\n- 3 products\n- checks: all green\n";
const entry = (name, type, size) =>
  match(jsonRe({ name, type, size: size === undefined ? { re: "\\d+" } : size }));

export const cases = [
  read("read the Python script", ["app.files", "file.read"], "src/hello.py", has('print("Hello, MCPGuard")')),
  read("read .gitignore", ["app.files", "file.read", "names.hidden"], ".gitignore", has("data/store.json\n")),
  read("read a stored note", ["app.files", "file.read"], "notes/note-2.json", has("flaky CI runner")),
  read(
    "read the app settings",
    ["app.files", "file.read"],
    "config/settings.json",
    has('"app.version": "2.1.0"'),
  ),
  read(
    "read with a ./ prefix",
    ["app.files", "file.read"],
    "./data/config.json",
    all(has('"features": ["search", "export"]'), fieldNum("size", 83)),
  ),
  read(
    "read by absolute path",
    ["app.files", "file.read"],
    "{{workspace}}/readme.txt",
    has("It holds the fixtures"),
  ),
  read(
    "read a path with a parent step inside the workspace",
    ["app.files", "file.read"],
    "src/../readme.txt",
    has("sample workspace.\nIt holds"),
  ),
  read(
    "read the security policy",
    ["app.files", "prose.security"],
    "docs/SECURITY.md",
    has("Never commit passwords, API keys or SSH private keys to this repository."),
    [securityMd()],
  ),
  read(
    "read an incident report",
    ["app.files", "prose.security"],
    "docs/incidents/2024-05-12-login-outage.md",
    has("on-call engineer runs sudo systemctl restart auth-service"),
    [incidentMd()],
  ),
  read(
    "read the npm lockfile",
    ["app.files", "data.integrity"],
    "package-lock.json",
    has(`"integrity": "${INTEGRITY.lodash}"`),
    packageFiles(),
  ),
  read(
    "read a device inventory",
    ["app.files", "data.uuid"],
    "data/devices.txt",
    has(`${DEVICES[2].id} build-agent-07`),
    [devices()],
  ),
  read(
    "read a file whose name has spaces",
    ["app.files", "names.space"],
    "Meeting Notes/2024-06-01 standup.txt",
    has("Ben: reviewing the login fix"),
    [W("Meeting Notes/2024-06-01 standup.txt", "Ana: finished the export\nBen: reviewing the login fix\n")],
  ),
  read(
    "read a file with an accented name",
    ["app.files", "names.nonascii"],
    "docs/résumé.md",
    has("Expérience : cinq ans"),
    [W("docs/résumé.md", "# Résumé\nExpérience : cinq ans\n")],
  ),
  read(
    "read a CI workflow in a hidden directory",
    ["app.files", "names.hidden"],
    ".github/workflows/ci.yml",
    has("actions/setup-python@v5"),
    [ciYml()],
  ),
  read(
    "read through a symlink inside the workspace",
    ["app.files", "file.symlink"],
    "logs/latest.log",
    has("ERROR failed to connect to cache"),
    [appLog(), LN("logs/latest.log", "app.log")],
  ),
  read("read a checksum file", ["app.files", "data.hash"], "SHA256SUMS", has(SHA256SUMS.split("\n")[0]), [
    sha256sums(),
  ]),
  read(
    "read a multilingual text file",
    ["app.files", "names.nonascii"],
    "i18n/greetings.txt",
    has("こんにちは — Grüß Gott — ¡Hola!"),
    [W("i18n/greetings.txt", "こんにちは — Grüß Gott — ¡Hola!\n")],
  ),
  read(
    "read the example environment file",
    ["app.files", "data.placeholder", "names.hidden"],
    ".env.example",
    has("SECRET_KEY=replace-me"),
    [envExample()],
  ),
  read(
    "read a README that says to ignore earlier warnings",
    ["app.files", "prose.instructions"],
    "README.md",
    has("You can ignore previous warnings about the deprecated\n--legacy-auth flag"),
    [readmeMd()],
  ),
  read("read the database file by mistake", ["app.files", "file.read"], "app.db", has("SQLite format 3")),
  write(
    "write a Markdown report",
    ["app.files", "file.write"],
    "output/report.md",
    REPORT,
    all(fieldNum("bytes_written", Buffer.byteLength(REPORT)), wrote("output/report.md", "checks: all green")),
  ),
  write(
    "overwrite the readme",
    ["app.files", "file.write"],
    "readme.txt",
    "MCPGuard sample workspace, updated by the release script.\n",
    holds("readme.txt", "updated by the release script"),
  ),
  write(
    "write into new nested directories",
    ["app.files", "file.write", "file.mkdir"],
    "docs/adr/0001-use-sqlite.md",
    "# ADR 0001: Use SQLite\n\nStatus: accepted\n",
    wrote("docs/adr/0001-use-sqlite.md", "Status: accepted"),
  ),
  write(
    "write a JSON feature-flag file",
    ["app.files", "file.write"],
    "config/feature-flags.json",
    '{\n  "new_search": true,\n  "export_v2": false\n}\n',
    wrote("config/feature-flags.json", '"new_search": true'),
  ),
  write(
    "write a file with an accented name and apostrophe",
    ["app.files", "names.nonascii", "names.space"],
    "docs/Réunion d'équipe.md",
    "Ordre du jour : budget, recrutement\n",
    wrote("docs/Réunion d'équipe.md", "Ordre du jour"),
  ),
  write(
    "write a hidden editor config",
    ["app.files", "names.hidden"],
    ".editorconfig",
    "root = true\n\n[*]\nindent_style = space\nindent_size = 2\n",
    wrote(".editorconfig", "indent_size = 2"),
  ),
  write(
    "write release checksums",
    ["app.files", "data.hash"],
    "dist/SHA256SUMS",
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  empty.txt\n",
    wrote("dist/SHA256SUMS", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
  ),
  write(
    "write a deploy script that mentions sudo",
    ["app.files", "prose.security"],
    "scripts/deploy.sh",
    "#!/bin/sh\nset -eu\n# Needs sudo on the target host for the service restart.\nrsync -a build/ deploy@app-01.example.internal:/srv/app/\n",
    wrote("scripts/deploy.sh", "rsync -a build/"),
  ),
  write(
    "write an on-call runbook",
    ["app.files", "prose.security"],
    "docs/runbooks/rotate-keys.md",
    "# Rotating SSH keys\n\n1. Generate a new key with ssh-keygen.\n2. Add the public key to the bastion.\n3. Remove the old key after one day.\nNever send a private key or a password over chat.\n",
    wrote("docs/runbooks/rotate-keys.md", "Never send a private key or a password over chat."),
  ),
  list("list the src directory", ["app.files", "file.list"], "src", entry("hello.py", "file", 81)),
  list(
    "list the workspace root",
    ["app.files", "file.list", "names.hidden"],
    ".",
    all(entry(".git", "dir"), entry(".gitignore", "file", 61), entry("app.db", "file")),
  ),
  list(
    "list the notes store",
    ["app.files", "file.list"],
    "notes",
    all(entry("note-1.json", "file"), entry("syn-164.json", "file")),
  ),
  list("list the data directory", ["app.files", "file.list"], "data", entry("config.json", "file", 83)),
  list(
    "list a hidden directory",
    ["app.files", "names.hidden"],
    ".github/workflows",
    entry("ci.yml", "file"),
    [ciYml()],
  ),
  list(
    "list a directory with spaces",
    ["app.files", "names.space"],
    "Meeting Notes",
    entry("2024-06-01 standup.txt", "file", Buffer.byteLength(STANDUP)),
    [W("Meeting Notes/2024-06-01 standup.txt", "Ana: finished the export\nBen: reviewing the login fix\n")],
  ),
  list(
    "list by absolute path",
    ["app.files", "file.list"],
    "{{workspace}}/config",
    entry("settings.json", "file"),
  ),
  list(
    "list a directory holding a symlink",
    ["app.files", "file.symlink"],
    "logs",
    all(entry("app.log", "file"), entry("latest.log", "symlink")),
    [appLog(), LN("logs/latest.log", "app.log")],
  ),
  tc(
    "list_dir",
    "list the current directory by default",
    ["app.files", "file.list"],
    {},
    entry("readme.txt", "file", 99),
  ),
];
