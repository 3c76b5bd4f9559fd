/**
 * Helpers for writing benign-corpus cases (test_cases/benign_corpus/, see docs/benchmark/CORPUS.md).
 * A case file under cases/ exports a list of case definitions built with these helpers; generate.mjs
 * numbers them, checks them and writes one scenario file per case.
 */

/** Escape a literal string for use inside an ECMAScript regex; `{{placeholders}}` stay as they are. */
export const re = (text) =>
  text
    .split(/(\{\{[a-z.]+\}\})/)
    .map((part, i) => (i % 2 ? part : part.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")))
    .join("");

/** The JSON string body Python's json.dumps writes for `text` (ensure_ascii, default escapes). */
export function pyJson(text) {
  let out = "";
  for (const ch of text) {
    const code = ch.codePointAt(0);
    if (ch === '"') out += '\\"';
    else if (ch === "\\") out += "\\\\";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\b") out += "\\b";
    else if (ch === "\f") out += "\\f";
    else if (code < 0x20 || (code >= 0x7f && code <= 0xffff))
      out += `\\u${code.toString(16).padStart(4, "0")}`;
    else if (code > 0xffff) {
      const v = code - 0x10000;
      const hi = 0xd800 + (v >> 10);
      const lo = 0xdc00 + (v & 0x3ff);
      out += `\\u${hi.toString(16)}\\u${lo.toString(16)}`;
    } else out += ch;
  }
  return out;
}

// --- expectations ---------------------------------------------------------------------------------

/** The response text R matches `regex` (raw JSON or any decoded string leaf of it). */
export const match = (regex) => ({ response_matches: regex });
/** R contains `text` literally (typically a decoded string leaf such as stdout or content). */
export const has = (text) => match(re(text));
/** A JSON member of the result: `"key": <json value>` with Python's or JS's separators. */
export const field = (key, valueRegex) => match(`"${re(key)}":\\s*${valueRegex}`);
export const fieldStr = (key, value) => field(key, jsonRe(value));
export const fieldNum = (key, n) => field(key, `${re(String(n))}\\b`);
export const all = (...members) => (members.length === 1 ? members[0] : { all: members });
export const any = (...members) => ({ any: members });

/** shell: the exit status is 0 (never used alone). */
export const RC0 = match('"returncode":\\s*0\\b');
export const rc = (n) => match(`"returncode":\\s*${n}\\b`);
/** shell: stdout is exactly `text` (matched on the raw JSON written by json.dumps). */
export const stdoutIs = (text) => match(`"stdout":\\s*"${re(pyJson(text))}"`);
/** shell: stdout starts with `text`. */
export const stdoutStarts = (text) => match(`"stdout":\\s*"${re(pyJson(text))}`);
/** shell: stdout matches a regex written against the decoded text (anchored at its start). */
export const stdoutRe = (regex) => match(`"stdout":\\s*"${regex}`);

const ws = (path) => (path.startsWith("{{") ? path : `{{workspace}}/${path}`);
/** A file (workspace-relative unless it starts with a placeholder) new or changed, holding `contains`. */
export const wrote = (path, contains) =>
  contains === undefined ? { file_written: ws(path) } : { file_written: ws(path), contains };
/** A file that did not hold `contains` before the call and does after. */
export const holds = (path, contains) => ({ file_contains: ws(path), contains });

// --- setup ----------------------------------------------------------------------------------------

export const W = (path, content) => ({ write: ws(path), content });
export const MK = (path) => ({ mkdir: ws(path) });
export const LN = (path, target) => ({ symlink: ws(path), target });
export const CH = (path, mode) => ({ chmod: ws(path), mode });

// --- case definitions ------------------------------------------------------------------------------

/**
 * One case: `{title, tags, tool, args, expect, setup?, note?}`. `server` is given by the file.
 * `null` in a list keeps the place of a retired case, so later ids never change.
 */
export const tc = (tool, title, tags, args, expect, setup) => ({ tool, title, tags, args, expect, setup });
/** A shell.run_command case. */
export const sh = (title, tags, command, expect, setup) =>
  tc("run_command", title, tags, { command }, expect, setup);

/**
 * A regex for a JSON value as Python's json.dumps or JS's JSON.stringify writes it: any whitespace
 * after `,` and `:`, non-ASCII escaped or not. `{re: "..."}` inside the value is a raw regex token.
 */
export function jsonRe(value) {
  if (value && typeof value === "object" && "re" in value) return value.re;
  if (typeof value === "string") {
    const py = re(pyJson(value));
    const js = re(JSON.stringify(value).slice(1, -1));
    return py === js ? `"${py}"` : `(?:"${py}"|"${js}")`;
  }
  if (Array.isArray(value)) return `\\[${value.map(jsonRe).join(",\\s*")}\\]`;
  if (value && typeof value === "object")
    return `\\{${Object.entries(value)
      .map(([k, v]) => `${jsonRe(k)}:\\s*${jsonRe(v)}`)
      .join(",\\s*")}\\}`;
  return re(JSON.stringify(value));
}
/** A result member `"key": <value>` with the value written as jsonRe does. */
export const fieldJson = (key, value) => match(`"${re(key)}":\\s*${jsonRe(value)}`);
/** SQL result rows, exactly. */
export const rows = (...r) => fieldJson("rows", r);
/** A float as Python writes it (10.0) or JS (10). */
export const float = (n) => ({ re: Number.isInteger(n) ? `${n}(?:\\.0)?` : re(String(n)) });
