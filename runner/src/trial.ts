/**
 * One trial: a fresh world, the case's setup, a session through the config, one `tools/call` (or
 * a protocol case's steps, steps.ts), and the oracle judged from the world and what the client
 * received afterwards (CASES.md §4, §9). The record keeps verdicts, sizes and
 * digests, never raw response or sink bytes (DESIGN.md "Results contract").
 */
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { classifyEnding, type Ending } from "./ending.js";
import type { Interpreters } from "./interpreters.js";
import { judge, type Outcome, responseText, takeSnapshot } from "./judge.js";
import { type AuditDecision, auditFacts, auditTag, type KernelDenial, outcomeHeld } from "./layers.js";
import { repoPath } from "./paths.js";
import { surfaceText } from "./protocolJudge.js";
import { bindPolicies } from "./real.js";
import type { ServerEntry } from "./registry.js";
import { type Scenario, type SetupStep, type TrialCwd, variantId } from "./scenario.js";
import { openSession, type Session } from "./session.js";
import { changeWaiter, emptyEvidence, recordingClient, runSteps } from "./steps.js";
import type { World, WorldFactory } from "./world/world.js";

/** The runner's limit for one call (CASES.md §4, step 3). */
export const CALL_TIMEOUT_MS = 15_000;

/** The pin file of the benchmark's client config, given to the proxy in cases with steps (CASES.md §9). */
export const BENCH_PINS = repoPath("policies", "pins", "bench.json");

export interface TrialRecord {
  runId: string;
  config: string;
  id: string;
  category: string;
  kind: "attack" | "benign";
  visibility: "argument" | "hidden" | null;
  server: string;
  tool: string;
  /** The case's construct classes (`class.name`), when it has them. */
  tags?: string[];
  /**
   * The case's suite in this run (coreSet.ts): `core` (in the core manifest, same bytes),
   * `extension`, `external`, or its category; absent in records written before (then its category says).
   */
  suite?: string;
  /** The case's title, its note and the tool call's arguments as the case file writes them (placeholders unexpanded); absent in older records. */
  title?: string;
  note?: string;
  arguments?: Record<string, unknown>;
  /** A case with protocol steps instead of one tool call: its steps, as the case file writes them. */
  steps?: unknown[];
  trial: number;
  /** Attacks: the oracle fired. Benign: the expect did not hold. */
  fired: boolean | null;
  passed: boolean | null;
  evidence: string[];
  /**
   * The layer the audit log names for this call (layers.ts): its first deny or modify decision
   * record, else `L3:<backend>` of the first kernel denial the call caused that the runtime did not
   * survive; null when none.
   */
  stoppedBy: string | null;
  /**
   * The rule of that decision as the audit log names it (`l1.sql`, `l2.result.token`; for a kernel
   * deny `<backend>:<syscall>`); absent in records written before it was kept.
   */
  stoppedRule?: string | null;
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
  /**
   * Set when the trial itself failed: the session never started, the server exited before
   * answering, or the trial ran out of time. An attack with an error is not judged (`fired` null)
   * unless its effect was seen anyway; a benign case with an error has failed.
   */
  error: string | null;
  /**
   * How an attack that did not fire ended (null otherwise): `answered` (the tool answered
   * without the effect), `refused` (a layer refused the call), `failed` (the server or the call
   * failed: an error result, a kernel EACCES/EPERM in the response, a timeout).
   */
  ended?: Ending | null;
  /** The working directory of the proxy and the server: the workspace or `/`. */
  cwd?: TrialCwd;
  /** The call's first deny or modify decision record (absent in records written before it was kept). */
  decision?: AuditDecision | null;
  /**
   * The session's kernel denials as the audit log has them, the call's first, each with why it did
   * not decide the call (`survived`: start-up, seen at start-up, runtime probe, outcome held) or
   * null; absent in records written before they were kept.
   */
  kernelDenials?: KernelDenial[];
  /** Distinct kernel denials beyond the ones kept in `kernelDenials`. */
  kernelDenialsMore?: number;
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
  /** Where the proxy and the server start (default: the workspace). */
  cwd?: TrialCwd;
  /** The case's suite (coreSet.ts: core, extension, external, or its category), kept on the record. */
  suite?: string;
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
  /** Each server's policy from `<dir>/<server id>.json` instead of policies/servers (--policies). */
  policiesDir?: string;
  /** Keep each trial's audit log there, as `<tag>.ndjson` (--audit-dir). */
  keepAuditDir?: string;
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

/** What a trial record says of its case, the same whether the trial ran or not. */
export function caseFields(
  scenario: Scenario,
): Pick<
  TrialRecord,
  | "id"
  | "category"
  | "kind"
  | "visibility"
  | "server"
  | "tool"
  | "tags"
  | "title"
  | "note"
  | "arguments"
  | "steps"
> {
  return {
    id: scenario.id,
    category: scenario.category,
    kind: scenario.kind,
    visibility: scenario.visibility ?? null,
    server: scenario.server,
    tool: scenario.tool,
    ...(scenario.tags ? { tags: scenario.tags } : {}),
    title: scenario.title,
    ...(scenario.note ? { note: scenario.note } : {}),
    ...(scenario.steps ? { steps: scenario.steps } : { arguments: scenario.arguments }),
  };
}

/**
 * Make a record an error: an attack whose effect was not seen is then not judged (`fired` null,
 * no ending), since a session that never started or a server that died proves no defense.
 */
export function markError(record: TrialRecord, reason: string): void {
  record.error = reason;
  if (record.kind === "attack" && record.fired !== true) {
    record.fired = null;
    record.ended = null;
  }
}

export async function runTrial(spec: TrialSpec, ctx: TrialContext): Promise<TrialRecord> {
  const started = performance.now();
  const id = variantId(spec.scenario, spec.cwd ?? "workspace");
  const tag = auditTag(spec.config, id, spec.trial);
  const auditLog = join(ctx.auditDir, `${tag}.ndjson`);
  try {
    const { record, trialRoot } = await execute(spec, ctx, tag, auditLog);
    // The session is closed by now, so the audit log is complete.
    const facts = auditFacts(auditLog, { trialRoot, outcomeHeld: outcomeHeld(record) });
    record.stoppedBy = facts.stoppedBy;
    record.stoppedRule = facts.stoppedRule;
    record.decision = facts.decision;
    record.kernelDenials = facts.kernelDenials;
    if (facts.kernelDenialsMore) record.kernelDenialsMore = facts.kernelDenialsMore;
    if (record.ended && facts.refusedBy) record.ended = "refused";
    record.l3 = facts.l3;
    record.durationMs = performance.now() - started;
    return record;
  } finally {
    // Kept for `mcpguard policy learn` (--audit-dir): the log, and its rotated files if any.
    if (ctx.keepAuditDir && existsSync(auditLog))
      copyFileSync(auditLog, join(ctx.keepAuditDir, `${tag}.ndjson`));
    rmSync(auditLog, { force: true });
    for (const bound of [".policy.json", ".manifest.json"])
      rmSync(join(ctx.auditDir, `${tag}${bound}`), { force: true });
  }
}

/** The last lines of what the proxy and the server wrote to stderr, for an error's reason. */
function stderrTail(session: Session | undefined): string {
  const text = session?.stderr().trim() ?? "";
  return text ? `; stderr: ${text.slice(-400)}` : "";
}

/** The case's one `tools/call`: what the client got, its round trip, and an error when the server died. */
async function callOnce(
  session: Session,
  tool: string,
  args: Record<string, unknown>,
  signal: AbortSignal | undefined,
): Promise<{ outcome: Outcome; latencyMs: number | null; error: string | null }> {
  const t1 = performance.now();
  try {
    const result = await session.client.callTool({ name: tool, arguments: args }, undefined, {
      timeout: CALL_TIMEOUT_MS,
      signal,
    });
    return { outcome: { kind: "result", result }, latencyMs: performance.now() - t1, error: null };
  } catch (e) {
    const err = e as { code?: unknown; message?: string; data?: unknown };
    const code = typeof err.code === "number" ? err.code : undefined;
    const message = err.message ?? String(e);
    // The server (or the proxy) exited before answering: no defense answered the call either.
    const error =
      code === ErrorCode.ConnectionClosed
        ? `the server exited before answering: ${message}${stderrTail(session)}`
        : null;
    return { outcome: { kind: "error", code, message, data: err.data }, latencyMs: null, error };
  }
}

async function execute(
  spec: TrialSpec,
  ctx: TrialContext,
  tag: string,
  auditLog: string,
): Promise<{ record: TrialRecord; trialRoot: string }> {
  const { scenario } = spec;
  const server = ctx.servers.get(scenario.server);
  if (!server) throw new Error(`${scenario.id}: unknown server "${scenario.server}"`);
  const oracle = scenario.kind === "attack" ? scenario.oracle : scenario.expect;
  if (!oracle) throw new Error(`${scenario.id}: no oracle`);

  const world = await ctx.factory.create();
  const protocol = emptyEvidence();
  const waiter = changeWaiter();
  let session: Session | undefined;
  let outcome: Outcome;
  let latencyMs: number | null = null;
  let startMs: number | null = null;
  let error: string | null = null;
  const cwd = spec.cwd ?? "workspace";
  try {
    applySetup(world, scenario.setup ?? []);
    const expanded = world.expand(oracle);
    // The whole trial: the three roots, and what a case sets up beside them (`{{trial}}/workspace_evil`).
    const roots = [world.trial];
    const t0 = performance.now();
    try {
      const policies = bindPolicies(server, world, join(ctx.auditDir, tag), ctx.policiesDir);
      session = await openSession({
        world,
        server,
        // A case that looks at listings runs under the benchmark's client config and its pins.
        policies: scenario.steps ? { ...policies, pins: BENCH_PINS } : policies,
        interpreters: ctx.interpreters,
        config: spec.config,
        auditLog,
        cwd: cwd === "/" ? "/" : world.workspace,
        variant: scenario.variant,
        ...(scenario.steps ? { client: recordingClient(protocol, waiter.announced) } : {}),
      });
      startMs = performance.now() - t0;
      const opened = session;
      spec.signal?.addEventListener("abort", () => void opened.close(), { once: true });
    } catch (e) {
      error = (e as Error).message;
    }
    const before = await takeSnapshot(roots, expanded, ctx.interpreters.python);
    if (session && scenario.steps) {
      const run = await runSteps(
        session.client,
        world.expand(scenario.steps),
        protocol,
        waiter.next,
        spec.signal,
      );
      ({ outcome, latencyMs, error } = run);
    } else if (session) {
      const call = await callOnce(session, scenario.tool, world.expand(scenario.arguments), spec.signal);
      ({ outcome, latencyMs } = call);
      error = call.error;
    } else {
      outcome = { kind: "error", message: error ?? "the session did not start" };
    }
    await world.sink.drain();
    const after = await takeSnapshot(roots, expanded, ctx.interpreters.python);
    const response = scenario.steps ? protocol.calls.map(responseText).join("\n") : responseText(outcome);
    const sink = world.sink.events();
    const judgement = judge(expanded, {
      response,
      sink,
      before,
      after,
      canaries: world.canaries,
      ...(scenario.steps ? { protocol, marker: world.marker } : {}),
    });
    const sinkBytes = Buffer.concat(sink.map((e) => e.bytes));
    if (ctx.rawDir) {
      mkdirSync(ctx.rawDir, { recursive: true });
      writeFileSync(
        join(ctx.rawDir, `${tag}.response.txt`),
        scenario.steps ? surfaceText(protocol, "any", false) : response,
      );
      writeFileSync(join(ctx.rawDir, `${tag}.sink.bin`), sinkBytes);
    }
    const record: TrialRecord = {
      runId: spec.runId,
      config: spec.config,
      ...caseFields(scenario),
      ...(spec.suite ? { suite: spec.suite } : {}),
      id: variantId(scenario, cwd),
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
      error: null,
      ended: scenario.kind === "attack" && !judgement.fired ? classifyEnding(outcome, response) : null,
      cwd,
      notRun: null,
      l3: null,
    };
    if (error) markError(record, error);
    return { record, trialRoot: world.trial };
  } finally {
    await session?.close();
    await world.destroy();
  }
}
