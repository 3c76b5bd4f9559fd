/**
 * What `mcpguard run` loads before a layer asks for it: the modules the CLI and `run` import
 * statically (type-only imports and `import()` aside, through the workspace packages' sources)
 * never import zod, which only a layer's schemas and the probe's cache need (a start under C0 reads
 * neither); and the kernel layer's package imports neither node:dns nor node:crypto, which only a
 * policy that names a host and a query its resolver forwards need; nor do the CLI, `run` and the
 * policy package (with the readers under it) import node:crypto or node:worker_threads, which only
 * an audit log's MACs and a reader's code cache (after the server is released) and the Python
 * reader's helper need. At run time, the proxy's own module list when it answers initialize says the
 * same of a start under C0, C-app and C-full. The readers on that path check what they parse field by field instead (docs/ARCHITECTURE.md,
 * "Boundaries, cycles and surface").
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { expect, it } from "vitest";
import { FIXTURE, MCPGUARD, workspaceWithPolicy } from "./helpers.ts";

const PACKAGES = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** A workspace package's entry (`@mcpguard/x` or `@mcpguard/x/sub`) as its source file. */
function workspaceSource(specifier: string): string | undefined {
  const m = /^@mcpguard\/([a-z]+)(\/.+)?$/.exec(specifier);
  if (!m) return undefined;
  const manifest = JSON.parse(readFileSync(join(PACKAGES, m[1] as string, "package.json"), "utf8"));
  const entry = manifest?.exports?.[m[2] ? `.${m[2]}` : "."]?.["@mcpguard/source"];
  return typeof entry === "string" ? join(PACKAGES, m[1] as string, entry) : undefined;
}

/** Where an import leads: a source file, "zod", or a Node.js builtin by its `node:` name. */
function resolveImport(from: string, specifier: string): string | undefined {
  if (specifier === "zod" || specifier.startsWith("zod/")) return "zod";
  if (specifier.startsWith("node:")) return specifier;
  if (specifier.startsWith("@mcpguard/")) return workspaceSource(specifier);
  if (!specifier.startsWith(".")) return undefined;
  const base = resolve(dirname(from), specifier);
  return [base.replace(/\.js$/, ".ts"), `${base}.ts`, join(base, "index.ts")].find(
    (c) => existsSync(c) && statSync(c).isFile(),
  );
}

/** The modules `file` imports when it loads: no type-only import, no import(). */
function staticImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false);
  const out: string[] = [];
  for (const node of source.statements) {
    if (!(ts.isImportDeclaration(node) || ts.isExportDeclaration(node))) continue;
    if (!node.moduleSpecifier || !ts.isStringLiteral(node.moduleSpecifier)) continue;
    let typeOnly = ts.isImportDeclaration(node) ? (node.importClause?.isTypeOnly ?? false) : node.isTypeOnly;
    const clause = ts.isImportDeclaration(node) ? node.importClause : undefined;
    const bindings = clause?.namedBindings;
    if (!typeOnly && bindings && ts.isNamedImports(bindings) && !clause?.name)
      typeOnly = bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly);
    const resolved = typeOnly ? undefined : resolveImport(file, node.moduleSpecifier.text);
    if (resolved) out.push(resolved);
  }
  return out;
}

/** The chain of imports from one of `roots` to `target` (see resolveImport), or undefined when it is not reached. */
function chainTo(roots: string[], target: string): string[] | undefined {
  const from = new Map<string, string | null>(roots.map((r) => [r, null]));
  const queue = [...roots];
  while (queue.length > 0) {
    const file = queue.shift() as string;
    if (file === target) {
      const chain: string[] = [];
      for (let at: string | null | undefined = file; at; at = from.get(at))
        chain.unshift(at === target ? at : relative(PACKAGES, at));
      return chain;
    }
    if (file === "zod" || file.startsWith("node:")) continue;
    for (const next of staticImports(file)) {
      if (from.has(next)) continue;
      from.set(next, file);
      queue.push(next);
    }
  }
  return undefined;
}

it("the CLI and run load no zod before a layer asks for it", () => {
  const proxy = join(PACKAGES, "proxy", "src");
  expect(chainTo([join(proxy, "cli.ts"), join(proxy, "commands", "run.ts")], "zod")).toBeUndefined();
});

it("finds zod where a start path does import it", () => {
  expect(chainTo([join(PACKAGES, "protocol", "src", "mcp.ts")], "zod")).toEqual([
    "protocol/src/mcp.ts",
    "zod",
  ]);
});

it("the kernel layer loads node:dns and node:crypto only when it resolves a name or forwards a query", () => {
  // About 2 ms each at every kernel-layer start; a policy that names no host needs neither.
  const kernel = join(PACKAGES, "kernel", "src", "index.ts");
  for (const builtin of ["node:dns/promises", "node:dns", "node:crypto"])
    expect(chainTo([kernel], builtin), builtin).toBeUndefined();
  expect(chainTo([join(PACKAGES, "kernel", "src", "loader.ts")], "node:child_process")).toEqual([
    "kernel/src/loader.ts",
    "node:child_process",
  ]);
});

it("the CLI, run and the policy package load node:crypto and node:worker_threads only on first use", () => {
  // 1-4 ms each of every start that reads a policy: an audit log's MACs need node:crypto once the
  // server is released, and only the Python reader's helper needs a worker.
  const roots = [
    join(PACKAGES, "proxy", "src", "cli.ts"),
    join(PACKAGES, "proxy", "src", "commands", "run.ts"),
    join(PACKAGES, "policy", "src", "index.ts"),
  ];
  for (const builtin of ["node:crypto", "node:worker_threads"])
    expect(chainTo(roots, builtin), builtin).toBeUndefined();
  expect(chainTo([join(PACKAGES, "proxy", "src", "commands", "wrap.ts")], "node:crypto")).toEqual([
    "proxy/src/commands/wrap.ts",
    "node:crypto",
  ]);
});

/** Builtins a start loads by the time it answers initialize, as the proxy's own module list says. */
async function loadedAtAnswer(config: string): Promise<string[]> {
  const { scratch, work, policy } = workspaceWithPolicy("mcpguard-startup-", {
    echo: { args: { text: "text" } },
  });
  try {
    // Preloaded: the list at the proxy's first write to stdout, its answer to initialize.
    const spy = `${scratch}/spy.cjs`;
    writeFileSync(
      spy,
      `const write = process.stdout.write.bind(process.stdout); let said = false;
      process.stdout.write = (...args) => {
        if (!said) { said = true; process.stderr.write("LOADED " + process.moduleLoadList.join(",") + "\\n"); }
        return write(...args);
      };`,
    );
    const args = [MCPGUARD, "run", "--config", config, "--policy", policy, "--", process.execPath, FIXTURE];
    const proxy = spawn(process.execPath, ["--require", spy, ...args], { cwd: work });
    let stderr = "";
    proxy.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    proxy.stdin.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })}\n`,
    );
    await new Promise<void>((resolve) => proxy.stdout.once("data", () => resolve()));
    proxy.stdin.end();
    await new Promise((resolve) => proxy.once("exit", resolve));
    const line = /^LOADED (.*)$/m.exec(stderr)?.[1];
    expect(line, stderr).toBeDefined();
    return (line as string).split(",").flatMap((m) => (m.startsWith("NativeModule ") ? [m.slice(13)] : []));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

const l3 = spawnSync(process.execPath, [MCPGUARD, "doctor", "--json"], { encoding: "utf8" }).status === 0;

it.each(["C0", "C-app", ...(l3 ? ["C-full"] : [])])(
  "%s: a start without an audit log has loaded no node:crypto, worker_threads or dns by its first answer",
  async (config) => {
    const loaded = await loadedAtAnswer(config);
    expect(loaded).toContain("child_process");
    for (const builtin of ["crypto", "worker_threads", "dns", "dns/promises"])
      expect(loaded, builtin).not.toContain(builtin);
  },
);
