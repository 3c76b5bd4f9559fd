/**
 * The "real servers" block of summary.json and summary.md: per config and working directory, the
 * CVE probes stopped and the benign operations broken on the third-party servers (category
 * `real`), and per server, so that the vulnerable release and the fixed one read side by side.
 */
import { countEndings, type EndingCounts, emptyEndings, isUnjudged } from "./outcomes.js";
import type { TrialRecord } from "./trial.js";

export const REAL_CATEGORY = "real";

/** Trials of one config from one working directory (and, per server, on one server). */
export interface RealCell {
  /** CVE probe trials judged, and those whose oracle did not fire. */
  probes: number;
  stopped: number;
  /** The same over the viable probes (those whose oracle fires under C0; null without C0). */
  viable: number | null;
  viableStopped: number | null;
  /** Probe trials not judged (trial errors). */
  errors: number;
  /** Benign trials, and those whose expect failed. */
  benign: number;
  broken: number;
  /** How the stopped probes ended. */
  ended: EndingCounts;
}

export interface RealServersBlock {
  /** Distinct cases (not variants), attacks and benign. */
  attacks: number;
  benign: number;
  /** The working directories the cases ran from ("workspace", "/"). */
  cwds: string[];
  configs: Record<string, Record<string, RealCell>>;
  servers: Record<string, Record<string, Record<string, RealCell>>>;
  /** Per server and config, the start-up (spawn to `initialize` answered) over both working directories. */
  startup: Record<string, Record<string, { n: number; p50: number | null }>>;
}

function emptyCell(viable: boolean): RealCell {
  return {
    probes: 0,
    stopped: 0,
    viable: viable ? 0 : null,
    viableStopped: viable ? 0 : null,
    errors: 0,
    benign: 0,
    broken: 0,
    ended: emptyEndings(),
  };
}

/** Probe variants whose oracle fired in most of their C0 trials; null when C0 did not run. */
function viableProbes(real: TrialRecord[]): Set<string> | null {
  const c0 = real.filter((r) => r.config === "C0" && r.kind === "attack" && !isUnjudged(r));
  if (c0.length === 0) return null;
  const fired = new Map<string, [number, number]>();
  for (const r of c0) {
    const [hits, all] = fired.get(r.id) ?? [0, 0];
    fired.set(r.id, [hits + (r.fired ? 1 : 0), all + 1]);
  }
  return new Set([...fired].filter(([, [hits, all]]) => hits * 2 > all).map(([id]) => id));
}

function add(cell: RealCell, r: TrialRecord, viable: Set<string> | null): void {
  if (r.kind === "attack") {
    if (isUnjudged(r)) {
      cell.errors++;
      return;
    }
    cell.probes++;
    if (!r.fired) cell.stopped++;
    if (viable?.has(r.id) && cell.viable !== null && cell.viableStopped !== null) {
      cell.viable++;
      if (!r.fired) cell.viableStopped++;
    }
    countEndings([r], cell.ended);
  } else {
    cell.benign++;
    if (!r.passed) cell.broken++;
  }
}

const baseId = (id: string) => id.replace(/@(ws|root)$/, "");

/** The block, or null when the run has no real case. `records` may hold every trial of the run. */
export function summarizeRealServers(records: TrialRecord[], direct = "direct"): RealServersBlock | null {
  const real = records.filter((r) => r.category === REAL_CATEGORY && !r.notRun && r.config !== direct);
  if (real.length === 0) return null;
  const block: RealServersBlock = {
    attacks: new Set(real.filter((r) => r.kind === "attack").map((r) => baseId(r.id))).size,
    benign: new Set(real.filter((r) => r.kind === "benign").map((r) => baseId(r.id))).size,
    cwds: [...new Set(real.map((r) => r.cwd ?? "workspace"))].sort((a, b) =>
      a === "workspace" ? -1 : b === "workspace" ? 1 : a.localeCompare(b),
    ),
    configs: {},
    servers: {},
    startup: startupTimes(real),
  };
  const viable = viableProbes(real);
  for (const r of real) {
    const cwd = r.cwd ?? "workspace";
    add(cellOf(block.configs, [r.config, cwd], viable !== null), r, viable);
    add(cellOf(block.servers, [r.server, r.config, cwd], viable !== null), r, viable);
  }
  return block;
}

/** The median start-up of each server under each config (an npx launch beside `node <script>`). */
function startupTimes(real: TrialRecord[]): RealServersBlock["startup"] {
  const samples = new Map<string, number[]>();
  for (const r of real) {
    if (r.startMs === null) continue;
    const key = `${r.server}\0${r.config}`;
    samples.set(key, [...(samples.get(key) ?? []), r.startMs]);
  }
  const out: RealServersBlock["startup"] = {};
  for (const [key, values] of samples) {
    const [server = "", config = ""] = key.split("\0");
    const sorted = [...values].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    const p50 =
      sorted.length % 2
        ? (sorted[mid] as number)
        : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
    out[server] = { ...out[server], [config]: { n: values.length, p50 } };
  }
  return out;
}

/** The cell at `keys` in nested records, made empty (with the records on the way) when missing. */
function cellOf(root: Record<string, unknown>, keys: string[], viable: boolean): RealCell {
  let node = root;
  for (const [i, key] of keys.entries()) {
    if (!Object.hasOwn(node, key)) node[key] = i === keys.length - 1 ? emptyCell(viable) : {};
    node = node[key] as Record<string, unknown>;
  }
  return node as unknown as RealCell;
}

const cwdName = (cwd: string) => (cwd === "/" ? "cwd /" : "cwd workspace");

function probeCell(c: RealCell | undefined): string {
  if (!c || c.probes + c.errors === 0) return "–";
  return `${c.stopped}/${c.probes}${c.errors ? ` (+${c.errors} errors)` : ""}`;
}

function viableCell(c: RealCell | undefined): string {
  return c && c.viable !== null && c.viable > 0 ? `${c.viableStopped}/${c.viable}` : "–";
}

function benignCell(c: RealCell | undefined): string {
  return c?.benign ? `${c.broken}/${c.benign}` : "–";
}

/** summary.md: the block as tables. `order` sorts the configs. */
export function renderRealServers(
  block: RealServersBlock | null | undefined,
  order: (names: string[]) => string[],
): string[] {
  if (!block) return [];
  const configs = order(Object.keys(block.configs));
  const lines = [
    "",
    "## Real servers (suite `real`, not part of the paper comparison)",
    "",
    `Third-party MCP servers started from node_modules: ${block.attacks} CVE probe cases and ${block.benign} benign operations, each run with the proxy and the server started from the allowed folder (cwd workspace) and from \`/\`. Viable probes: those that fire under C0 (the vulnerable release's), trials stopped / trials. All probes: the same over every probe judged, the fixed release's included. Benign: trials broken / trials. Endings of the stopped probes: answered / refused / failed.`,
    "",
    `| config | ${block.cwds.map((c) => `viable probes stopped, ${cwdName(c)} | all probes stopped | benign broken | endings`).join(" | ")} |`,
    `|---|${block.cwds.map(() => "---:|---:|---:|---:").join("|")}|`,
  ];
  for (const config of configs) {
    const cells = block.cwds.map((cwd) => {
      const c = block.configs[config]?.[cwd];
      const e = c?.ended;
      const endings = c?.stopped ? `${e?.answered ?? 0}/${e?.refused ?? 0}/${e?.failed ?? 0}` : "–";
      return `${viableCell(c)} | ${probeCell(c)} | ${benignCell(c)} | ${endings}`;
    });
    lines.push(`| ${config} | ${cells.join(" | ")} |`);
  }
  lines.push(
    "",
    "Per server (probes stopped / judged; benign broken / trials), each cell `cwd workspace · cwd /`:",
    "",
    `| server | ${configs.join(" | ")} |`,
    `|---|${configs.map(() => "---:").join("|")}|`,
  );
  for (const server of Object.keys(block.servers).sort()) {
    const cells = configs.map((config) =>
      block.cwds
        .map((cwd) => {
          const c = block.servers[server]?.[config]?.[cwd];
          if (!c) return "–";
          const parts = [];
          if (c.probes + c.errors) parts.push(`probes ${probeCell(c)}`);
          if (c.benign) parts.push(`benign ${benignCell(c)}`);
          return parts.join(", ");
        })
        .join(" · "),
    );
    lines.push(`| ${server} | ${cells.join(" | ")} |`);
  }
  lines.push(
    "",
    "Start-up per server (spawn to `initialize` answered, p50 ms over both working directories; an `npx` launch beside `node <script>`):",
    "",
    `| server | ${configs.join(" | ")} |`,
    `|---|${configs.map(() => "---:").join("|")}|`,
  );
  for (const server of Object.keys(block.startup ?? {}).sort()) {
    const cells = configs.map((config) => {
      const t = block.startup[server]?.[config];
      return t?.p50 === null || t === undefined ? "–" : t.p50.toFixed(0);
    });
    lines.push(`| ${server} | ${cells.join(" | ")} |`);
  }
  return lines;
}
