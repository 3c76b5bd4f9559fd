/**
 * A conservative reading of a POSIX shell command line, enough to name every program it runs and
 * every file it redirects to. It does not execute or expand anything: constructs whose effect only
 * the shell knows at run time (command or process substitution, parameter expansion in a command
 * position) are reported, so a caller can refuse them.
 */

export interface Redirect {
  op: ">" | ">>" | "<" | ">|" | "<>" | "&>";
  target: string;
}

export interface SimpleCommand {
  /** Leading `NAME=value` words. */
  assignments: string[];
  /** The program and its arguments, quotes removed. */
  argv: string[];
  redirects: Redirect[];
}

export interface ParsedCommand {
  commands: SimpleCommand[];
  /** `$(...)`, backticks, `<(...)` or `>(...)` appear outside single quotes. */
  substitution: boolean;
  /** `$NAME` or `${...}` appear outside single quotes. */
  expansion: boolean;
  /** Quotes that never close, or a trailing backslash. */
  malformed: boolean;
}

const OPERATORS = ["&&", "||", ";;", ";", "|", "&", "\n"];
const REDIRECTS = ["&>", ">>", ">|", "<>", ">", "<"] as const;
/** `<<<word` feeds a string; `<<WORD` and `<<-WORD` feed the lines up to WORD. Neither names a file. */
const HERE = /^<<(<|-?)[ \t]*(?:'([^']*)'|"([^"]*)"|([^\s;&|<>()]+))/;

export function parseCommand(line: string): ParsedCommand {
  const result: ParsedCommand = { commands: [], substitution: false, expansion: false, malformed: false };
  let words: string[] = [];
  let redirects: Redirect[] = [];
  let word = "";
  let inWord = false;
  let pendingRedirect: Redirect["op"] | undefined;

  const endWord = () => {
    if (!inWord) return;
    if (pendingRedirect) {
      redirects.push({ op: pendingRedirect, target: word });
      pendingRedirect = undefined;
    } else {
      words.push(word);
    }
    word = "";
    inWord = false;
  };
  const endCommand = () => {
    endWord();
    if (words.length || redirects.length) {
      const assignments: string[] = [];
      while (words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0] as string))
        assignments.push(words.shift() as string);
      result.commands.push({ assignments, argv: words, redirects });
    }
    words = [];
    redirects = [];
  };

  const heredocs: { delimiter: string; tabs: boolean }[] = [];
  let i = 0;
  while (i < line.length) {
    const ch = line[i] as string;
    const rest = line.slice(i);
    if (ch === "\n" && heredocs.length) {
      // The body of each pending here-document follows this line; none of it is a command.
      endCommand();
      i++;
      for (const doc of heredocs.splice(0)) {
        for (;;) {
          const nl = line.indexOf("\n", i);
          const bodyLine = line.slice(i, nl === -1 ? line.length : nl);
          i = nl === -1 ? line.length : nl + 1;
          if ((doc.tabs ? bodyLine.replace(/^\t+/, "") : bodyLine) === doc.delimiter || nl === -1) break;
        }
      }
      continue;
    }
    const here = HERE.exec(rest);
    if (here) {
      endWord();
      if (here[1] !== "<")
        heredocs.push({ delimiter: here[2] ?? here[3] ?? here[4] ?? "", tabs: here[1] === "-" });
      i += here[0].length;
      continue;
    }
    if (ch === "'") {
      const close = line.indexOf("'", i + 1);
      if (close === -1) {
        result.malformed = true;
        word += line.slice(i + 1);
        inWord = true;
        break;
      }
      word += line.slice(i + 1, close);
      inWord = true;
      i = close + 1;
      continue;
    }
    if (ch === '"') {
      let j = i + 1;
      let closed = false;
      while (j < line.length) {
        const c = line[j] as string;
        if (c === "\\" && j + 1 < line.length) {
          word += line[j + 1];
          j += 2;
          continue;
        }
        if (c === '"') {
          closed = true;
          break;
        }
        if (c === "`" || (c === "$" && line[j + 1] === "(")) result.substitution = true;
        else if (c === "$" && /[A-Za-z_{]/.test(line[j + 1] ?? "")) result.expansion = true;
        word += c;
        j++;
      }
      if (!closed) result.malformed = true;
      inWord = true;
      i = j + 1;
      continue;
    }
    if (ch === "\\") {
      if (i + 1 >= line.length) {
        result.malformed = true;
        break;
      }
      if (line[i + 1] !== "\n") {
        word += line[i + 1];
        inWord = true;
      }
      i += 2;
      continue;
    }
    if (rest.startsWith("$((")) {
      result.expansion = true; // arithmetic, not a command
    } else if (ch === "`" || rest.startsWith("$(") || rest.startsWith("<(") || rest.startsWith(">(")) {
      result.substitution = true;
    } else if (ch === "$" && /[A-Za-z_{0-9@*#?$!-]/.test(line[i + 1] ?? "")) {
      result.expansion = true;
    }
    if (ch === " " || ch === "\t") {
      endWord();
      i++;
      continue;
    }
    if (ch === "#" && !inWord) {
      const nl = line.indexOf("\n", i);
      i = nl === -1 ? line.length : nl;
      continue;
    }
    const redirect = REDIRECTS.find((r) => rest.startsWith(r));
    if (redirect && !(redirect === ">" && rest.startsWith(">("))) {
      // `2>`, `1>>`: a file descriptor number directly before the operator belongs to it.
      if (inWord && /^\d+$/.test(word)) {
        word = "";
        inWord = false;
      } else {
        endWord();
      }
      // `>&2` duplicates a descriptor: no file.
      const after = line.slice(i + redirect.length);
      const dup = /^&\d+|^&-/.exec(after);
      if (dup) {
        i += redirect.length + dup[0].length;
        continue;
      }
      pendingRedirect = redirect;
      i += redirect.length;
      while (line[i] === " " || line[i] === "\t") i++;
      continue;
    }
    const operator = OPERATORS.find((op) => rest.startsWith(op));
    if (operator) {
      endCommand();
      i += operator.length;
      continue;
    }
    // Subshells and groups: their insides are read as commands of their own. `(` and `)` are
    // operators wherever they stand; `{` and `}` only as words of their own.
    if (ch === "(" || ch === ")" || ((ch === "{" || ch === "}") && !inWord)) {
      endCommand();
      i++;
      continue;
    }
    word += ch;
    inWord = true;
    i++;
  }
  if (pendingRedirect && !inWord) result.malformed = true;
  endCommand();
  return result;
}
