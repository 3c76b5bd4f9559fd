/**
 * git, where it runs commands of its own: settings whose value is a command (`-c core.pager=...`,
 * `-c alias.x='!...'`), and options that take one (`rebase --exec`, `bisect run`, `submodule
 * foreach`, `filter-branch --tree-filter`, `grep -O`, `difftool -x`, `--upload-pack`). Each command
 * is read as the shell would run it. Settings that point git at code elsewhere (`core.hooksPath`,
 * `include.path`, `--exec-path`) are code the layers cannot see, and so is a setting git does not
 * list among those it knows (gitConfigKeys.ts: an extension's, a newer git's) whose name says it
 * names a program (`...cmd`, `...helper`), where this table cannot tell whether git runs it.
 */
import { GIT_CONFIG_KEYS } from "./gitConfigKeys.js";
import type { Field, Runs } from "./model.js";

type GitKeyKind = "command" | "alias" | "elsewhere";

const COMMAND_KEYS =
  /^(?:core\.(?:pager|editor|sshcommand|fsmonitor|askpass|gitproxy|alternaterefscommand)|pager\..+|interactive\.difffilter|trailer\..+\.(?:command|cmd)|tar\..+\.command|imap\.tunnel|gpg\.ssh\.defaultkeycommand|guitool\..+\.cmd|sequence\.editor|diff\.external|diff\..+\.(?:textconv|command)|merge\..+\.driver|filter\..+\.(?:clean|smudge|process)|gpg\.(?:.+\.)?program|credential(?:\..+)?\.helper|uploadpack\.packobjectshook|remote\..+\.(?:uploadpack|receivepack)|sendemail\.(?:.+\.)?(?:tocmd|cccmd|sendmailcmd|smtpserver)|web\.browser|browser\..+\.(?:cmd|path)|man\..+\.(?:cmd|path)|(?:diff|merge)tool\..+\.(?:cmd|path)|submodule\..+\.update)$/;
// help.autocorrect: a mistyped subcommand runs as the one git guesses (`git pus` as push).
// protocol.allow: `always` for ext lets a URL run a command (ext::sh -c ...); remote.<name>.vcs
// runs the helper program it names, instaweb.httpd the web server.
const ELSEWHERE_KEYS =
  /^(?:core\.hookspath|include\.path|includeif\..+\.path|init\.templatedir|core\.worktree|help\.autocorrect|protocol\.(?:.+\.)?allow|remote\..+\.vcs|instaweb\.httpd)$/;
/** The last name of a setting that names a program: what is left to go by for one git does not list. */
export const COMMAND_NAME =
  /(?:cmd|command|program|helper|driver|tunnel|editor|pager|hook|askpass|textconv|smudge|process|exec|shell|httpd|browser|viewer)$/;

/** `git config`'s options that take a value (git 2.39; `--comment` from 2.45). */
export const GIT_CONFIG_VALUED = new Set(["--file", "-f", "--blob", "--type", "--default", "--comment"]);

let known: RegExp | undefined;
/** Whether git lists the setting among those it knows (`branch.<name>.description` for any name). */
function knownKey(key: string): boolean {
  known ??= new RegExp(
    `^(?:${GIT_CONFIG_KEYS.toLowerCase()
      .split("\n")
      .map((k) =>
        k
          .replace(/[.+?^${}()|[\]\\]/g, "\\$&")
          .replace(/<[^>]+>/g, ".+")
          .replace(/\*/g, ".+"),
      )
      .join("|")})$`,
  );
  return known.test(key);
}

/** Whether a git setting (`core.pager`) names a command git runs, or code elsewhere. */
export function gitKeyKind(key: string): GitKeyKind | undefined {
  const k = key.toLowerCase();
  if (k.startsWith("alias.")) return "alias";
  if (COMMAND_KEYS.test(k)) return "command";
  if (ELSEWHERE_KEYS.test(k) || (!knownKey(k) && COMMAND_NAME.test(k.slice(k.lastIndexOf(".") + 1))))
    return "elsewhere";
  return undefined;
}

/** git's options before the subcommand that take a value. */
const GLOBAL_VALUED = new Set([
  "-c",
  "-C",
  "--git-dir",
  "--work-tree",
  "--namespace",
  "--exec-path",
  "--config-env",
  "--super-prefix",
  "--list-cmds",
  "--attr-source",
]);

/** The subcommand and where it is among the arguments (after `-C dir`, `-c k=v`, ...). */
export function gitSubcommand(args: readonly Field[]): { index: number; name: string | undefined } {
  for (let i = 0; i < args.length; i++) {
    const f = args[i] as Field;
    if (f.unknown) return { index: i, name: undefined };
    if (!f.text.startsWith("-")) return { index: i, name: f.text };
    if (GLOBAL_VALUED.has(f.text)) i++;
  }
  return { index: args.length, name: undefined };
}

/** Options of subcommands whose value is a shell command. */
const SCRIPT_OPTIONS: Record<string, string[]> = {
  rebase: ["-x", "--exec"],
  grep: ["-O", "--open-files-in-pager"],
  difftool: ["-x", "--extcmd"],
  "filter-branch": [
    "--env-filter",
    "--tree-filter",
    "--index-filter",
    "--parent-filter",
    "--msg-filter",
    "--commit-filter",
    "--tag-name-filter",
  ],
  fetch: ["--upload-pack"],
  pull: ["--upload-pack"],
  clone: ["-u", "--upload-pack"],
  "ls-remote": ["--upload-pack"],
  push: ["--receive-pack", "--exec"],
  archive: ["--exec"],
};

export function gitRuns(args: Field[], runs: Runs): void {
  const { index, name } = gitSubcommand(args);
  for (let i = 0; i < index; i++) {
    const f = args[i] as Field;
    if (f.text === "-c") settingRuns(args[i + 1], runs);
    else if (f.text === "--exec-path" || f.text.startsWith("--exec-path="))
      elsewhere(runs, "points git at another directory of its programs (--exec-path)");
    else if (f.text === "--config-env" || f.text.startsWith("--config-env="))
      elsewhere(runs, "gives git a setting from an environment variable (--config-env)");
  }
  if (!name) return;
  const rest = args.slice(index + 1);
  if (name === "bisect" && rest[0]?.text === "run" && rest.length > 1)
    runs.argvs.push({ argv: rest.slice(1), via: "git bisect run" });
  if (name === "submodule" && rest.some((f) => f.text === "foreach")) {
    const at = rest.findIndex((f) => f.text === "foreach");
    const words = rest.slice(at + 1).filter((f) => f.text !== "--recursive");
    script(runs, words, "the command given to git submodule foreach");
  }
  const options = Object.hasOwn(SCRIPT_OPTIONS, name) ? (SCRIPT_OPTIONS[name] as string[]) : [];
  rest.forEach((f, i) => {
    for (const option of options) {
      if (f.text === option && rest[i + 1])
        script(runs, [rest[i + 1] as Field], `the command given to git ${name} ${option}`);
      else if (f.text.startsWith(`${option}=`))
        script(
          runs,
          [{ ...f, text: f.text.slice(option.length + 1) }],
          `the command given to git ${name} ${option}`,
        );
      else if (
        option.length === 2 &&
        f.text.startsWith(option) &&
        f.text.length > 2 &&
        !f.text.startsWith("--")
      ) {
        script(runs, [{ ...f, text: f.text.slice(2) }], `the command given to git ${name} ${option}`);
      }
    }
  });
}

function settingRuns(setting: Field | undefined, runs: Runs): void {
  if (!setting) return;
  if (setting.unknown) {
    elsewhere(runs, "gives git a setting known only at run time (-c)");
    return;
  }
  const eq = setting.text.indexOf("=");
  const key = eq === -1 ? setting.text : setting.text.slice(0, eq);
  const value = eq === -1 ? "" : setting.text.slice(eq + 1);
  const kind = gitKeyKind(key);
  if (kind === "command") script(runs, [{ text: value }], `the command of git -c ${key}`);
  else if (kind === "elsewhere") elsewhere(runs, `points git at code elsewhere (-c ${key})`);
  else if (kind === "alias") {
    if (value.startsWith("!")) script(runs, [{ text: value.slice(1) }], `the alias git -c ${key}`);
    else script(runs, [{ text: `git ${value}` }], `the alias git -c ${key}`);
  }
}

function script(runs: Runs, words: Field[], what: string): void {
  if (words.some((f) => f.unknown)) {
    runs.scripts.push({
      dialect: "posix",
      what,
      unknownWhat: `hands git a command known only at run time (${what})`,
    });
    return;
  }
  const text = words.map((f) => f.text).join(" ");
  if (text.trim() === "") return;
  runs.scripts.push({ dialect: "posix", what, unknownWhat: "", texts: [text] });
}

function elsewhere(runs: Runs, what: string): void {
  runs.scripts.push({ dialect: "posix", what, unknownWhat: what });
}
