/**
 * Programs that take code: where it comes from (an option, a here-document, a pipe, a script
 * file), and what it may reach. Where no kernel layer confines a program (C-app), its code must be
 * read with a grammar and found to compute only: python3 (CPython's own, in a helper process:
 * python.ts, pyhelper.ts, pyast.py), node (acorn, javascript.ts), sed and awk scripts (sed.ts,
 * awk.ts), sqlite3 scripts (sqlite.ts, SQLite's grammar and the dot-commands that stay in the
 * database). perl and ruby code is refused there, for want of a grammar. Under every config the
 * files the code names literally are returned, for L1 to check like any other path.
 */
import type { Confinement } from "../confinement.js";
import type { Field, Invocation } from "../shell/index.js";
import { awkUse } from "./awk.js";
import { nodeUse } from "./javascript.js";
import { pythonUse } from "./python.js";
import { sedUse } from "./sed.js";
import { sqliteUse } from "./sqlite.js";
import { type CodeUse, confinedAll, emptyUse } from "./use.js";

export type { CodeUse } from "./use.js";

const GREP = new Set(["grep", "egrep", "fgrep", "zgrep", "rg"]);
const OTHER_INTERPRETERS =
  /^(?:perl[0-9.]*|ruby[0-9.]*|php[0-9.]*|lua[0-9.]*|luajit|Rscript|tclsh[0-9.]*|wish|osascript|jshell|irb|guile|racket|sbcl|ghci|julia)$/;

/** What a program's code reaches, by the program's name. */
export function analyzeCode(name: string, argv: Field[], inv: Invocation, confined: Confinement): CodeUse {
  if (/^python[0-9.]*$/.test(name)) return pythonUse(name, argv, inv, confined);
  if (name === "node" || name === "nodejs") return nodeUse(name, argv, inv, confined);
  if (name === "sed") return sedUse(argv, confined);
  if (/^(?:awk|gawk|mawk|nawk)$/.test(name)) return awkUse(name, argv, confined);
  if (GREP.has(name)) return grepUse(argv);
  if (OTHER_INTERPRETERS.test(name)) return otherUse(name, argv, confined);
  if (name === "make") return makeUse(argv, confined);
  if (/^sqlite3?$/.test(name)) return sqliteUse(argv, inv, confined);
  return emptyUse();
}

/** make runs the recipes of a Makefile (and its `$(shell ...)`, even with -n): code not in the call. */
function makeUse(argv: Field[], confined: Confinement): CodeUse {
  const use = emptyUse();
  const args = argv.slice(1);
  if (args.length > 0 && args.every((f) => VERSION_ONLY.has(f.text))) return use;
  if (!confinedAll(confined))
    use.refusal = "make runs the recipes of a Makefile, whose commands are not part of the call";
  return use;
}

/** grep's first operand is its pattern, unless a pattern came with -e or -f. */
function grepUse(argv: Field[]): CodeUse {
  const use = emptyUse();
  let given = false;
  for (let i = 1; i < argv.length; i++) {
    const word = (argv[i] as Field).text;
    if (word === "--") {
      if (!given) use.codeOperands.add(i + 1);
      return use;
    }
    if (/^-(?:e|f|-regexp|-file)$/.test(word)) {
      given = true;
      use.codeOperands.add(i + 1);
      i++;
    } else if (/^-[A-Za-z]*[ef]./.test(word) || /^--(?:regexp|file)=/.test(word)) given = true;
    else if (
      /^-[ABCmd]$|^--(?:context|before-context|after-context|max-count|devices|directories|binary-files|label|color|colour)$/.test(
        word,
      )
    )
      i++;
    else if (!word.startsWith("-") || word === "-") {
      if (!given) use.codeOperands.add(i);
      return use;
    }
  }
  return use;
}

const VERSION_ONLY = new Set(["--version", "-v", "-V", "--help", "-h"]);

/** perl, ruby, ...: no grammar here, so their code is refused unless the kernel confines it. */
function otherUse(name: string, argv: Field[], confined: Confinement): CodeUse {
  const use = emptyUse();
  const args = argv.slice(1);
  if (args.length > 0 && args.every((f) => VERSION_ONLY.has(f.text))) return use;
  argv.forEach((f, i) => {
    if (i > 0 && (f.text.includes(" ") || f.unknown)) use.codeOperands.add(i);
  });
  if (!confinedAll(confined)) {
    use.refusal = `${name} code is not analysed without the kernel layer: it could reach any file, program or host`;
  }
  return use;
}
