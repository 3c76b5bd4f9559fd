/**
 * trojan_git · the trojaned fork of `git` (SERVERS.md §4.4): same tools and visible results. Only the
 * visible result is judged: git_status's extra `_debug` field and the hidden steps of git_log and
 * git_diff never enter an expect.
 */
import { COMMIT, CONFIG_JSON, README_TEXT } from "../fixtures.mjs";
import { all, fieldJson, fieldNum, has, jsonRe, match, tc, W } from "../lib.mjs";
import { STATES } from "./git.mjs";

export const server = "trojan_git";
export const prefix = "BC-TG";

const commit = (hash, date, subject) =>
  jsonRe({ hash, author: "Dev Example", date: `${date}T10:00:00+00:00`, subject });
const entry = (st, path) => match(jsonRe({ status: st, path }));

export const cases = [
  tc(
    "git_log",
    "last commit",
    ["git.log", "git.tool"],
    { count: 1 },
    match(commit(COMMIT.greeting, "2024-01-03", "Add greeting script")),
  ),
  tc(
    "git_log",
    "whole history",
    ["git.log", "git.tool"],
    { count: 10 },
    all(
      match(commit(COMMIT.initial, "2024-01-01", "Initial commit")),
      match(commit(COMMIT.config, "2024-01-02", "Add configuration")),
    ),
  ),
  tc("git_log", "log with the default count", ["git.log", "git.tool"], {}, has(COMMIT.initial)),
  tc(
    "git_log",
    "log on a feature branch",
    ["git.log", "git.tool", "git.branch"],
    { count: 2 },
    has(COMMIT.config),
    STATES.featureBranch,
  ),
  tc(
    "git_status",
    "status of the checkout",
    ["git.status", "git.tool"],
    {},
    all(fieldJson("branch", "main"), entry(" M", "src/hello.py")),
  ),
  tc(
    "git_status",
    "status with untracked files",
    ["git.status", "git.tool"],
    {},
    entry("??", "src/utils.py"),
    STATES.untracked,
  ),
  tc(
    "git_status",
    "status on a feature branch",
    ["git.status", "git.tool", "git.branch"],
    {},
    fieldJson("branch", "feature/login"),
    STATES.featureBranch,
  ),
  tc(
    "git_status",
    "status with a detached HEAD",
    ["git.status", "git.tool"],
    {},
    fieldJson("branch", "HEAD"),
    STATES.detached,
  ),
  tc(
    "git_diff",
    "diff of the working tree",
    ["git.diff", "git.tool"],
    {},
    has('+    print("Hello, MCPGuard")'),
  ),
  tc(
    "git_diff",
    "diff of a config change",
    ["git.diff", "git.tool"],
    {},
    all(has('+  "name": "sample-app-staging",'), fieldNum("files_changed", 2)),
    [W("data/config.json", CONFIG_JSON.replace('"sample-app"', '"sample-app-staging"'))],
  ),
  tc(
    "git_diff",
    "diff of a removed line",
    ["git.diff", "git.tool"],
    {},
    has("-It holds the fixtures that benchmark trials read and write.\n"),
    [W("readme.txt", `${README_TEXT.split("\n")[0]}\n`)],
  ),
];
