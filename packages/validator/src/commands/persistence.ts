/**
 * `l2.command.persistence`: ways to make code run again later, outside the tool call: scheduled
 * jobs, enabled services, global git configuration (hooks, pagers, editors), and writes into
 * shell start-up files, `authorized_keys`, autostart, systemd, cron or git hook locations.
 */
import { basename } from "node:path";
import { SHELL_RC } from "../sensitive.js";
import type { Invocation } from "./invocations.js";
import { type CommandRule, type CommandView, fileWord, place } from "./view.js";

const SCHEDULERS = new Set(["at", "batch", "launchctl", "update-rc.d", "chkconfig"]);
const ENABLE = new Set(["enable", "link", "reenable", "preset", "preset-all", "set-default"]);
const GIT_CONFIG_READ = /^(?:--get(?:-all|-regexp|-urlmatch)?|--list|-l|get|list)$/;
const PLACES =
  /(?:^|\/)authorized_keys2?$|\/\.config\/(?:autostart|systemd)(?:\/|$)|^\/etc\/(?:cron|systemd\/|init\.d\/|rc\.local|profile|ld\.so\.preload)|^\/var\/spool\/cron|\/Library\/Launch(?:Agents|Daemons)(?:\/|$)|\/\.git\/hooks(?:\/|$)/;
/** Programs that write the files named by all their operands, or by the last one only. */
const WRITE_ALL = new Set(["tee", "sed", "truncate", "touch"]);
const WRITE_LAST = new Set(["cp", "mv", "ln", "install", "rsync"]);

/** `git [-C dir] [-c k=v] config --global ...` that writes (not `--get` or `--list`). */
function globalGitConfig(args: readonly string[]): boolean {
  const sub = args.findIndex((a, i) => !a.startsWith("-") && !["-C", "-c"].includes(args[i - 1] ?? ""));
  if (args[sub] !== "config") return false;
  const rest = args.slice(sub + 1);
  return rest.some((a) => a === "--global" || a === "--system") && !rest.some((a) => GIT_CONFIG_READ.test(a));
}

function writtenFiles({ name, args }: Invocation): readonly string[] {
  const operands = args.filter((a) => !a.startsWith("-"));
  if (WRITE_ALL.has(name)) return operands;
  if (WRITE_LAST.has(name)) return operands.slice(-1);
  if (name === "dd") return args.filter((a) => a.startsWith("of=")).map((a) => a.slice(3));
  return [];
}

function startupWrite(view: CommandView): boolean {
  const targets = [
    ...view.redirects.filter((r) => r.op !== "<").map((r) => r.target),
    ...view.invocations.flatMap(writtenFiles),
  ];
  return targets.some((t) => SHELL_RC.test(basename(t)) || PLACES.test(place(t, view.scope)));
}

export const persistence: CommandRule = (view) => {
  for (const { name, args } of view.invocations) {
    if (name === "crontab" && !args.includes("-l")) return "installs a crontab";
    if (SCHEDULERS.has(name)) return `runs ${name}, which schedules jobs or installs services`;
    if (name === "systemctl" && args.some((a) => ENABLE.has(a))) return "enables a systemd unit";
    if (name === "git" && globalGitConfig(args)) {
      return "changes the global git configuration, where hooks and helpers run";
    }
    const file = args.map(fileWord).find((w) => w !== undefined && PLACES.test(place(w, view.scope)));
    if (file) {
      return "touches a persistence location (authorized_keys, autostart, systemd, cron or git hooks)";
    }
  }
  if (startupWrite(view)) return "writes to a shell start-up file or a persistence location";
  return undefined;
};
