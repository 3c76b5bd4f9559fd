/**
 * Command arguments, read with the policy's shell parser. Substitution is refused first (what it
 * runs is only known at run time); then each technique rule looks at every program the line runs;
 * then URLs the command fetches and files it names are held to the URL and sensitive-path checks.
 */
import { parseCommand } from "@mcpguard/policy";
import type { Finding, Scope } from "../context.js";
import { describeSensitivity, display, sensitivity } from "../sensitive.js";
import { checkCommandUrl } from "../urls.js";
import { envDump } from "./envDump.js";
import { exfiltration } from "./exfiltration.js";
import { interpreter } from "./interpreter.js";
import { type Invocation, invocations, MAX_NESTED_COMMANDS } from "./invocations.js";
import { persistence } from "./persistence.js";
import { privilege } from "./privilege.js";
import { type CommandRule, type CommandView, fileWord, place } from "./view.js";

const RULES: readonly [string, CommandRule][] = [
  ["l2.command.env-dump", envDump],
  ["l2.command.privilege", privilege],
  ["l2.command.exfiltration", exfiltration],
  ["l2.command.persistence", persistence],
  ["l2.command.interpreter", interpreter],
];
const HTTP_CLIENTS = new Set(["curl", "wget", "http", "https", "xh", "aria2c"]);
const URL_WORD = /^[a-z][a-z0-9+.-]*:\/\//i;
/** A host given to an HTTP client without a scheme; a bare number is an option's value, not a host. */
const BARE_HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]*)(?::\d+)?(?:\/|$)/;
const NUMBER = /^\d+$/;

function checkUrls({ invocations, scope }: CommandView): Finding | undefined {
  for (const { name, args } of invocations) {
    for (const arg of args) {
      const word = arg.startsWith("-") && arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : arg;
      const finding = URL_WORD.test(word)
        ? checkCommandUrl(word, false, scope)
        : HTTP_CLIENTS.has(name) && BARE_HOST.test(word) && !NUMBER.test(word)
          ? checkCommandUrl(word, true, scope)
          : undefined;
      if (finding) return finding;
    }
  }
  return undefined;
}

function checkFiles({ invocations, redirects, scope }: CommandView): Finding | undefined {
  if (!scope.on("l2.path.sensitive")) return undefined;
  const named = [
    ...invocations.flatMap(({ args }) => args.map((arg) => ({ word: fileWord(arg), write: false }))),
    ...redirects.map((r) => ({ word: r.target, write: r.op !== "<" })),
  ];
  for (const { word, write } of named) {
    if (!word) continue;
    const path = place(word, scope);
    const kind = sensitivity(path, write, scope);
    if (kind) {
      return scope.finding(
        "l2.path.sensitive",
        `names ${display(path, scope)}, ${describeSensitivity(kind)}`,
      );
    }
  }
  return undefined;
}

export function checkCommand(value: string, scope: Scope): Finding | undefined {
  const parsed = parseCommand(value);
  if (parsed.substitution && scope.on("l2.command.substitution")) {
    return scope.finding(
      "l2.command.substitution",
      "substitutes the output of another command ($(...), backticks or <(...))",
    );
  }
  const found = parsed.commands.map((c) => invocations(c.argv));
  if (found.some((list) => list === undefined)) {
    return scope.finding(
      "l2.command.nesting",
      `runs more than ${MAX_NESTED_COMMANDS} programs through wrappers and find -exec, too many to check`,
    );
  }
  const view: CommandView = {
    text: value,
    invocations: (found as Invocation[][]).flat(),
    redirects: parsed.commands.flatMap((c) => c.redirects),
    scope,
  };
  for (const [rule, test] of RULES) {
    if (!scope.on(rule)) continue;
    const why = test(view);
    if (why) return scope.finding(rule, why);
  }
  return checkUrls(view) ?? checkFiles(view);
}
