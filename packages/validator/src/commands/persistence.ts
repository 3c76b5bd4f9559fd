/**
 * `l2.command.persistence`: ways to make code run again later, outside the tool call: scheduled
 * jobs, enabled services, global git configuration (hooks, pagers, editors), and writes into
 * shell start-up files, `authorized_keys`, autostart, systemd, cron or git hook locations.
 */
import { basename } from "node:path";
import { GIT_CONFIG_VALUED, gitKeyKind } from "@mcpguard/readers";
import { SHELL_RC } from "../sensitive.js";
import type { Invocation } from "./invocations.js";
import {
  type CommandRule,
  type CommandView,
  fileWord,
  linkSources,
  type MadeLink,
  madeLinks,
  pathsOf,
} from "./view.js";

const SCHEDULERS = new Set(["at", "batch", "launchctl", "update-rc.d", "chkconfig"]);
const ENABLE = new Set(["enable", "link", "reenable", "preset", "preset-all", "set-default"]);
const GIT_CONFIG_READ = /^(?:--get(?:-all|-regexp|-urlmatch)?|--list|-l|get|list)$/;
const PLACES =
  /(?:^|\/)authorized_keys2?$|\/\.config\/(?:autostart|systemd)(?:\/|$)|^\/etc\/(?:cron|systemd\/|init\.d\/|rc\.local|profile|ld\.so\.preload)|^\/var\/spool\/cron|\/Library\/Launch(?:Agents|Daemons)(?:\/|$)|\/\.git\/hooks(?:\/|$)/;
/** Written to, a repository's own configuration names commands git runs later (core.fsmonitor, aliases). */
const WRITE_PLACES = /\/\.git\/config$/;
/** Programs that write the files named by all their operands, or by the last one only. */
const WRITE_ALL = new Set(["tee", "sed", "truncate", "touch"]);
const WRITE_LAST = new Set(["cp", "mv", "ln", "install", "rsync"]);

/** What `git [-C dir] [-c k=v] config ...` persists, if it writes (not `--get` or `--list`). */
function gitConfigWrite(args: readonly string[]): string | undefined {
  const sub = args.findIndex((a, i) => !a.startsWith("-") && !["-C", "-c"].includes(args[i - 1] ?? ""));
  if (args[sub] !== "config") return undefined;
  const rest = args.slice(sub + 1);
  if (rest.some((a) => GIT_CONFIG_READ.test(a) || /^(?:--unset(?:-all)?|unset|--remove-section)$/.test(a)))
    return undefined;
  if (rest.some((a) => a === "--global" || a === "--system")) {
    return "changes the global git configuration, where hooks and helpers run";
  }
  const operands = rest.filter((a, i) => !a.startsWith("-") && !GIT_CONFIG_VALUED.has(rest[i - 1] ?? ""));
  const verb = ["set", "add", "replace-all"].includes(operands[0] ?? "");
  const [key, value] = verb ? [operands[1], operands[2]] : [operands[0], operands[1]];
  if (key === undefined || value === undefined) return undefined;
  const kind = gitKeyKind(key);
  if (kind === "command" || kind === "elsewhere" || (kind === "alias" && value.startsWith("!"))) {
    return `configures ${key}, a command or code git runs in later calls`;
  }
  return undefined;
}

function writtenFiles({ name, args }: Invocation): readonly string[] {
  const operands = args.filter((a) => !a.startsWith("-"));
  if (name === "sed") return args.some((a) => /^-[a-zA-Z]*i|^--in-place/.test(a)) ? operands.slice(1) : [];
  if (WRITE_ALL.has(name)) return operands;
  if (WRITE_LAST.has(name)) return operands.slice(-1);
  if (name === "dd") return args.filter((a) => a.startsWith("of=")).map((a) => a.slice(3));
  return [];
}

function startupWrite(view: CommandView, links: readonly MadeLink[]): boolean {
  const targets = [
    ...view.redirects.filter((r) => r.op !== "<").map((r) => ({ word: r.target, cwd: r.cwd })),
    ...view.invocations.flatMap((inv) => writtenFiles(inv).map((word) => ({ word, cwd: inv.cwd }))),
    // A link made to a file is a way to write it, now or in a later call.
    ...linkSources(view),
  ];
  return targets.some(
    ({ word, cwd }) =>
      SHELL_RC.test(basename(word)) ||
      pathsOf(word, view.scope, cwd, true, links).some(
        (path) => PLACES.test(path) || WRITE_PLACES.test(path),
      ),
  );
}

export const persistence: CommandRule = (view) => {
  const links = madeLinks(view);
  for (const { name, args, cwd } of view.invocations) {
    if (name === "crontab" && !args.includes("-l")) return "installs a crontab";
    if (SCHEDULERS.has(name)) return `runs ${name}, which schedules jobs or installs services`;
    if (name === "systemctl" && args.some((a) => ENABLE.has(a))) return "enables a systemd unit";
    const git = name === "git" ? gitConfigWrite(args) : undefined;
    if (git) return git;
    const file = args
      .map(fileWord)
      .find(
        (w) => w !== undefined && pathsOf(w, view.scope, cwd, false, links).some((path) => PLACES.test(path)),
      );
    if (file) {
      return "touches a persistence location (authorized_keys, autostart, systemd, cron or git hooks)";
    }
  }
  if (startupWrite(view, links)) return "writes to a shell start-up file or a persistence location";
  return undefined;
};
