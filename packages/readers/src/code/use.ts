/**
 * What a program's code reaches (`CodeUse`), and where an interpreter's program comes from
 * (`Source`): the types and helpers every code reader shares, apart from the dispatcher (index.ts)
 * that picks a reader by program name.
 */
import type { Confinement } from "../confinement.js";
import type { Field, Invocation } from "../shell/index.js";

export interface CodeUse {
  /** Why the code is refused (C-app only): it reaches a capability, or cannot be read. */
  refusal?: string;
  /** Files the code opens by literal name. */
  files: { path: string; access: "read" | "write" | "touch" }[];
  urls: string[];
  /** Positions of argv that are code or patterns, not files. */
  codeOperands: Set<number>;
}

export function emptyUse(): CodeUse {
  return { files: [], urls: [], codeOperands: new Set() };
}

/** Whether the kernel confines everything code could reach: files, programs and the network. */
export function confinedAll(confined: Confinement): boolean {
  return confined.files && confined.exec && confined.network;
}

/** Where an interpreter's program comes from. */
export type Source =
  | { kind: "inline"; code: Field; index: number }
  | { kind: "stdin"; texts?: string[]; what: string }
  | { kind: "script"; file: Field; index: number }
  | { kind: "module"; name: Field; index: number }
  | { kind: "none" };

/** The code of each way a source may be, or why it cannot be known before the run. */
export function sourceTexts(source: Source, program: string): { texts: string[] } | { unknown: string } {
  if (source.kind === "inline") {
    if (source.code.unknown)
      return { unknown: `the ${program} code holds ${source.code.unknown.origin}, known only at run time` };
    return { texts: [source.code.text] };
  }
  if (source.kind === "stdin") {
    if (source.texts) return { texts: source.texts };
    return { unknown: `${program} reads its program from ${source.what}, which is not part of the call` };
  }
  if (source.kind === "script") {
    const name = source.file.unknown ? "named only at run time" : source.file.text;
    return { unknown: `runs the ${program} script ${name}, whose code is not part of the call` };
  }
  return { texts: [] };
}

export function stdinSource(inv: Invocation): Source {
  const stdin = inv.stdin;
  if (stdin.kind === "text")
    return stdin.texts
      ? { kind: "stdin", texts: stdin.texts, what: "" }
      : { kind: "stdin", what: "a here-document with parts known only at run time" };
  if (stdin.kind === "pipe")
    return { kind: "stdin", what: `a pipe (from ${stdin.producers.join(", ") || "another command"})` };
  if (stdin.kind === "file") return { kind: "stdin", what: "a file" };
  return { kind: "stdin", what: "the server's input" };
}
