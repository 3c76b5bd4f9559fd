/**
 * Text from a log or a server, made safe to print on a terminal: control characters (C0, DEL, C1)
 * and the characters that reorder or separate lines (bidirectional overrides and isolates, the
 * Unicode line and paragraph separators) as `\u` escapes, so a name cannot erase, rewrite or hide
 * the lines around it.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
