/**
 * `l2.command.interpreter`: code the line fetches or decodes at run time and then runs, so that
 * no layer ever sees it: a download or a decoded blob piped into a shell or an interpreter
 * (`curl ... | sh`, `echo ... | base64 -d | python3`), handed to `eval`, `sh -c` or `python3 -c`
 * through a substitution (`eval "$(curl ...)"`), or given as a process substitution
 * (`bash <(curl ...)`); and a shell script sourced or run from outside the allowed directories.
 *
 * Interpreters handed code that is part of the call are L1's business, by config: read with a
 * grammar where no kernel layer confines them (C-app), left to the kernel where one does (C-full).
 */
import type { Field } from "@mcpguard/readers";
import type { Invocation } from "./invocations.js";
import type { CommandRule, CommandView } from "./view.js";
import { place } from "./view.js";

/** Programs that bring text from another host. */
const FETCHERS = new Set([
  "curl",
  "wget",
  "nc",
  "ncat",
  "netcat",
  "socat",
  "aria2c",
  "http",
  "https",
  "xh",
  "fetch",
  "lynx",
  "links",
]);
/** Programs that turn an opaque blob into text: code that the line hides from every reader. */
const DECODERS = new Set([
  "base64",
  "base32",
  "basenc",
  "xxd",
  "uudecode",
  "openssl",
  "gpg",
  "rev",
  "zcat",
  "gunzip",
  "bzcat",
  "xzcat",
  "unxz",
  "bunzip2",
  "gzip",
]);
const SHELLS = /^(?:sh|bash|zsh|dash|ksh|mksh|ash|fish|busybox)$/;
const INTERPRETERS =
  /^(?:sh|bash|zsh|dash|ksh|mksh|ash|fish|busybox|python[0-9.]*|node|nodejs|bun|deno|perl[0-9.]*|ruby[0-9.]*|php[0-9.]*|lua[0-9.]*|luajit|Rscript|osascript|tclsh|eval|source|\.)$/;

function hidden(producers: readonly string[] | undefined): string | undefined {
  for (const p of producers ?? []) {
    if (FETCHERS.has(p)) return `downloads with ${p}`;
    if (DECODERS.has(p)) return `decodes with ${p}`;
  }
  return undefined;
}

function runtimeCode(inv: Invocation): string | undefined {
  if (!INTERPRETERS.test(inv.name)) return undefined;
  const stdin = inv.source.stdin;
  if (stdin.kind === "pipe") {
    const how = hidden(stdin.producers);
    if (how) return `runs ${inv.name} on code it ${how} at run time`;
  }
  for (const argv of inv.source.argvs) {
    for (const field of argv.slice(1) as Field[]) {
      const how = hidden(field.unknown?.producers);
      if (how) return `runs ${inv.name} on code it ${how} at run time`;
    }
  }
  return undefined;
}

function outsideScript(inv: Invocation, view: CommandView): string | undefined {
  // A script relative to a folder known at run time only: L1 refuses it unless the kernel confines
  // the files, and then what the script does is confined too.
  const outside = (word: string) => {
    const path = word.includes("\u0000") ? undefined : place(word, view.scope, inv.cwd);
    return path !== undefined && !view.scope.withinRoots(path);
  };
  if ((inv.name === "source" || inv.name === ".") && inv.args[0] !== undefined && outside(inv.args[0])) {
    return "sources a file from outside the allowed directories";
  }
  if (SHELLS.test(inv.name)) {
    const script = inv.args.find((a) => !a.startsWith("-"));
    const command = inv.args.some((a) => /^-[A-Za-z]*c[A-Za-z]*$/.test(a));
    if (script !== undefined && !command && outside(script))
      return `runs a ${inv.name} script from outside the allowed directories`;
  }
  return undefined;
}

export const interpreter: CommandRule = (view) => {
  for (const inv of view.invocations) {
    const why = runtimeCode(inv) ?? outsideScript(inv, view);
    if (why) return why;
  }
  for (const dynamic of view.reading.dynamics) {
    const how = hidden(dynamic.producers);
    if (how) return `runs code it ${how} at run time`;
  }
  return undefined;
};
