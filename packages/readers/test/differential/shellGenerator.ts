/**
 * Command lines for the shell reader's differential test (shellDifferential.test.ts): quoting of
 * every kind, `$'...'` and `$"..."`, escapes, parameter expansions of literal values, brace
 * expansion, globs over the scratch folder's files, IFS changes, here-documents and here-strings,
 * `eval` of literals, functions, aliases, `command`/`exec`, `sh -c`/`bash -c`, wrappers (`env`,
 * `nice`, `timeout`, `xargs`), subshells, groups, pipelines, `&&`/`||`, `for` loops and
 * redirections to files. Programs are the stand-ins of the scratch PATH.
 */
import fc from "fast-check";

/** Stand-ins that only record their words. */
export const RECORDERS = ["cat", "ls", "grep", "sort", "wc", "head", "tool", "prog"];
/** Stand-ins that record their words, then exec the real program (a shell, a wrapper). */
export const PASSERS: Record<string, string> = {
  sh: "/bin/dash",
  dash: "/bin/dash",
  bash: "/bin/bash",
  env: "/usr/bin/env",
  nice: "/usr/bin/nice",
  timeout: "/usr/bin/timeout",
  xargs: "/usr/bin/xargs",
};
/** The files of the scratch folder a line runs in. */
export const FILES = ["a.txt", "b.txt", "ab.txt", "c.log", "d/e.txt", "sp ace.txt", "-n"];

const program = fc.constantFrom(...RECORDERS);
const variable = fc.constantFrom("v", "w", "u");

const plainChar = fc.constantFrom("a", "b", "x", "1", ".", "-", "_", "/", ":", ",", "=", "@", "%", "+");
const plain = fc.array(plainChar, { minLength: 1, maxLength: 4 }).map((c) => c.join(""));
const anyChar = fc.constantFrom(
  "a",
  "b",
  " ",
  "*",
  "?",
  "$",
  "\\",
  '"',
  "'",
  "`",
  "{",
  "}",
  ",",
  ";",
  "|",
  "&",
  "<",
  ">",
  "~",
  "#",
  "\t",
  "\n",
  ":",
);

/** `'...'`: anything but a single quote. */
const singleQuoted = fc
  .array(anyChar, { maxLength: 6 })
  .map((c) => `'${c.filter((x) => x !== "'").join("")}'`);

/** A parameter expansion of a variable the line may have set. */
const expansion = fc.oneof(
  variable.map((v) => `$${v}`),
  variable.map((v) => `\${${v}}`),
  fc.tuple(variable, plain).map(([v, d]) => `\${${v}:-${d}}`),
  fc.tuple(variable, plain).map(([v, d]) => `\${${v}-${d}}`),
  fc.tuple(variable, plain).map(([v, d]) => `\${${v}:+${d}}`),
  fc.tuple(variable, plain).map(([v, d]) => `\${${v}=${d}}`),
  variable.map((v) => `\${#${v}}`),
  fc
    .tuple(variable, fc.constantFrom("#", "##", "%", "%%"), fc.constantFrom("?", "*", "a", "*.", ".*", "a*"))
    .map(([v, op, p]) => `\${${v}${op}${p}}`),
  fc.tuple(variable, fc.constantFrom("0:1", "1", "1:2", "-1")).map(([v, r]) => `\${${v}:${r}}`),
  fc.tuple(variable, fc.constantFrom("a", "x", "."), plain).map(([v, a, b]) => `\${${v}/${a}/${b}}`),
  fc.constantFrom("$#", "$1", '"$@"', "$*", "$?", "$((1+2))", "$((2*3))"),
);

/** `"..."`: literal text, escapes and expansions. */
const doubleQuoted = fc
  .array(
    fc.oneof(
      plain,
      fc.constantFrom(" ", "*", "'", "{a,b}", "~", "\\$", "\\\\", '\\"', "\\a", "\\`", "\\\n", "#"),
      expansion,
    ),
    { maxLength: 3 },
  )
  .map((parts) => `"${parts.join("")}"`);

/** `$'...'`: bash's escapes (dash reads `$` and a single-quoted string). */
const ansiQuoted = fc
  .array(
    fc.constantFrom(
      "a",
      "b",
      " ",
      "\\x2f",
      "\\x41",
      "\\101",
      "\\n",
      "\\t",
      "\\'",
      "\\\\",
      "\\q",
      '"',
      "$",
      "*",
    ),
    { maxLength: 4 },
  )
  .map((parts) => `$'${parts.join("")}'`);

/** `$"..."`: bash's translated string (dash reads `$` and a double-quoted string). */
const localeQuoted = fc
  .array(fc.oneof(plain, fc.constantFrom(" ", "*"), expansion), { maxLength: 3 })
  .map((parts) => `$"${parts.join("")}"`);

const escaped = fc.constantFrom(
  "a\\ b",
  "\\*",
  "\\$v",
  "\\\\",
  "\\'",
  '\\"',
  "x\\;y",
  "\\~",
  "\\{a,b\\}",
  "a\\\nb",
);

const brace = fc.constantFrom("{a,b}", "x{1,2}y", "{a..c}", "{a,}", "{,b}x", "{a,b}{1,2}", "{a}", "{1..2}");

const glob = fc.constantFrom(
  "*.txt",
  "?.txt",
  "[ab].txt",
  "[!a]*.txt",
  "d/*",
  "*.none",
  "a*",
  "'*'.txt",
  "\\*.txt",
  "*",
  "sp*",
  "*/",
);

const other = fc.constantFrom("~", "~/x", "$(tool a)", "`tool b`", "-n", "--opt=x", "a=b", '""', "''");

/** One word: parts of any kind run together. */
const word = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: plain },
      { weight: 2, arbitrary: singleQuoted },
      { weight: 2, arbitrary: doubleQuoted },
      { weight: 2, arbitrary: expansion },
      { weight: 1, arbitrary: ansiQuoted },
      { weight: 1, arbitrary: localeQuoted },
      { weight: 1, arbitrary: escaped },
      { weight: 1, arbitrary: brace },
      { weight: 2, arbitrary: glob },
      { weight: 1, arbitrary: other },
    ),
    { minLength: 1, maxLength: 2 },
  )
  .map((parts) => parts.join(""));

/** A value to assign: no glob expands there, nor a brace. */
const value = fc.oneof(
  plain,
  singleQuoted,
  doubleQuoted,
  ansiQuoted,
  expansion,
  fc.constantFrom("'a b'", "'*.txt'", "a:b", "'a,b'", "'x y:z'"),
);

const redirect = fc.oneof(
  fc.constantFrom(
    "> o1",
    ">> o2",
    "< a.txt",
    "2> e1",
    ">| o3",
    "&> o4",
    "<> o5",
    "1>&2",
    ">/dev/null",
    "< 'sp ace.txt'",
  ),
  fc.tuple(fc.constantFrom(">", ">>", "<"), word).map(([op, w]) => `${op} ${w}`),
);

const args = fc.array(word, { maxLength: 3 }).map((w) => w.join(" "));

const simple = fc
  .tuple(
    fc.option(
      fc.tuple(variable, value).map(([v, x]) => `${v}=${x} `),
      { nil: "" },
    ),
    program,
    args,
    fc.option(redirect, { nil: "" }),
  )
  .map(([pre, p, a, r]) => `${pre}${p} ${a} ${r}`.replace(/ +/g, " ").trim());

/** A literal script for `eval`, `sh -c` or a here-document: a simple command or two. */
const inner = fc
  .tuple(program, fc.array(fc.oneof(plain, expansion, glob, brace), { maxLength: 2 }))
  .map(([p, a]) => `${p} ${a.join(" ")}`.trim());

const quote = (text: string) => `'${text.replace(/'/g, "'\\''")}'`;

const statement: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: simple },
  { weight: 2, arbitrary: fc.tuple(variable, value).map(([v, x]) => `${v}=${x}`) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "IFS=:",
      "IFS=,",
      "IFS=' '",
      "IFS=x",
      "IFS=",
      "unset v",
      "set -- p q",
      "set -f",
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        program,
        fc.constantFrom("EOF", "'EOF'", '"EOF"', "-EOF"),
        fc.array(fc.oneof(plain, expansion), { maxLength: 2 }),
      )
      .map(([p, d, body]) => `${p} <<${d}\n${body.join(" ")}\n${d.replace(/['"-]/g, "")}`),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom("sh", "bash", "dash"), fc.constantFrom("EOF", "'EOF'"), inner)
      .map(([s, d, body]) => `${s} <<${d}\n${body}\n${d.replace(/'/g, "")}`),
  },
  { weight: 1, arbitrary: fc.tuple(program, word).map(([p, w]) => `${p} <<< ${w}`) },
  { weight: 1, arbitrary: inner.map((s) => `eval ${quote(s)}`) },
  {
    weight: 1,
    arbitrary: fc.tuple(program, expansion).map(([p, e]) => `eval "${p} ${e.replace(/"/g, "")}"`),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(program, args, args)
      .map(([p, body, call]) => `f() { ${p} "$1" $2 ${body}; }; f ${call}`),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(program, plain, args)
      .map(([p, a, call]) => `alias al=${quote(`${p} ${a}`)}\nal ${call}`),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom("command", "exec", "builtin"), program, args)
      .map(([c, p, a]) => `${c} ${p} ${a}`),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom("sh", "bash", "dash"), inner, args)
      .map(([s, body, a]) => `${s} -c ${quote(`${body} "$1" $0`)} s0 ${a}`),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.constantFrom("env", "env v=1", "nice", "nice -n 1", "timeout 5", "timeout -s KILL 5", "env -u w"),
        program,
        args,
      )
      .map(([w, p, a]) => `${w} ${p} ${a}`),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.constantFrom("a b", "a\\nb", "'x y'"),
        fc.constantFrom("", "-n 1", "-I{}", "-0"),
        program,
        fc.constantFrom("", "{}", "z"),
      )
      .map(([input, o, p, a]) => `printf '%s\\n' ${input} | xargs ${o} ${p} ${a}`),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom("a b", "'*.txt' x", "{a,b}"), program)
      .map(([items, p]) => `for i in ${items}; do ${p} "$i" $i; done`),
  },
);

const block: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: statement },
  { weight: 1, arbitrary: fc.tuple(statement, statement).map(([a, b]) => `(${a}; ${b})`) },
  { weight: 1, arbitrary: fc.tuple(statement, statement).map(([a, b]) => `{ ${a}; ${b}; }`) },
  { weight: 2, arbitrary: fc.tuple(simple, simple).map(([a, b]) => `${a} | ${b}`) },
);

const joiner = fc.constantFrom("; ", " && ", " || ", "\n", " | ");

/** A command line: two to four blocks joined by `;`, `&&`, `||`, a newline or a pipe. */
export const commandLine = fc
  .tuple(block, fc.array(fc.tuple(joiner, block), { minLength: 1, maxLength: 3 }))
  .map(([first, rest]) => rest.reduce((line, [j, b]) => `${line}${j}${b}`, first));
