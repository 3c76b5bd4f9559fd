/**
 * No import cycles inside a workspace package: every package's src/ is read with the TypeScript
 * compiler's parser (imports, re-exports and `import()` of relative modules, type-only ones
 * included: a type shared by two modules lives in a module of its own), and a strongly connected
 * group of two or more modules, or a module importing itself, fails the test with its members.
 * It lives here, in the package at the bottom of the graph, and reads every sibling (packages/*).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const PACKAGES = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sourceFiles(join(dir, e.name))
      : e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")
        ? [join(dir, e.name)]
        : [],
  );
}

/** The file a relative specifier names (`./x.js` is `./x.ts`, `./dir` is `./dir/index.ts`). */
function resolveRelative(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const base = resolve(dirname(from), specifier);
  const candidates = [base.replace(/\.js$/, ".ts"), `${base}.ts`, join(base, "index.ts"), base];
  return candidates.find((c) => existsSync(c) && statSync(c).isFile());
}

/** The relative modules a file imports, re-exports or loads with `import()`. */
function importsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false);
  const specifiers: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    )
      specifiers.push(node.moduleSpecifier.text);
    else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    )
      specifiers.push(node.arguments[0].text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers.flatMap((s) => resolveRelative(file, s) ?? []);
}

/** The import cycles of a graph: its strongly connected groups of two or more (Tarjan), or a self-import. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1 || graph.get(v)?.includes(v)) found.push(group.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) connect(v);
  return found;
}

describe("import cycles", () => {
  it("finds a loop, and only a loop", () => {
    const graph = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a", "d"]],
      ["d", []],
      ["e", ["e"]],
    ]);
    expect(cycles(graph)).toEqual([["a", "b", "c"], ["e"]]);
    expect(
      cycles(
        new Map([
          ["a", ["b"]],
          ["b", []],
        ]),
      ),
    ).toEqual([]);
  });

  const packages = readdirSync(PACKAGES).filter((p) => existsSync(join(PACKAGES, p, "src")));

  it("reads every workspace package", () => {
    expect(packages).toEqual(expect.arrayContaining(["protocol", "readers", "policy", "kernel", "proxy"]));
  });

  it.each(packages)("none inside %s", (pkg) => {
    const src = join(PACKAGES, pkg, "src");
    const graph = new Map(sourceFiles(src).map((f) => [f, importsOf(f)] as const));
    const loops = cycles(graph).map((group) => group.map((f) => relative(src, f)).join(" -> "));
    expect(loops).toEqual([]);
  });
});
