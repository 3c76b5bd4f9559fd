/**
 * The sqlite3 shell: `sqlite3 [options] [DBFILE] [SQL...]`, or a script on its input. Its SQL is
 * read with SQLite's grammar (../sql.ts) and its dot-commands one by one. Some dot-commands and
 * SQL functions reach beyond the database file: `.shell`/`.system` run programs, `.output`,
 * `.once`, `.import`, `.read`, `.load`, `.open`, `.save`, `.backup` name other files, and ATTACH,
 * VACUUM INTO and load_extension do the same from SQL. Where the kernel does not confine files and
 * programs (C-app), the script must read, keep to the dot-commands that only format output or
 * describe the database, and hold no statement that SQL's own rules call dangerous. The database
 * file is an ordinary operand, checked by L1's path rules under every config.
 */
import type { Confinement } from "../confinement.js";
import type { Field, Invocation } from "../shell/index.js";
import { readSql } from "../sql.js";
import { type CodeUse, confinedAll, emptyUse, sourceTexts, stdinSource } from "./use.js";

/** Dot-commands that format output or describe the open database, and touch nothing else. */
const SAFE_DOT = new Set([
  "bail",
  "changes",
  "databases",
  "dbinfo",
  "dump",
  "echo",
  "eqp",
  "exit",
  "explain",
  "fullschema",
  "header",
  "headers",
  "help",
  "indexes",
  "indices",
  "mode",
  "nullvalue",
  "parameter",
  "print",
  "quit",
  "schema",
  "separator",
  "show",
  "stats",
  "tables",
  "timer",
  "width",
]);

/** Options that take the next word as their value. */
const WITH_VALUE = new Set([
  "-separator",
  "-newline",
  "-nullvalue",
  "-cmd",
  "-init",
  "-vfs",
  "-maxsize",
  "-mmap",
  "-lookaside",
  "-pagecache",
  "-heap",
]);

interface SqliteWords {
  scripts: Field[];
  init: boolean;
  archive: boolean;
  dbIndex: number | undefined;
}

function readWords(argv: Field[], use: CodeUse): SqliteWords {
  const w: SqliteWords = { scripts: [], init: false, archive: false, dbIndex: undefined };
  let options = true;
  for (let i = 1; i < argv.length; i++) {
    const word = (argv[i] as Field).text;
    if (options && word.startsWith("-") && word !== "-") {
      const name = word.replace(/^--/, "-");
      if (name === "-init") w.init = true;
      if (name === "-A" || name.startsWith("-A")) w.archive = true;
      if (name === "-cmd" && argv[i + 1]) {
        w.scripts.push(argv[i + 1] as Field);
        use.codeOperands.add(i + 1);
      }
      if (WITH_VALUE.has(name)) {
        if (name !== "-init") use.codeOperands.add(i + 1);
        i++;
      }
      continue;
    }
    options = false;
    if (w.dbIndex === undefined) w.dbIndex = i;
    else {
      w.scripts.push(argv[i] as Field);
      use.codeOperands.add(i);
    }
  }
  return w;
}

/**
 * `.parameter set NAME VALUE` puts VALUE into SQL as it is written (REPLACE INTO
 * temp.sqlite_parameters ... VALUES(NAME, VALUE)): it is an expression, run, and may call
 * writefile() or edit(). It is read as SQL like any other; a value that does not read is refused.
 */
function parameterRefusal(line: string): string | undefined {
  const m = /^\.\S+\s+(\S+)\s+\S+\s+([\s\S]*)$/.exec(line);
  if (!m || !/^set$/i.test(m[1] as string)) return undefined;
  const reading = readSql(`SELECT ${m[2]}`);
  if (!reading.ok || reading.statements.length !== 1)
    return "the sqlite3 .parameter set runs a value that does not read as one SQL expression";
  const dangerous = reading.statements[0]?.dangerous;
  return dangerous ? `the sqlite3 .parameter set runs ${dangerous.verb}: ${dangerous.reason}` : undefined;
}

/** Why a sqlite3 script may not run without the kernel layer, or undefined. */
function scriptRefusal(text: string): string | undefined {
  const sql: string[] = [];
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (!trimmed.startsWith(".")) {
      sql.push(line);
      continue;
    }
    const command = (trimmed.slice(1).split(/\s+/)[0] ?? "").toLowerCase();
    if (!SAFE_DOT.has(command))
      return `the sqlite3 dot-command .${command} may reach files or programs beyond the database`;
    const why = command === "parameter" ? parameterRefusal(trimmed) : undefined;
    if (why) return why;
  }
  const reading = readSql(sql.join("\n"));
  if (!reading.ok) return `the sqlite3 script does not parse as SQLite: ${reading.reason}`;
  const dangerous = reading.statements.find((s) => s.dangerous);
  if (dangerous?.dangerous)
    return `the sqlite3 script runs ${dangerous.dangerous.verb}: ${dangerous.dangerous.reason}`;
  return undefined;
}

export function sqliteUse(argv: Field[], inv: Invocation, confined: Confinement): CodeUse {
  const use = emptyUse();
  const w = readWords(argv, use);
  if (confinedAll(confined)) return use;
  if (w.init)
    return { ...use, refusal: "sqlite3 -init runs a script file, whose commands are not part of the call" };
  if (w.archive) return { ...use, refusal: "sqlite3 -A works on archive files named at run time" };
  const texts: string[] = [];
  for (const script of w.scripts) {
    if (script.unknown)
      return { ...use, refusal: `the sqlite3 script holds ${script.unknown.origin}, known only at run time` };
    texts.push(script.text);
  }
  if (w.scripts.length === 0) {
    const source = sourceTexts(stdinSource(inv), "sqlite3");
    if ("unknown" in source) return { ...use, refusal: source.unknown };
    texts.push(...source.texts);
  }
  for (const text of texts) {
    const why = scriptRefusal(text);
    if (why) return { ...use, refusal: why };
  }
  return use;
}
