/**
 * A command line as the command rules read it (from the policy's shell reading), and the word
 * helpers they share: where a word points on disk once `~` and `$HOME` are expanded, and which
 * file a word may name.
 */
import { basename, dirname, resolve } from "node:path";
import { canonicalPath } from "@mcpguard/policy";
import { type FullReading, programWords, type Redirect } from "@mcpguard/readers";
import type { Scope } from "../context.js";
import type { Invocation } from "./invocations.js";

/** A redirect, and the folder the shell is in when it opens its file (undefined: known at run time only). */
interface PlacedRedirect extends Redirect {
  cwd: string | undefined;
}

export interface CommandView {
  /** The command line (NFKC). */
  text: string;
  /** Every program and builtin it runs, through pipelines, substitutions, wrappers and nested scripts. */
  invocations: readonly Invocation[];
  redirects: readonly PlacedRedirect[];
  reading: FullReading;
  scope: Scope;
}

/** A rule returns why the command is refused, or undefined. */
export type CommandRule = (view: CommandView) => string | undefined;

const HOME_PREFIX = /^(?:~|\$HOME|\$\{HOME\})(?=\/|$)/;
const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * The absolute path a word names, `~` and `$HOME` expanded (kept as `~` when HOME is unknown),
 * relative to `cwd`, the folder the shell is in when the word is used (after the line's own `cd`s:
 * `cd .git && printf ... >> config` writes `.git/config`); the scope's folder while no `cd` moved
 * it. Undefined for a relative word where that folder is known only at run time.
 */
export function place(word: string, scope: Scope, cwd: string | undefined): string | undefined {
  const home = scope.ctx.home;
  const expanded = home ? word.replace(HOME_PREFIX, home) : word.replace(HOME_PREFIX, "~");
  if (expanded.startsWith("~")) return expanded;
  if (expanded.startsWith("/")) return resolve(expanded);
  if (cwd === undefined) return undefined;
  return resolve(cwd === scope.ctx.cwd ? scope.cwd : cwd, expanded);
}

/**
 * The paths a relative word may name where its folder is known only at run time, for the checks
 * that judge a path by what it spells: the word placed in the call's folder (where it was judged
 * before the line's cd was followed: `../../etc/shadow` from any folder deep enough), at the root
 * (`..` climbing as far as it can), and in some folder (`/…/word`); written, also in a
 * repository's `.git` and its hooks (`config`, `pre-commit`): a `cd` the line makes at run time
 * may go there.
 */
function unplaced(word: string, scope: Scope, write: boolean): string[] {
  const somewhere = `/\u0000/${word}`;
  const places = [resolve(scope.cwd, word), resolve("/", word), somewhere];
  if (!write) return places;
  const hook = GIT_HOOKS.has(basename(word)) ? [`/\u0000/.git/hooks/${basename(word)}`] : [];
  return [...places, `/\u0000/.git/${word}`, ...hook];
}

/** The names git runs as hooks (githooks(5), git 2.47): another file in `.git/hooks` never runs. */
const GIT_HOOKS = new Set([
  "applypatch-msg",
  "pre-applypatch",
  "post-applypatch",
  "pre-commit",
  "pre-merge-commit",
  "prepare-commit-msg",
  "commit-msg",
  "post-commit",
  "pre-rebase",
  "post-checkout",
  "post-merge",
  "pre-push",
  "pre-receive",
  "update",
  "proc-receive",
  "post-receive",
  "post-update",
  "reference-transaction",
  "push-to-checkout",
  "pre-auto-gc",
  "post-rewrite",
  "sendemail-validate",
  "fsmonitor-watchman",
  "p4-changelist",
  "p4-prepare-changelist",
  "p4-post-changelist",
  "p4-pre-submit",
  "post-index-change",
]);

/** Where a word of an invocation or a redirect may point: its place, or what unplaced() gives. */
function placesOf(word: string, scope: Scope, cwd: string | undefined, write: boolean): string[] {
  const path = place(word, scope, cwd);
  return path === undefined ? unplaced(word, scope, write) : [path];
}

/** Paths not resolved in the proxy's process: unplaced ones (`/\0/...`), and /proc's and /dev's. */
const PER_PROCESS = /^\/(?:proc|dev)(?:\/|$)/;
const perProcess = (path: string) => path.startsWith("/\u0000") || PER_PROCESS.test(path);

/** A link the line makes (`ln`, `cp -s`, `cp -l`), placed: a path through its name goes through its target. */
export interface MadeLink {
  name: string;
  target: string;
}

/** A link `ln`, or `cp -s`/`cp -l`, makes: where it is made (a word and the folder it is read in) and what it reaches. */
interface LinkMaking {
  /** The words of what it links to, and the link's name or the folder it goes in. */
  targets: string[];
  dest: string | undefined;
  /** `-t DIR`: the folder the links go in. */
  dirs: string[];
  cwd: string;
}

/** Each line's link makings and links, read once for all the rules that judge it. */
const makingsOf = new WeakMap<CommandView, LinkMaking[]>();
const linksOf = new WeakMap<CommandView, MadeLink[]>();

/** The link-making invocations of the line, their words read with the programs' option tables. */
function linkMakings(view: CommandView): LinkMaking[] {
  const known = makingsOf.get(view);
  if (known) return known;
  const out: LinkMaking[] = [];
  makingsOf.set(view, out);
  for (const { name, args, cwd } of view.invocations) {
    if ((name !== "ln" && name !== "cp") || cwd === undefined) continue;
    const words = programWords(
      name,
      args.map((text) => ({ text })),
    );
    if (!words) continue;
    // A cluster (`-sf`) comes as its letters, one option each.
    const has = (...flags: string[]) => words.options.some(({ option }) => flags.includes(option));
    if (name === "cp" && !has("-s", "--symbolic-link", "-l", "--link")) continue;
    const dirs = words.options
      .filter((o) => o.option === "-t" || o.option === "--target-directory")
      .map((o) => o.value?.text ?? "");
    const operands = words.operands.map((f) => f.text);
    const single = dirs.length === 0 && operands.length === 1;
    out.push({
      targets: dirs.length > 0 || single ? operands : operands.slice(0, -1),
      dest: dirs.length > 0 || single ? undefined : operands.at(-1),
      dirs,
      cwd,
    });
  }
  return out;
}

/**
 * The words of the files the line's links reach, as files it may write: a link to `.git/config` or
 * a hook, made now, is a way to write it now or in a later call (a hard link even keeps no name).
 */
export function linkSources(view: CommandView): { word: string; cwd: string }[] {
  return linkMakings(view).flatMap((m) => m.targets.map((word) => ({ word, cwd: m.cwd })));
}

/**
 * The links the line's `ln` and `cp -s`/`cp -l` invocations may make, read generously (a reading
 * that makes more links only judges more paths): each target with the last operand, and with that
 * operand as the folder it goes in (`ln -s T NAME`, `ln -s T... DIR`, `-t DIR`), or the target's
 * name in the folder `ln` runs in (`ln -s T`); a symbolic link's target read from the link's folder
 * and from the one `ln` runs in.
 */
export function madeLinks(view: CommandView): MadeLink[] {
  const known = linksOf.get(view);
  if (known) return known;
  const out: MadeLink[] = [];
  linksOf.set(view, out);
  for (const { targets, dest, dirs, cwd } of linkMakings(view)) {
    for (const target of targets) {
      const names = [
        ...(dest === undefined ? [] : [dest, `${dest}/${basename(target)}`]),
        ...dirs.map((d) => `${d}/${basename(target)}`),
        ...(dest === undefined && dirs.length === 0 ? [basename(target)] : []),
      ];
      for (const word of names) {
        const at = place(word, view.scope, cwd);
        if (at === undefined) continue;
        for (const from of new Set([dirname(at), place(".", view.scope, cwd) ?? dirname(at)])) {
          const to = place(target, view.scope, from);
          if (to !== undefined) out.push({ name: at, target: to });
        }
      }
    }
  }
  return out;
}

/**
 * Every path a word may name: its places (placesOf), each also as the real filesystem resolves it
 * (its symlinks followed, `..` as the kernel walks it), and through the links the line makes
 * (madeLinks), so a name is judged by the file it reaches, not by how it is spelt. Not followed
 * here: links on /proc or /dev, or into them (`/dev/fd/63` of a `>(...)`, `/etc/mtab`), which
 * would lead to the proxy's own descriptors, folders and mounts, not the server's: such a word is
 * judged as spelt.
 */
export function pathsOf(
  word: string,
  scope: Scope,
  cwd: string | undefined,
  write: boolean,
  links: readonly MadeLink[],
): string[] {
  const out = new Set<string>();
  const resolvePath = scope.ctx.resolvePath ?? canonicalPath;
  const add = (path: string, depth: number): void => {
    if (out.has(path)) return;
    out.add(path);
    if (!path.startsWith("/") || perProcess(path)) return;
    const real = resolvePath(path, "/");
    for (const form of [real.canonical, real.physical]) if (!perProcess(form)) out.add(form);
    if (depth >= 3) return;
    for (const link of links) {
      if (path === link.name || path.startsWith(`${link.name}/`))
        add(link.target + path.slice(link.name.length), depth + 1);
    }
  };
  for (const path of placesOf(word, scope, cwd, write)) add(path, 0);
  return [...out];
}

/**
 * The file a word may name: the word itself, the value of `name=value` and `--opt=value`, or the
 * file of `@file`. Bare options, URLs and words known only at run time name none.
 */
export function fileWord(word: string): string | undefined {
  if (word.includes("\u0000")) return undefined;
  const eq = word.indexOf("=");
  const value = eq > 0 && !word.startsWith("/") ? word.slice(eq + 1) : word;
  if (value === word && word.startsWith("-")) return undefined;
  const file = value.startsWith("@") ? value.slice(1) : value;
  return file && !URL_LIKE.test(file) ? file : undefined;
}
