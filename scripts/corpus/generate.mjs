#!/usr/bin/env node
/**
 * Generate the benign corpus: test_cases/benign_corpus/<ID>.json, one scenario file per case defined
 * in scripts/corpus/cases/*.mjs (see docs/benchmark/CORPUS.md).
 *
 *   node scripts/corpus/generate.mjs            # check every case, then (re)write the files
 *   node scripts/corpus/generate.mjs --check    # check only; exit 1 on a problem
 *   node scripts/corpus/generate.mjs --tables   # also print the count tables of CORPUS.md
 *
 * Checks, before anything is written:
 * - every case has tags from the construct vocabulary and an expect with at least one member that is
 *   not just "exit status 0";
 * - no `response_matches` of an expect can be satisfied by a response that only echoes the call's
 *   arguments (a shell result with empty output, an error or a refusal quoting the arguments), so a
 *   case passes only when the tool really produced the output;
 * - every regex compiles, ids are unique, and no two cases make the same call in the same world.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { pyJson } from "./lib.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, "..", "..");
const OUT = join(ROOT, "test_cases", "benign_corpus");
const CATEGORY = "benign_corpus";
const TAG = /^[a-z][a-z0-9_]*(\.[a-z0-9_+-]+)+$/;
const RC0 = '"returncode":\\s*0\\b';

/** Construct classes: the first segment of a tag. CORPUS.md describes each. */
export const CLASSES = {
  shell: "shell grammar",
  text: "text tools",
  file: "file tools and filesystem operations",
  sys: "system facts (date, pwd, uname)",
  interp: "interpreters used to compute",
  git: "git",
  sql: "SQL",
  names: "unusual file names",
  data: "hash-, UUID- and key-like public data",
  prose: "prose about security or quoting instructions",
  app: "ordinary use of a server's own tools",
};

async function loadDefinitions() {
  const files = readdirSync(join(HERE, "cases"))
    .filter((f) => f.endsWith(".mjs"))
    .sort();
  const groups = [];
  for (const file of files) {
    const mod = await import(pathToFileURL(join(HERE, "cases", file)).href);
    groups.push({ file, server: mod.server, prefix: mod.prefix, cases: mod.cases });
  }
  return groups;
}

// --- checks --------------------------------------------------------------------------------------

const FAKE = {
  trial: "/dev/shm/mcpguard/run-Ab12Cd/t-000042",
  workspace: "/dev/shm/mcpguard/run-Ab12Cd/t-000042/workspace",
  home: "/dev/shm/mcpguard/run-Ab12Cd/t-000042/home",
  tmp: "/dev/shm/mcpguard/run-Ab12Cd/t-000042/tmp",
  "sink.host": "127.0.0.1",
  "sink.port": "40123",
  "sink.url": "http://127.0.0.1:40123",
};
const expand = (value) =>
  JSON.parse(JSON.stringify(value).replace(/\{\{([^{}]+)\}\}/g, (m, name) => FAKE[name] ?? m));

/** json.dumps(obj) with Python's default separators and ensure_ascii. */
function pyDumps(value) {
  if (typeof value === "string") return `"${pyJson(value)}"`;
  if (Array.isArray(value)) return `[${value.map(pyDumps).join(", ")}]`;
  if (value && typeof value === "object")
    return `{${Object.entries(value)
      .map(([k, v]) => `"${pyJson(k)}": ${pyDumps(v)}`)
      .join(", ")}}`;
  return JSON.stringify(value);
}

function leaves(value, out = []) {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) leaves(v, out);
  else if (value && typeof value === "object") for (const v of Object.values(value)) leaves(v, out);
  return out;
}

/** Response texts R of calls that did not work but echo the arguments back. */
function echoResponses(tool, args) {
  const texts = [];
  const asResult = (obj) => [pyDumps(obj), JSON.stringify(obj), ...leaves(obj)].join("\n");
  if (tool === "run_command") {
    const cmd = args.command;
    texts.push(asResult({ command: cmd, returncode: 0, stdout: "", stderr: "" }));
    texts.push(asResult({ command: cmd, returncode: 2, stdout: "", stderr: `sh: 1: ${cmd}: not found` }));
  }
  texts.push(asResult(args));
  const strings = leaves(args);
  texts.push(
    `Blocked by mcpguard (L2): ${JSON.stringify(args)}\n${strings.map((s) => `Error: ${s}`).join("\n")}`,
  );
  return texts;
}

function primitives(node) {
  if (node.all) return node.all.flatMap(primitives);
  if (node.any) return node.any.flatMap(primitives);
  return [node];
}

function firesOn(node, text) {
  if (node.all) return node.all.every((n) => firesOn(n, text));
  if (node.any) return node.any.some((n) => firesOn(n, text));
  if (node.response_matches !== undefined) return new RegExp(node.response_matches).test(text);
  return false; // effects on files never happen in an echo
}

function checkCase(c) {
  const problems = [];
  if (!Array.isArray(c.tags) || c.tags.length === 0) problems.push("no tags");
  for (const t of c.tags ?? []) {
    if (!TAG.test(t)) problems.push(`tag "${t}" is not class.name`);
    else if (!(t.split(".")[0] in CLASSES)) problems.push(`tag "${t}" has an unknown class`);
  }
  if (!c.title || c.title.length < 4) problems.push("no title");
  if (!c.expect || typeof c.expect !== "object") return [...problems, "no expect"];
  const prims = primitives(c.expect);
  for (const p of prims) {
    if (p.response_matches !== undefined) {
      try {
        new RegExp(p.response_matches);
      } catch (e) {
        problems.push(`bad regex ${p.response_matches}: ${e.message}`);
      }
    }
  }
  if (problems.length) return problems;
  if (!prims.some((p) => p.response_matches !== RC0))
    problems.push("expect checks only the exit status; check the output or the effect");
  const args = expand(c.args);
  const expect = expand(c.expect);
  for (const text of echoResponses(c.tool, args)) {
    if (firesOn(expect, text)) {
      problems.push("expect holds on a response that only echoes the arguments");
      break;
    }
    for (const p of primitives(expect)) {
      if (p.response_matches !== undefined && p.response_matches !== RC0 && firesOn(p, text)) {
        problems.push(
          `response_matches ${JSON.stringify(p.response_matches)} matches an echo of the arguments`,
        );
      }
    }
  }
  return [...new Set(problems)];
}

// --- generation ----------------------------------------------------------------------------------

function build(groups) {
  const scenarios = [];
  const problems = [];
  const seenCalls = new Map();
  for (const g of groups) {
    if (!g.server || !g.prefix || !Array.isArray(g.cases)) {
      problems.push(`${g.file}: must export server, prefix and cases`);
      continue;
    }
    g.cases.forEach((c, i) => {
      if (c === null) return; // a retired case keeps its number
      const id = `${g.prefix}-${String(i + 1).padStart(3, "0")}`;
      for (const p of checkCase(c)) problems.push(`${id} (${g.file}: ${c.title}): ${p}`);
      const call = JSON.stringify([g.server, c.tool, c.args, c.setup ?? []]);
      const previous = seenCalls.get(call);
      if (previous) problems.push(`${id}: the same call in the same world as ${previous}`);
      seenCalls.set(call, id);
      scenarios.push({
        id,
        category: CATEGORY,
        kind: "benign",
        title: c.title,
        server: g.server,
        tool: c.tool,
        arguments: c.args,
        ...(c.setup?.length ? { setup: c.setup } : {}),
        expect: c.expect,
        tags: c.tags,
        ...(c.note ? { note: c.note } : {}),
      });
    });
  }
  return { scenarios, problems };
}

function tables(scenarios) {
  const lines = [];
  const servers = new Map();
  for (const s of scenarios) {
    const k = `${s.server}`;
    if (!servers.has(k)) servers.set(k, new Map());
    const tools = servers.get(k);
    tools.set(s.tool, (tools.get(s.tool) ?? 0) + 1);
  }
  lines.push("| server | cases | tools (cases) |", "|---|---:|---|");
  for (const [server, tools] of servers) {
    const n = [...tools.values()].reduce((a, b) => a + b, 0);
    lines.push(`| \`${server}\` | ${n} | ${[...tools].map(([t, c]) => `${t} (${c})`).join(", ")} |`);
  }
  lines.push(`| **total** | **${scenarios.length}** | |`, "");
  lines.push("| class | what | cases | most used tags |", "|---|---|---:|---|");
  for (const [cls, what] of Object.entries(CLASSES)) {
    const inClass = scenarios.filter((s) => s.tags.some((t) => t.startsWith(`${cls}.`)));
    const tagCounts = new Map();
    for (const s of inClass)
      for (const t of s.tags) if (t.startsWith(`${cls}.`)) tagCounts.set(t, (tagCounts.get(t) ?? 0) + 1);
    const top = [...tagCounts]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .map(([t, n]) => `${t.slice(cls.length + 1)} ${n}`)
      .join(", ");
    lines.push(`| \`${cls}\` | ${what} | ${inClass.length} | ${top} |`);
  }
  lines.push("", "Per server and class (a case counts once in every class it has a tag of):", "");
  const classes = Object.keys(CLASSES);
  lines.push(`| server | ${classes.join(" | ")} |`, `|---|${classes.map(() => "---:").join("|")}|`);
  for (const server of servers.keys()) {
    const mine = scenarios.filter((s) => s.server === server);
    lines.push(
      `| \`${server}\` | ${classes
        .map((cls) => mine.filter((s) => s.tags.some((t) => t.startsWith(`${cls}.`))).length || "")
        .join(" | ")} |`,
    );
  }
  return lines.join("\n");
}

async function main() {
  const argv = process.argv.slice(2);
  const { scenarios, problems } = build(await loadDefinitions());
  if (problems.length) {
    for (const p of problems) process.stderr.write(`${p}\n`);
    process.stderr.write(`${problems.length} problem(s); nothing written\n`);
    process.exit(1);
  }
  if (argv.includes("--tables")) process.stdout.write(`${tables(scenarios)}\n`);
  if (argv.includes("--check")) {
    process.stdout.write(`${scenarios.length} cases OK\n`);
    return;
  }
  // Its own files only: the held-out parts (HO-*, HX-*) have generators of their own.
  mkdirSync(OUT, { recursive: true });
  for (const name of readdirSync(OUT)) if (/^BC-.*\.json$/.test(name)) rmSync(join(OUT, name));
  for (const s of scenarios) writeFileSync(join(OUT, `${s.id}.json`), `${JSON.stringify(s, null, 2)}\n`);
  try {
    execFileSync(join(ROOT, "node_modules", ".bin", "biome"), ["format", "--write", OUT], {
      stdio: "ignore",
    });
  } catch {
    process.stderr.write("biome is not installed here: the files are written unformatted\n");
  }
  process.stdout.write(`${scenarios.length} cases written to ${OUT}\n`);
}

await main();
