/**
 * Command arguments, read with the policy's shell reading (the shell's grammar): each technique
 * rule looks at every program and builtin the line runs, wherever it runs (a pipeline, a
 * substitution, a function, `sh -c`, `xargs`, `find -exec`); then the URLs it names and the files
 * it names, redirects to or opens from code are held to the URL and sensitive-path checks.
 * Constructs only the shell knows at run time are L1's business, by config; L2 refuses the
 * techniques visible in the arguments whatever the config.
 */
import {
  analyzeCode,
  enterableDirectory,
  type FullReading,
  readShell,
  type ShellContext,
} from "@mcpguard/readers";
import type { Finding, Scope } from "../context.js";
import { describeSensitivity, display, sensitivity } from "../sensitive.js";
import { checkCommandUrl } from "../urls.js";
import { envDump } from "./envDump.js";
import { exfiltration } from "./exfiltration.js";
import { interpreter } from "./interpreter.js";
import { invocationsOf } from "./invocations.js";
import { persistence } from "./persistence.js";
import { privilege } from "./privilege.js";
import {
  type CommandRule,
  type CommandView,
  fileWord,
  linkSources,
  madeLinks,
  pathsOf,
  place,
} from "./view.js";

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
const ALL_CONFINED = { files: true, exec: true, network: true };

function checkUrls({ invocations, scope }: CommandView): Finding | undefined {
  for (const { name, args, kind } of invocations) {
    if (kind !== "program") continue;
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

/** Files a program's code opens by literal name (python3 `open('x')`, node `fs.readFileSync('x')`, sed `r x`). */
/** A word that may name a file, whether it is written, and the folder the shell is in when it is used. */
interface NamedFile {
  word: string | undefined;
  write: boolean;
  cwd: string | undefined;
}

function codeFiles({ invocations }: CommandView): NamedFile[] {
  const out: NamedFile[] = [];
  for (const inv of invocations) {
    if (inv.kind !== "program" || inv.name === "\u0000") continue;
    for (const argv of inv.source.argvs) {
      const use = analyzeCode(inv.name, argv, inv.source, ALL_CONFINED);
      for (const file of use.files)
        out.push({ word: file.path, write: file.access === "write", cwd: inv.cwd });
    }
  }
  return out;
}

function checkFiles(view: CommandView): Finding | undefined {
  const { invocations, redirects, scope } = view;
  if (!scope.on("l2.path.sensitive")) return undefined;
  const named: NamedFile[] = [
    ...invocations
      .filter((i) => i.kind === "program" || i.name === "." || i.name === "source")
      .flatMap(({ args, cwd }) => args.map((arg) => ({ word: fileWord(arg), write: false, cwd }))),
    ...redirects.map((r) => ({ word: r.target, write: r.op !== "<", cwd: r.cwd })),
    ...linkSources(view).map(({ word, cwd }) => ({ word, write: true, cwd })),
    ...codeFiles(view),
  ];
  const links = madeLinks(view);
  for (const { word, write, cwd } of named) {
    if (!word) continue;
    const placed = place(word, scope, cwd);
    for (const path of pathsOf(word, scope, cwd, write, links)) {
      const kind = sensitivity(path, write, scope);
      if (!kind) continue;
      const shown =
        placed === undefined
          ? `${word} in a folder a cd went to at run time`
          : path === placed
            ? display(path, scope)
            : `${display(placed, scope)}, which leads to ${display(path, scope)}`;
      return scope.finding("l2.path.sensitive", `names ${shown}, ${describeSensitivity(kind)}`);
    }
  }
  return undefined;
}

const contexts = new WeakMap<object, ShellContext>();

/** The reading's context for this call: the same object for the same validator context, so readings are shared. */
function shellContext(scope: Scope): ShellContext {
  // The environment is one object for a proxy's life; the validator context is new for each call.
  const owner = scope.ctx.environment ?? scope.ctx;
  let ctx = contexts.get(owner);
  if (!ctx || ctx.cwd !== scope.ctx.cwd || ctx.home !== scope.ctx.home) {
    const env = scope.ctx.environment;
    ctx = {
      cwd: scope.ctx.cwd,
      home: scope.ctx.home,
      isDirectory: enterableDirectory,
      ...(env ? { tmp: env.tmp, present: new Set(env.present), environmentKnown: true } : {}),
    };
    contexts.set(owner, ctx);
  }
  return ctx;
}

function redirectsOf(reading: FullReading): CommandView["redirects"] {
  return reading.redirects.flatMap(({ redirect, cwd, cwdElse }) =>
    redirect.targets
      .filter((t) => !t.unknown)
      .flatMap((t) =>
        (cwdElse === undefined ? [cwd] : [cwd, cwdElse]).map((folder) => ({
          op: redirect.op,
          target: t.text,
          cwd: folder,
        })),
      ),
  );
}

export function checkCommand(value: string, scope: Scope): Finding | undefined {
  const read = readShell(value, shellContext(scope));
  // A line no reader can follow may hide any technique.
  if (!read.ok) {
    const rule = read.rule === "command.complex" ? "l2.command.nesting" : "l2.command.unparsable";
    return scope.finding(rule, read.reason.replace(/^the command /, ""));
  }
  const view: CommandView = {
    text: value,
    invocations: invocationsOf(read.reading),
    redirects: redirectsOf(read.reading),
    reading: read.reading,
    scope,
  };
  for (const [rule, test] of RULES) {
    if (!scope.on(rule)) continue;
    const why = test(view);
    if (why) return scope.finding(rule, why);
  }
  return checkUrls(view) ?? checkFiles(view);
}
