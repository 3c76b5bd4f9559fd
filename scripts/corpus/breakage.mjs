#!/usr/bin/env node
/**
 * Group the benign cases a run broke by cause, per config, from a run directory made with --keep-raw:
 *
 *   mcpguard bench --suite corpus --configs C-app,C-ebpf,C-full --keep-raw --out /tmp/run
 *   node scripts/corpus/breakage.mjs /tmp/run [--config C-app] [--all-categories]
 *
 * The cause comes from what the client received (raw/<config>.<id>.<trial>.response.txt) and the
 * trial record: the refusal message of L1/L2, the sanitizer's redaction markers, the kernel's
 * "Permission denied" in the server's output, or a trial error. Paths of the trial world are written
 * as {{workspace}}, {{home}} and {{tmp}}, so that the same cause groups together. Prints Markdown.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

const args = process.argv.slice(2);
const dir = args.find((a) => !a.startsWith("--"));
if (!dir) {
  process.stderr.write(
    "usage: node scripts/corpus/breakage.mjs <run-dir> [--config NAME] [--all-categories]\n",
  );
  process.exit(2);
}
const only = args.includes("--config") ? args[args.indexOf("--config") + 1] : undefined;
const allCategories = args.includes("--all-categories");

const records = readFileSync(join(dir, "trials.ndjson"), "utf8")
  .split("\n")
  .filter(Boolean)
  .map((l) => JSON.parse(l))
  .filter((r) => r.kind === "benign" && !r.notRun && (allCategories || r.category === "benign_corpus"))
  .filter((r) => !only || r.config === only);

const normalize = (text) =>
  text
    .replace(/\/[^\s'"]*?\/t-\d+\/(workspace|home|tmp)/g, "{{$1}}")
    .replace(/\/[^\s'"]*?\/run-[A-Za-z0-9]+\//g, "{{run}}/");

function responseOf(r) {
  const file = join(dir, "raw", `${r.config}.${r.id}.${r.trial}.response.txt`);
  return existsSync(file) ? normalize(readFileSync(file, "utf8")) : "";
}

/** [cause, detail] of one failed trial. */
function causeOf(r) {
  const text = responseOf(r);
  if (r.error)
    return ["trial error (the trial itself failed)", normalize(r.error.split("\n")[0]).slice(0, 160)];
  const blocked = /Blocked by mcpguard \((L1|L2|AB)\): ([^\n]*)/.exec(text);
  if (blocked) {
    const [, layer, reason] = blocked;
    let m = /^(\S+) is not a program (\S+) may run/.exec(reason);
    if (m) return [`${layer}: program not allowed for ${m[2]}`, m[1]];
    m = /^(\S+) may not run (\w+) statements \((\w+)\)/.exec(reason);
    if (m) return [`${layer}: ${m[1]} may not run ${m[2]} statements`, m[3]];
    m = /^argument "(\w+)" contains (an? [^,]+?)(,| which|$)/.exec(reason);
    if (m) return [`${layer}: argument "${m[1]}" contains ${m[2]}`, ""];
    return [`${layer}: ${reason.replace(/"[^"]*"/g, '"…"').replace(/\{\{\w+\}\}\S*/g, "<path>")}`, ""];
  }
  if (r.stoppedBy === "sanitizer" || /\[REDACTED[^\]]*\]/.test(text)) {
    const markers = [...new Set([...text.matchAll(/\[REDACTED[^\]]*\]/g)].map((m) => m[0]))];
    return [`sanitizer: result redacted (${markers.join(", ") || "text removed"})`, ""];
  }
  // The decoded string leaves of R are whole lines; the raw JSON line holds them escaped.
  const denied = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => /Permission denied|Operation not permitted|EACCES|EPERM/.test(l) && !l.startsWith("{"));
  if (denied.length) {
    const first = denied[0];
    let m = /^\/bin\/sh: \d+: (\S+): Permission denied/.exec(first);
    if (m) return ["L3: exec of a program denied", m[1]];
    m = /^(?:find|xargs|env|timeout): [‘'`]?([^’'`:]+)[’'`]?: Permission denied/.exec(first);
    if (m) return ["L3: exec of a program denied", m[1]];
    m = /unable to access '([^']+)': Permission denied/.exec(first);
    if (m) return ["L3: read denied", m[1]];
    m = /'([^']+)'[^']*Permission denied|([^\s:'"]+): Permission denied/.exec(first);
    if (m) return ["L3: file access denied", m[1] ?? m[2]];
    return [`${r.stoppedBy ?? "kernel"}: denied`, first.slice(0, 160)];
  }
  if (/"returncode":\s*(?!0\b)\d+/.test(text)) {
    const status = /"returncode":\s*(\d+)/.exec(text)?.[1];
    const stderr = /"stderr":\s*"((?:[^"\\]|\\.)*)"/.exec(text)?.[1] ?? "";
    return [
      `${r.stoppedBy ?? "no decision recorded"}: command failed`,
      `exit ${status} ${stderr}`.trim().slice(0, 160),
    ];
  }
  if (/isError|^Error:|\nError:/.test(text)) {
    return [
      `${r.stoppedBy ?? "no decision recorded"}: tool error`,
      (/Error: [^\n]*/.exec(text)?.[0] ?? "").slice(0, 160),
    ];
  }
  return [`${r.stoppedBy ?? "no decision recorded"}: output differs from the expected`, ""];
}

const configs = [...new Set(records.map((r) => r.config))];
const lines = [];
for (const config of configs) {
  const mine = records.filter((r) => r.config === config);
  const failed = mine.filter((r) => !r.passed);
  const cases = new Set(mine.map((r) => r.id)).size;
  const failedCases = new Set(failed.map((r) => r.id));
  lines.push(
    `## ${config}: ${failedCases.size}/${cases} cases failed (${failed.length}/${mine.length} trials)`,
    "",
  );
  const groups = new Map();
  for (const r of failed) {
    const [cause, detail] = causeOf(r);
    if (!groups.has(cause)) groups.set(cause, new Map());
    const details = groups.get(cause);
    if (!details.has(detail)) details.set(detail, new Set());
    details.get(detail).add(r.id);
  }
  const size = (details) => new Set([...details.values()].flatMap((ids) => [...ids])).size;
  for (const [cause, details] of [...groups].sort(
    (a, b) => size(b[1]) - size(a[1]) || a[0].localeCompare(b[0]),
  )) {
    lines.push(`- **${cause}** (${size(details)} cases)`);
    for (const [detail, ids] of [...details].sort(
      (a, b) => b[1].size - a[1].size || a[0].localeCompare(b[0]),
    ))
      lines.push(`  - ${detail ? `\`${detail}\`: ` : ""}${[...ids].sort().join(", ")}`);
  }
  lines.push("");
}
process.stdout.write(`${lines.join("\n")}\n`);
