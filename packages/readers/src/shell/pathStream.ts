/**
 * A pipe that carries only paths under known directories: `find DIR... [tests] [-print|-print0]`,
 * optionally through filters that pass whole input lines or drop them (grep without -o and
 * friends, head, tail, sort, uniq without -c, tac, shuf). Every line find prints starts with one of
 * its start directories and names a file found beneath it, so what `xargs CMD` reads from such a
 * pipe is a file within those directories, as a glob over them would be (and, like a glob, a
 * symbolic link inside is followed by CMD, where L1 holds it to the same rule as any link).
 */
import { posix } from "node:path";
import type { Field, Invocation } from "./model.js";

/** find actions that print something else than the path (-print, -print0 print the path), or run something. */
const OTHER_ACTIONS = /^-(?:printf|fprint|fprint0|fprintf|ls|fls|exec|execdir|ok|okdir|delete)$/;
/** Options of line filters that change the lines they pass: a part of a line, a count, a name. */
const CHANGES_LINES: Readonly<Record<string, RegExp>> = {
  grep: /^-(?:[A-Za-z]*[ocLlbnHZ][A-Za-z]*|-(?:only-matching|count|files-with(?:out)?-match(?:es)?|byte-offset|line-number|with-filename|null|label.*))$/,
  egrep: /^-(?:[A-Za-z]*[ocLlbnHZ][A-Za-z]*|-.*)$/,
  fgrep: /^-(?:[A-Za-z]*[ocLlbnHZ][A-Za-z]*|-.*)$/,
  head: /^-(?:[A-Za-z]*c.*|-bytes.*)$/,
  tail: /^-(?:[A-Za-z]*c.*|-bytes.*)$/,
  sort: /^-(?:[A-Za-z]*[ko].*|-key.*|-output.*|-field-separator.*|t.*)$/,
  uniq: /^-(?:[A-Za-z]*[cfsw].*|-count|-skip.*|-check-chars.*|-group.*)$/,
  tac: /^-(?:[A-Za-z]*[bsr].*|-.*)$/,
  shuf: /^-(?:[A-Za-z]*[eio].*|-echo|-input-range.*|-output.*)$/,
};

const known = (f: Field | undefined): f is Field => f !== undefined && !f.unknown && !f.pattern;

/** The start directories of a find that prints only paths, absolute; undefined otherwise. */
function findStarts(argv: readonly Field[], cwd: string): string[] | undefined {
  const starts: string[] = [];
  let i = 1;
  for (; i < argv.length; i++) {
    const f = argv[i] as Field;
    if (/^-[HLP]$/.test(f.text) || f.text === "-O3") continue;
    if (f.text.startsWith("-") || ["(", "!", ")"].includes(f.text)) break;
    if (!known(f)) return undefined;
    starts.push(posix.resolve(cwd, f.text));
  }
  for (; i < argv.length; i++) {
    const f = argv[i] as Field;
    if (!known(f)) continue;
    if (OTHER_ACTIONS.test(f.text)) return undefined;
  }
  return starts.length ? starts : [cwd];
}

function passesLines(argv: readonly Field[]): boolean {
  const name = posix.basename((argv[0] as Field).text);
  const changes = Object.hasOwn(CHANGES_LINES, name) ? CHANGES_LINES[name] : undefined;
  if (!changes) return false;
  return argv.slice(1).every((f) => known(f) && !changes.test(f.text));
}

/**
 * When the invocations that write into a pipe are such a find and filters, the directories every
 * line names a file in; undefined otherwise (and whenever a word is known only at run time).
 */
export function pathStream(writers: readonly Invocation[]): string[] | undefined {
  const [find, ...filters] = writers;
  if (
    find?.kind !== "program" ||
    find.cwd === undefined ||
    find.cwdElse !== undefined ||
    find.argvs.length !== 1
  )
    return undefined;
  const argv = find.argvs[0] as Field[];
  if (!known(argv[0]) || posix.basename(argv[0].text) !== "find") return undefined;
  const starts = findStarts(argv, find.cwd);
  if (!starts) return undefined;
  for (const filter of filters) {
    if (filter.kind !== "program" || !filter.argvs.every(passesLines)) return undefined;
  }
  return starts;
}
