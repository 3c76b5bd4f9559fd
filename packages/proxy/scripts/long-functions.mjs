#!/usr/bin/env node
/**
 * Lists the functions of packages/proxy/src longer than a limit (default 80 lines), longest first,
 * with the TypeScript compiler's own parser: declarations, methods, arrow functions and function
 * expressions, each counted from its first line to its last. A function with a comment line of the
 * form `// long: <reason>` (or a JSDoc line `long: <reason>`) right above it is listed apart, as
 * allowed. Exits 1 when an unexplained one is found.
 *
 *   node scripts/long-functions.mjs [--limit 80] [--all]
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const limitAt = args.indexOf("--limit");
const limit = limitAt >= 0 ? Number(args[limitAt + 1]) : 80;
const all = args.includes("--all");

function* sources(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) yield path;
  }
}

/** The name a function goes by: its own, its variable's, its property's or its class member's. */
function nameOf(node) {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  if (node.name) return node.name.getText();
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText();
  if (ts.isConstructorDeclaration(node)) return "constructor";
  return "<anonymous>";
}

/** The reason written above a function (`// long: ...`), if any. */
function reasonOf(node, source) {
  // The statement that holds the function: a variable's declaration list, or the function itself.
  let holder = node;
  while (
    holder.parent &&
    (ts.isVariableDeclaration(holder.parent) ||
      ts.isVariableDeclarationList(holder.parent) ||
      ts.isVariableStatement(holder.parent) ||
      ts.isPropertyAssignment(holder.parent))
  )
    holder = holder.parent;
  const text = source.getFullText().slice(holder.getFullStart(), holder.getStart(source));
  const match = /(?:\/\/|\*)\s*long:\s*(.+)/.exec(text);
  return match?.[1]?.replace(/\s*\*\/\s*$/, "").trim();
}

const found = [];
for (const file of sources(join(root, "src"))) {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      found.push({
        where: `${relative(root, file)}:${first + 1}`,
        name: nameOf(node),
        lines,
        reason: reasonOf(node, source),
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
found.sort((a, b) => b.lines - a.lines);
const over = found.filter((f) => f.lines > limit);
const unexplained = over.filter((f) => !f.reason);
const lines = (all ? found : over).map(
  (f) => `${String(f.lines).padStart(4)}  ${f.name}  ${f.where}${f.reason ? `  (long: ${f.reason})` : ""}`,
);
lines.push(
  `${found.length} functions; ${over.length} over ${limit} lines, ${unexplained.length} without a reason`,
);
// One write: a reader that stops early (head) ends it quietly.
process.stdout.on("error", () => {});
process.stdout.write(`${lines.join("\n")}\n`);
process.exitCode = unexplained.length ? 1 : 0;
