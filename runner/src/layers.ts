/**
 * Which layer stopped a call, from its audit log (docs/BENCHMARK.md "Which layer stopped a call").
 *
 * The call's decision records come first: the first deny (L1, L2, the pin check, the protocol
 * guard, the proxy), else the first record that changed the result (the sanitizer's `modify`).
 * Only when no decision record acted is a kernel denial credited, and only one the call caused and
 * the runtime did not survive. A kernel denial does not decide when it is
 * - `start-up`: before the session's first decision record (the server's own start);
 * - `seen at start-up`: its target was already denied before the first call, which the server
 *   survived to answer (python reads /usr/share/locale/locale.alias at start, and so does a `date`
 *   it runs later);
 * - `runtime probe`: a read every libc or interpreter tries and goes on without (locale data,
 *   /proc files that describe the system or the process's own memory and cgroup; never
 *   /proc/<pid>/environ, cmdline or fd, which an attack reads);
 * - `outcome held`: the call did what the case wanted anyway (a benign case passed, an attack fired).
 * Every kernel denial is kept beside the credit (`kernelDenials` of the trial record), with why it
 * did not decide.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { defineCommand, UsageError } from "@mcpguard/proxy/args";
import { z } from "zod";
import { readRecords } from "./records.js";
import { DIRECT } from "./summarize.js";
import type { TrialRecord } from "./trial.js";

/** One kernel denial of a trial's session, as the audit log has it (repeats counted). */
export interface KernelDenial {
  backend: string;
  /** The syscall or LSM op the kernel refused. */
  syscall: string;
  /** What was refused: a path (the trial's root as `{{trial}}`), an address, a program. */
  target: string;
  /** r, w, rw or x for a file, when the event says. */
  access: string | null;
  count: number;
  /** `start`: before the session's first call; `call`: after it. */
  when: "start" | "call";
  /** Why this denial did not decide the call (see the module's comment), or null when it could. */
  survived: "start-up" | "seen at start-up" | "runtime probe" | "outcome held" | null;
}

/** The call's first decision record that denied or changed it. */
export interface AuditDecision {
  layer: string;
  rule: string | null;
  decision: "deny" | "modify";
}

export interface AuditFacts {
  /** The deciding layer: the decision record's, else `L3:<backend>` of the first kernel denial that decided. */
  stoppedBy: string | null;
  /** The rule of that decision (`l1.sql`, `l2.result.injection`; `<backend>:<syscall>` for the kernel). */
  stoppedRule: string | null;
  /** The first layer whose decision on the call was a deny (the kernel's events excluded). */
  refusedBy: string | null;
  /** The L3 backend of each capability, from the proxy's start event. */
  l3: Record<string, string> | null;
  decision: AuditDecision | null;
  kernelDenials: KernelDenial[];
  /** Distinct denials beyond the ones kept. */
  kernelDenialsMore: number;
}

/** Distinct kernel denials a trial record keeps; the rest are counted. */
export const MAX_KERNEL_DENIALS = 24;

/**
 * Reads that a runtime tries at start and goes on without. Locale data and /proc files describing
 * the system or the process's own memory layout and cgroup; not /proc/<pid>/environ, cmdline,
 * fd, mem or root, which hold what an attack wants.
 */
const RUNTIME_PROBES = [
  /^\/usr\/share\/locale\//,
  /^\/usr\/lib\/locale\//,
  /^\/usr\/share\/i18n\//,
  /^\/proc\/(filesystems|mounts|meminfo|cpuinfo|stat|loadavg|version|sys\/.*)$/,
  /^\/proc\/(self|thread-self|\d+)\/(cgroup|maps|smaps|mountinfo|mounts|status|stat|statm|limits|auxv)$/,
  /^\/sys\/(fs\/cgroup|devices\/system\/cpu)\//,
];

/** Whether a denial is a runtime's harmless probe: a read of one of {@link RUNTIME_PROBES}. */
export function isRuntimeProbe(target: string, access: string | null): boolean {
  if (access !== null && access !== "r") return false;
  return RUNTIME_PROBES.some((re) => re.test(target));
}

/** The fields of a kernel record that say what it is about, not which process or when. */
const NOT_TARGET = new Set([
  "time",
  "type",
  "event",
  "decision",
  "server",
  "config",
  "backend",
  "syscall",
  "op",
  "errno",
  "access",
  "pid",
  "ppid",
  "tid",
  "comm",
  "child",
  "count",
  "firstTime",
  "lastTime",
  "session",
  "seq",
  "prev",
  "mac",
  "kid",
  "anchor",
  "anchorHead",
  "prior",
  "from",
]);

type KernelLine = Record<string, unknown>;

function targetOf(event: KernelLine, trialRoot: string | undefined): string {
  const relative = (v: unknown) => {
    const s = typeof v === "string" ? v : JSON.stringify(v);
    return trialRoot && (s === trialRoot || s.startsWith(`${trialRoot}/`))
      ? `{{trial}}${s.slice(trialRoot.length)}`
      : s;
  };
  for (const name of ["path", "filename", "name"])
    if (event[name] !== undefined) return relative(event[name]);
  const rest = Object.keys(event)
    .filter((k) => !NOT_TARGET.has(k))
    .sort()
    .map((k) => `${k}=${relative(event[k])}`);
  return rest.join(" ");
}

export interface AuditFactsOptions {
  /** The trial's root, shown as `{{trial}}` in the targets. */
  trialRoot?: string;
  /** The call did what the case wanted (benign passed, attack fired): no kernel denial decided it. */
  outcomeHeld?: boolean;
}

/** {@link AuditFacts} from the lines of a trial's audit log. */
export function auditFactsOf(lines: readonly string[], options: AuditFactsOptions = {}): AuditFacts {
  const facts: AuditFacts = {
    stoppedBy: null,
    stoppedRule: null,
    refusedBy: null,
    l3: null,
    decision: null,
    kernelDenials: [],
    kernelDenialsMore: 0,
  };
  let deny: AuditDecision | null = null;
  let modify: AuditDecision | null = null;
  let called = false;
  const seenAtStart = new Set<string>();
  const byKey = new Map<string, KernelDenial>();
  for (const line of lines) {
    if (!line) continue;
    let event: KernelLine;
    try {
      event = JSON.parse(line);
    } catch {
      continue; // A torn line cannot be attributed.
    }
    if (typeof event !== "object" || event === null) continue;
    const str = (k: string) => (typeof event[k] === "string" ? (event[k] as string) : null);
    if (event.type === "lifecycle" && event.event === "start" && event.l3)
      facts.l3 = event.l3 as Record<string, string>;
    if (event.type === "decision") {
      called = true;
      const decision = str("decision");
      if (decision === "deny" || decision === "modify") {
        const found: AuditDecision = { layer: str("layer") ?? "unknown", rule: str("rule"), decision };
        if (decision === "deny") {
          deny ??= found;
          facts.refusedBy ??= found.layer;
        } else modify ??= found;
      }
    }
    if (event.type === "kernel" && event.decision === "deny") {
      const backend = str("backend") ?? "kernel";
      const syscall = str("syscall") ?? str("op") ?? str("event") ?? "?";
      const target = targetOf(event, options.trialRoot);
      const access = str("access");
      const key = JSON.stringify([backend, syscall, target, access]);
      const count = typeof event.count === "number" && event.count > 0 ? event.count : 1;
      if (!called) {
        seenAtStart.add(key);
        const at = byKey.get(key);
        if (at) at.count += count;
        else byKey.set(key, { backend, syscall, target, access, count, when: "start", survived: "start-up" });
        continue;
      }
      const callKey = `${key} call`;
      const at = byKey.get(callKey);
      if (at) {
        at.count += count;
        continue;
      }
      const survived = seenAtStart.has(key)
        ? "seen at start-up"
        : isRuntimeProbe(target, access)
          ? "runtime probe"
          : options.outcomeHeld
            ? "outcome held"
            : null;
      byKey.set(callKey, { backend, syscall, target, access, count, when: "call", survived });
    }
  }
  const denials = [...byKey.values()];
  facts.decision = deny ?? modify;
  if (facts.decision) {
    facts.stoppedBy = facts.decision.layer;
    facts.stoppedRule = facts.decision.rule;
  } else {
    const decided = denials.find((d) => d.when === "call" && d.survived === null);
    if (decided) {
      facts.stoppedBy = `L3:${decided.backend}`;
      facts.stoppedRule = `${decided.backend}:${decided.syscall}`;
    }
  }
  // The call's denials first (the ones that could decide before the ones survived), then start-up's.
  const rank = (d: KernelDenial) => (d.when === "start" ? 2 : d.survived === null ? 0 : 1);
  const ordered = denials.map((d, i) => ({ d, i })).sort((a, b) => rank(a.d) - rank(b.d) || a.i - b.i);
  facts.kernelDenials = ordered.slice(0, MAX_KERNEL_DENIALS).map((x) => x.d);
  facts.kernelDenialsMore = Math.max(0, ordered.length - MAX_KERNEL_DENIALS);
  return facts;
}

/** {@link AuditFacts} of a trial's audit log file (all empty when there is none). */
export function auditFacts(auditLog: string, options: AuditFactsOptions = {}): AuditFacts {
  const lines = existsSync(auditLog) ? readFileSync(auditLog, "utf8").split("\n") : [];
  return auditFactsOf(lines, options);
}

/** Whether the trial's call did what its case wanted: then no kernel denial stopped it. */
export function outcomeHeld(record: Pick<TrialRecord, "kind" | "fired" | "passed">): boolean {
  return record.kind === "attack" ? record.fired === true : record.passed === true;
}

/** The name `runTrial` gives a trial's audit log (and `--audit-dir` keeps it by). */
export function auditTag(config: string, id: string, trial: number): string {
  return `${config}.${id}.${trial}`.replace(/[^A-Za-z0-9._-]/g, "_");
}

/** The audit facts a trial record keeps, as check-layers reads them back. */
const RecordFacts = z.looseObject({
  decision: z
    .object({ layer: z.string(), rule: z.string().nullable(), decision: z.enum(["deny", "modify"]) })
    .nullable()
    .optional(),
  kernelDenials: z
    .array(
      z.looseObject({
        backend: z.string(),
        when: z.enum(["start", "call"]),
        survived: z.string().nullable(),
      }),
    )
    .optional(),
});

/** The layer a record's own audit facts name: its decision's, else the first kernel denial that decided. */
export function layerOfRecord(record: TrialRecord): string | null | undefined {
  const parsed = RecordFacts.safeParse(record);
  if (!parsed.success)
    throw new UsageError(
      `${record.config} ${record.id} #${record.trial}: the record's audit facts are malformed (${parsed.error.issues[0]?.path.join(".")}: ${parsed.error.issues[0]?.message})`,
    );
  const facts = parsed.data;
  if (facts.kernelDenials === undefined) return undefined; // written before the facts were kept
  if (facts.decision) return facts.decision.layer;
  const decided = facts.kernelDenials.find((d) => d.when === "call" && d.survived === null);
  return decided ? `L3:${decided.backend}` : null;
}

export interface LayerDisagreement {
  config: string;
  id: string;
  trial: number;
  stoppedBy: string | null;
  audit: string | null;
}

export interface LayerCheck {
  /** Trials checked (run, not direct). */
  checked: number;
  /** Where the audit's layer came from: the kept audit logs, or the records' own facts. */
  source: string;
  /** Trials neither a log nor the record's facts could check (records written before they were kept). */
  unchecked: number;
  disagreements: LayerDisagreement[];
}

/**
 * Every run trial's `stoppedBy` against the layer its audit log names: read again from the log
 * kept with `--audit-dir` when there is one, else from the decision and kernel denials the record keeps.
 */
export function checkLayers(records: readonly TrialRecord[], auditDir?: string): LayerCheck {
  const out: LayerCheck = {
    checked: 0,
    source: auditDir ? `the audit logs in ${auditDir}` : "the trial records' decisions and kernel denials",
    unchecked: 0,
    disagreements: [],
  };
  for (const record of records) {
    if (record.notRun || record.config === DIRECT) continue;
    let audit: string | null | undefined;
    const log = auditDir
      ? join(auditDir, `${auditTag(record.config, record.id, record.trial)}.ndjson`)
      : null;
    if (log && existsSync(log)) audit = auditFacts(log, { outcomeHeld: outcomeHeld(record) }).stoppedBy;
    else audit = layerOfRecord(record);
    if (audit === undefined) {
      out.unchecked++;
      continue;
    }
    out.checked++;
    if (audit !== record.stoppedBy)
      out.disagreements.push({
        config: record.config,
        id: record.id,
        trial: record.trial,
        stoppedBy: record.stoppedBy,
        audit,
      });
  }
  return out;
}

const CHECK = defineCommand({
  name: "mcpguard bench check-layers",
  description:
    "Count the trials of a run whose deciding layer (stoppedBy) disagrees with the layer their audit " +
    "log names: the call's decision records first, then the first kernel denial the call caused that " +
    "the runtime did not survive. Reads the audit logs kept with bench --audit-dir when given (or " +
    "<run-dir>/audit), else the decision and kernel denials each trial record keeps. Exit 1 on any " +
    "disagreement.",
  args: [["<run-dir>", "the run's output directory"]],
  options: {
    "audit-dir": { type: "string", value: "dir", help: "the audit logs kept by bench --audit-dir" },
  },
});

/** `mcpguard bench check-layers <run-dir> [--audit-dir DIR]`. */
export function main(argv: string[]): number {
  const parsed = CHECK.parse(argv);
  if (!parsed) return 0;
  const dir = resolve(parsed.positionals[0] as string);
  const given = parsed.values["audit-dir"];
  if (given !== undefined && !existsSync(given))
    throw new UsageError(`--audit-dir: no such directory: ${given}`);
  const auditDir =
    given !== undefined ? resolve(given) : existsSync(join(dir, "audit")) ? join(dir, "audit") : undefined;
  const records = readRecords(dir);
  const check = checkLayers(records, auditDir);
  for (const d of check.disagreements.slice(0, 20))
    process.stdout.write(
      `  ${d.config} ${d.id} #${d.trial}: stoppedBy ${d.stoppedBy ?? "none"}, audit log ${d.audit ?? "none"}\n`,
    );
  if (check.disagreements.length > 20)
    process.stdout.write(`  ... and ${check.disagreements.length - 20} more\n`);
  const unchecked = check.unchecked
    ? `; ${check.unchecked} not checked (records written before they kept their audit facts, and no log)`
    : "";
  process.stdout.write(
    `${check.disagreements.length} of ${check.checked} trials disagree with the audit log (from ${check.source})${unchecked}\n`,
  );
  if (check.checked === 0) {
    process.stderr.write("mcpguard bench check-layers: no trial could be checked\n");
    return 1;
  }
  return check.disagreements.length ? 1 : 0;
}
