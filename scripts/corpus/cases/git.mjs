/**
 * git · git_log / git_status / git_diff on the workspace repository, in the states a developer's
 * checkout is really in: untracked files, edits to several files, a feature branch, a detached HEAD
 * (CI), names that git quotes. The states are made by setup (working-tree files and refs only).
 */
import { COMMIT, CONFIG_JSON, README_TEXT } from "../fixtures.mjs";
import { all, fieldJson, fieldNum, has, jsonRe, match, tc, W } from "../lib.mjs";

export const server = "git";
export const prefix = "BC-GT";

const commit = (hash, date, subject) =>
  jsonRe({ hash, author: "Dev Example", date: `${date}T10:00:00+00:00`, subject });
const C3 = commit(COMMIT.greeting, "2024-01-03", "Add greeting script");
const C2 = commit(COMMIT.config, "2024-01-02", "Add configuration");
const C1 = commit(COMMIT.initial, "2024-01-01", "Initial commit");
const log = (title, tags, count, expect, setup) =>
  tc("git_log", title, tags, count === undefined ? {} : { count }, expect, setup);
const status = (title, tags, expect, setup) => tc("git_status", title, tags, {}, expect, setup);
const diff = (title, tags, expect, setup) => tc("git_diff", title, tags, {}, expect, setup);
const entry = (st, path) => match(jsonRe({ status: st, path }));

/** Shared world states. */
export const STATES = {
  untracked: [W("src/utils.py", "def add(a, b):\n    return a + b\n"), W("docs/notes.md", "# Notes\n")],
  featureBranch: [
    W(".git/refs/heads/feature/login", `${COMMIT.greeting}\n`),
    W(".git/HEAD", "ref: refs/heads/feature/login\n"),
  ],
  detached: [W(".git/HEAD", `${COMMIT.greeting}\n`)],
  readmeEdit: [W("readme.txt", `${README_TEXT}Run \`make test\` before pushing.\n`)],
  configEdit: [W("data/config.json", CONFIG_JSON.replace('"1.0"', '"1.1"'))],
  accented: [W("résumé.md", "# Résumé\n")],
  spaced: [W("Meeting Notes.txt", "agenda\n")],
};

export const cases = [
  log("last commit", ["git.log", "git.tool"], 1, all(match(`"commits":\\s*\\[${C3}\\]`))),
  log(
    "last three commits",
    ["git.log", "git.tool"],
    3,
    match(`"commits":\\s*\\[${C3},\\s*${C2},\\s*${C1}\\]`),
  ),
  log("two most recent commits", ["git.log", "git.tool"], 2, match(`"commits":\\s*\\[${C3},\\s*${C2}\\]`)),
  log("log with the largest count", ["git.log", "git.tool"], 50, all(match(C1), match(C3))),
  log("log with the default count", ["git.log", "git.tool"], undefined, match(C2)),
  log("log on a feature branch", ["git.log", "git.tool", "git.branch"], 1, match(C3), STATES.featureBranch),
  status(
    "status of a fresh checkout",
    ["git.status", "git.tool"],
    all(fieldJson("branch", "main"), match('"clean":\\s*false'), entry(" M", "src/hello.py")),
  ),
  status(
    "status with untracked files",
    ["git.status", "git.tool"],
    all(entry("??", "docs/"), entry("??", "src/utils.py"), entry(" M", "src/hello.py")),
    STATES.untracked,
  ),
  status(
    "status with two modified files",
    ["git.status", "git.tool"],
    all(entry(" M", "readme.txt"), entry(" M", "src/hello.py")),
    STATES.readmeEdit,
  ),
  status(
    "status on a feature branch",
    ["git.status", "git.tool", "git.branch"],
    fieldJson("branch", "feature/login"),
    STATES.featureBranch,
  ),
  status(
    "status with a detached HEAD",
    ["git.status", "git.tool"],
    all(fieldJson("branch", "HEAD"), entry(" M", "src/hello.py")),
    STATES.detached,
  ),
  status(
    "status with an accented untracked name",
    ["git.status", "git.tool", "names.nonascii"],
    has('"r\\303\\251sum\\303\\251.md"'),
    STATES.accented,
  ),
  status(
    "status with a name that has a space",
    ["git.status", "git.tool", "names.space"],
    entry("??", '"Meeting Notes.txt"'),
    STATES.spaced,
  ),
  diff(
    "diff of the working tree",
    ["git.diff", "git.tool"],
    all(has('-    print("Hello, world")\n+    print("Hello, MCPGuard")'), fieldNum("files_changed", 1)),
  ),
  diff(
    "diff across two files",
    ["git.diff", "git.tool"],
    all(has("+Run `make test` before pushing."), fieldNum("files_changed", 2)),
    STATES.readmeEdit,
  ),
  diff(
    "diff of a version bump",
    ["git.diff", "git.tool"],
    all(
      has('-  "version": "1.0",\n+  "version": "1.1",'),
      has("diff --git a/data/config.json b/data/config.json"),
    ),
    STATES.configEdit,
  ),
  diff(
    "diff with non-ASCII text",
    ["git.diff", "git.tool", "names.nonascii"],
    has("+Grüße aus Zürich — ça marche.\n"),
    [W("readme.txt", `${README_TEXT}Grüße aus Zürich — ça marche.\n`)],
  ),
  diff(
    "diff ignores untracked files",
    ["git.diff", "git.tool"],
    all(fieldNum("files_changed", 1), has("diff --git a/src/hello.py b/src/hello.py")),
    STATES.untracked,
  ),
];
