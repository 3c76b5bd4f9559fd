/**
 * One trial: a fresh world, the case's setup, a session through the config, one `tools/call`, and
 * the oracle judged from the world afterwards (CASES.md §4). The record keeps verdicts, sizes and
 * digests, never raw response or sink bytes (DESIGN.md "Results contract").
 */
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Interpreters } from "./interpreters.js";
import { judge, type Outcome, responseText, takeSnapshot } from "./judge.js";
import type { ServerEntry } from "./registry.js";
import type { Scenario, SetupStep } from "./scenario.js";
import { openSession, type Session } from "./session.js";
import type { World, WorldFactory } from "./world/world.js";

/** The runner's limit for one call (CASES.md §4, step 3). */
export const CALL_TIMEOUT_MS = 15_000;

export interface TrialRecord {
  runId: string;
  config: string;
  id: string;
  category: string;
  kind: "attack" | "benign";
  visibility: "argument" | "hidden" | null;
  server: string;
  tool: string;
  trial: number;
  /** Attacks: the oracle fired. Benign: the expect did not hold. */
  fired: boolean | null;
  passed: boolean | null;
  evidence: string[];
  /** The layer whose deny decision the audit log shows for this call, if any. */
  stoppedBy: string | null;
  isError: boolean;
  /** The call's round trip as the client saw it. */
  latencyMs: number | null;
  /** Spawn to `initialize` answered. */
  startMs: number | null;
  durationMs: number;
  responseBytes: number;
  responseSha256: string;
  sinkContacts: number;
  sinkBytes: number;
  sinkSha256: string;
  containment: string | null;
  /** Set when the trial itself failed (server did not start, timeout): the outcome is still judged. */
  error: string | null;
  /** Set (and nothing else measured) when the case was not run under this config, with the reason. */
  notRun: string | null;
  /** The L3 backend of each capability under this config (configs with L3). */
  l3: Record<string, string> | null;
}

export interface TrialSpec {
  runId: string;
  scenario: Scenario;
  config: string;
  trial: number;
  /** Aborting kills the trial's processes; the trial is still judged and cleaned up. */
  signal?: AbortSignal;
}

export interface TrialContext {
  factory: WorldFactory;
  servers: ReadonlyMap<string, ServerEntry>;
  interpreters: Interpreters;
  /** Directory for proxy audit logs, outside every trial root. */
  auditDir: string;
  /** Where raw response and sink bytes go with --keep-raw. */
  rawDir?: string;
}

function sha256(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

/** Apply a case's setup inside the world: parents are created, written files get mode 0644. */
export function applySetup(world: World, steps: SetupStep[]): void {
  for (const raw of steps) {
    const step = world.expand(raw);
    const target =
      "write" in step
        ? step.write
        : "mkdir" in step
          ? step.mkdir
          : "symlink" in step
            ? step.symlink
            : step.chmod;
    if (!target.startsWith(`${world.trial}/`))
      throw new Error(`setup path escapes the trial: ${JSON.stringify(raw)}`);
    if ("write" in step) {
      mkdirSync(dirname(step.write), { recursive: true });
      writeFileSync(step.write, step.content);
      chmodSync(step.write, 0o644);
    } else if ("mkdir" in step) {
      mkdirSync(step.mkdir, { recursive: true });
    } else if ("symlink" in step) {
      mkdirSync(dirname(step.symlink), { recursive: true });
      symlinkSync(step.target, step.symlink);
    } else {
      chmodSync(step.chmod, Number.parseInt(step.mode, 8));
    }
  }
}

interface AuditFacts {
  /**
   * The layer the audit log shows acting on the call: the first that denied it (a kernel deny
   * counts from the moment the call was let through, not during the server's start-up), else the
   * first that changed its result (the sanitizer), else none.
   */
  stoppedBy: string | null;
  /** The L3 backend of each capability, from the proxy's start event. */
  l3: Record<string, string> | null;
}

function auditFacts(auditLog: string): AuditFacts {
  const facts: AuditFacts = { stoppedBy: null, l3: null };
  if (!existsSync(auditLog)) return facts;
  let modified: string | null = null;
  let called = false;
  for (const line of readFileSync(auditLog, "utf8").split("\n")) {
    if (!line) continue;
    let event: {
      type?: string;
      event?: string;
      decision?: string;
      layer?: string;
      backend?: string;
      l3?: Record<string, string>;
    };
    try {
      event = JSON.parse(line);
    } catch {
      continue; // A torn line cannot be attributed.
    }
    if (event.type === "lifecycle" && event.event === "start" && event.l3) facts.l3 = event.l3;
    if (event.type === "decision") {
      called = true;
      if (event.decision === "deny") facts.stoppedBy ??= event.layer ?? "unknown";
      if (event.decision === "modify") modified ??= event.layer ?? "unknown";
    }
    if (event.type === "kernel" && event.decision === "deny" && called)
      facts.stoppedBy ??= `L3:${event.backend ?? "kernel"}`;
  }
  facts.stoppedBy ??= modified;
  return facts;
}

/** What a trial record says of its case, the same whether the trial ran or not. */
export function caseFields(
  scenario: Scenario,
): Pick<TrialRecord, "id" | "category" | "kind" | "visibility" | "server" | "tool"> {
  return {
    id: scenario.id,
    category: scenario.category,
    kind: scenario.kind,
    visibility: scenario.visibility ?? null,
    server: scenario.server,
    tool: scenario.tool,
  };
}

export async function runTrial(spec: TrialSpec, ctx: TrialContext): Promise<TrialRecord> {
  const started = performance.now();
  const tag = `${spec.config}.${spec.scenario.id}.${spec.trial}`.replace(/[^A-Za-z0-9._-]/g, "_");
  const auditLog = join(ctx.auditDir, `${tag}.ndjson`);
  try {
    const record = await execute(spec, ctx, tag, auditLog);
    // The session is closed by now, so the audit log is complete.
    const facts = auditFacts(auditLog);
    record.stoppedBy = facts.stoppedBy;
    record.l3 = facts.l3;
    record.durationMs = performance.now() - started;
    return record;
  } finally {
    rmSync(auditLog, { force: true });
  }
}

async function execute(
  spec: TrialSpec,
  ctx: TrialContext,
  tag: string,
  auditLog: string,
): Promise<TrialRecord> {
  const { scenario } = spec;
  const server = ctx.servers.get(scenario.server);
  if (!server) throw new Error(`${scenario.id}: unknown server "${scenario.server}"`);
  const oracle = scenario.kind === "attack" ? scenario.oracle : scenario.expect;
  if (!oracle) throw new Error(`${scenario.id}: no oracle`);

  const world = await ctx.factory.create();
  let session: Session | undefined;
  let outcome: Outcome;
  let latencyMs: number | null = null;
  let startMs: number | null = null;
  let error: string | null = null;
  try {
    applySetup(world, scenario.setup ?? []);
    const expanded = world.expand(oracle);
    const roots = [world.workspace, world.home, world.tmp];
    const t0 = performance.now();
    try {
      session = await openSession({
        world,
        server,
        interpreters: ctx.interpreters,
        config: spec.config,
        auditLog,
      });
      startMs = performance.now() - t0;
      const opened = session;
      spec.signal?.addEventListener("abort", () => void opened.close(), { once: true });
    } catch (e) {
      error = (e as Error).message;
    }
    const before = takeSnapshot(roots, expanded, ctx.interpreters.python);
    if (session) {
      const args = world.expand(scenario.arguments);
      const t1 = performance.now();
      try {
        const result = await session.client.callTool({ name: scenario.tool, arguments: args }, undefined, {
          timeout: CALL_TIMEOUT_MS,
          signal: spec.signal,
        });
        latencyMs = performance.now() - t1;
        outcome = { kind: "result", result };
      } catch (e) {
        const err = e as { message?: string; data?: unknown };
        outcome = { kind: "error", message: err.message ?? String(e), data: err.data };
      }
    } else {
      outcome = { kind: "error", message: error ?? "the session did not start" };
    }
    await world.sink.drain();
    const after = takeSnapshot(roots, expanded, ctx.interpreters.python);
    const response = responseText(outcome);
    const sink = world.sink.events();
    const judgement = judge(expanded, { response, sink, before, after, canaries: world.canaries });
    const sinkBytes = Buffer.concat(sink.map((e) => e.bytes));
    if (ctx.rawDir) {
      mkdirSync(ctx.rawDir, { recursive: true });
      writeFileSync(join(ctx.rawDir, `${tag}.response.txt`), response);
      writeFileSync(join(ctx.rawDir, `${tag}.sink.bin`), sinkBytes);
    }
    return {
      runId: spec.runId,
      config: spec.config,
      ...caseFields(scenario),
      trial: spec.trial,
      fired: scenario.kind === "attack" ? judgement.fired : null,
      passed: scenario.kind === "benign" ? judgement.fired : null,
      evidence: judgement.evidence,
      stoppedBy: null,
      isError:
        outcome.kind === "error" || (outcome.result as { isError?: boolean } | undefined)?.isError === true,
      latencyMs,
      startMs,
      durationMs: 0,
      responseBytes: Buffer.byteLength(response),
      responseSha256: sha256(response),
      sinkContacts: sink.length,
      sinkBytes: sinkBytes.length,
      sinkSha256: sha256(sinkBytes),
      containment: session?.containment ?? null,
      error,
      notRun: null,
      l3: null,
    };
  } finally {
    await session?.close();
    await world.destroy();
  }
}
