/**
 * `mcpguard policy learn`: read a server's audit log and propose the grants its refusals needed
 * (learn.ts), as a diff per tool; `--out` writes the policy with them added.
 */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { defineCommand, UsageError } from "../args.js";
import { auditFiles } from "../audit.js";
import { headsDir } from "../auditHeads.js";
import { AuditSetupError, auditKeyPath, loadAuditKey } from "../auditKey.js";
import type { AuditRecord } from "../auditRecords.js";
import {
  applyProposals,
  type LearnResult,
  learn,
  type Proposal,
  type Refusal,
  type World,
} from "../learn.js";
import { describeDenial } from "../startupDenials.js";
import { stateHome } from "../stateHome.js";
import { terminalSafe } from "../terminal.js";
import { AUDIT_KEY, check, logFiles, readRecords } from "./audit.js";

export const LEARN = defineCommand({
  name: "mcpguard policy learn",
  description:
    "Propose the grants a server's refusals needed, from the audit log of sessions run with its " +
    "policy (a draft under C-full, used normally): per tool, the file or data folder, program, " +
    "destination or SQL class each refusal lacked, with the call that needed it, written with " +
    "{{cwd}}, {{home}} and {{tmp}} where they lie there. Never a secret location (~/.ssh, ~/.aws, " +
    "keys, browser profiles, ...), the guard's own files, or /, /home, /root or HOME whole; L2 " +
    "refusals and L1 refusals that no grant answers are listed, not proposed. Prints the proposals " +
    "as a diff; --out writes the policy with them (its draft mark kept). The log must verify " +
    "against its key.",
  options: {
    audit: {
      type: "string",
      multiple: true,
      value: "file",
      help: "the server's audit log, its rotated files read too (repeatable: several logs)",
    },
    policy: { type: "string", value: "file", help: "the policy the sessions ran with" },
    out: {
      type: "string",
      value: "file",
      help: "write the policy with the proposals added there (may be --policy itself)",
    },
    server: {
      type: "string",
      value: "name",
      help: "the server's name in the log (default: the policy's; run's --server-name if it was given)",
    },
    "include-start": {
      type: "boolean",
      help: "also propose what runtimes probe at start and do without (/proc, /sys, locales; default: listed only)",
    },
    "audit-key": AUDIT_KEY,
  },
});

/** The log's records, refused unless every line checks out against the key. */
function provenRecords(file: string, keyFile: string | undefined): AuditRecord[] {
  const files = logFiles(file);
  let key: { key: Buffer; path: string };
  try {
    key = loadAuditKey(auditKeyPath(keyFile), false);
  } catch (error) {
    if (!(error instanceof AuditSetupError)) throw error;
    throw new UsageError(
      `cannot check ${file} against its key (${error.message}): learn proposes grants only from a log it can verify; give --audit-key`,
    );
  }
  const report = check(file, key.key, files, key.path);
  const first = report.problems[0];
  if (first)
    throw new UsageError(
      `${file} does not verify (${first.file}:${first.line}: ${first.what}): learn proposes grants only from a log whose records are proven; see mcpguard audit verify`,
    );
  return readRecords(files);
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

function where(r: Refusal): string {
  return terminalSafe(`${r.by}: ${r.what} [session ${r.session.slice(0, 8)}, seq ${r.seq}]`);
}

/** The proposals as a diff per tool, then what was not proposed and what happened at start. */
export function report(server: string, result: LearnResult, added: readonly Proposal[]): string {
  const lines = [
    `policy learn: ${server}: ${plural(result.sessions, "session")}, ${plural(result.calls, "call")}, ${plural(result.refusals, "refusal")}: ${plural(added.length, "grant")} proposed`,
  ];
  const tools = [...new Set(added.map((p) => p.tool))].sort();
  for (const tool of tools) {
    lines.push(`  ${terminalSafe(tool)}`);
    for (const p of added.filter((a) => a.tool === tool)) {
      lines.push(`+   ${p.capability} ${terminalSafe(p.value)}`);
      const shown = p.because.slice(0, 3);
      for (const r of shown) lines.push(`        ${where(r)}`);
      if (p.because.length > shown.length) lines.push(`        and ${p.because.length - shown.length} more`);
    }
  }
  if (result.notProposed.length) {
    lines.push("not proposed:");
    for (const { refusal, why } of result.notProposed)
      lines.push(
        `  ${terminalSafe(`${refusal.tool ?? "(start)"}: ${refusal.by}: ${refusal.what}`)}\n      ${terminalSafe(why)}`,
      );
  }
  if (result.atStart.length) {
    lines.push("refused at start, what runtimes probe and do without (--include-start proposes them):");
    const seen = new Set<string>();
    for (const r of result.atStart) {
      if (seen.has(r.what)) continue;
      seen.add(r.what);
      lines.push(`  ${terminalSafe(`${r.by}: ${r.what}`)}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

export async function learnCommand(argv: string[]): Promise<number> {
  const parsed = LEARN.parse(argv);
  if (!parsed) return 0;
  const { values } = parsed;
  if (!values.audit?.length) throw new UsageError("--audit: the server's audit log is required");
  if (!values.policy) throw new UsageError("--policy: the policy the sessions ran with is required");
  await learnPolicy({
    audit: values.audit,
    policy: values.policy,
    out: values.out,
    server: values.server,
    includeStart: values["include-start"] === true,
    auditKey: values["audit-key"],
  });
  return 0;
}

export interface LearnRequest {
  audit: readonly string[];
  policy: string;
  out?: string | undefined;
  server?: string | undefined;
  includeStart?: boolean;
  auditKey?: string | undefined;
}

/** Learn for one policy and log (policy learn, and wrap --learn for each server): prints the diff. */
export async function learnPolicy(values: LearnRequest): Promise<{ added: number }> {
  const policyLib = await import("@mcpguard/policy");
  const { Policy } = await import("@mcpguard/policy/schema");
  const policyFile = resolve(values.policy);
  const raw = policyLib.readJson(policyFile);
  const checked = Policy.safeParse(raw);
  if (!checked.success) throw new UsageError(policyLib.formatIssues(policyFile, checked.error).join("\n"));
  const server = values.server ?? checked.data.server;
  const records = values.audit.flatMap((log) => provenRecords(log, values.auditKey));
  const { sensitivity, describeSensitivity, Scope } = await import("@mcpguard/validator");
  const keyPath = auditKeyPath(values.auditKey);
  const state = stateHome();
  const result = learn(
    records,
    {
      server,
      tools: new Map(
        Object.entries(checked.data.tools).map(([name, tool]) => [
          name,
          {
            takesPath: Object.values(tool.args).some((role) => role === "path.read" || role === "path.write"),
            reads: tool.read.length + tool.write.length > 0,
          },
        ]),
      ),
      sensitive: (path: string, write: boolean, world: World) => {
        const scope = new Scope({ cwd: world.cwd, ...(world.home ? { home: world.home } : {}), roots: [] });
        const kind = sensitivity(path, write, scope);
        return kind ? describeSensitivity(kind) : undefined;
      },
      guardPaths: [
        policyFile,
        ...(values.out ? [resolve(values.out)] : []),
        ...values.audit.flatMap((log) => auditFiles(log).map((f) => resolve(f))),
        keyPath,
        headsDir(keyPath),
        ...(state ? [state] : []),
      ],
      includeStart: values.includeStart === true,
    },
    (record) => describeDenial(record as Parameters<typeof describeDenial>[0]),
  );
  if (result.sessions === 0)
    throw new UsageError(
      `${values.audit.join(", ")} holds no session of ${server} that learn can read (none, or written before the start record named its folders); run the server with mcpguard run --policy ${values.policy} --audit-log <file> first`,
    );
  const { policy, added } = applyProposals(raw as { tools: Record<string, object> }, result.proposals);
  process.stdout.write(report(server, result, added));
  if (values.out) {
    // What is written must load: the proposals pass the schema as the policy does.
    const valid = Policy.safeParse(policy);
    if (!valid.success) throw new UsageError(policyLib.formatIssues(values.out, valid.error).join("\n"));
    writeFileSync(values.out, `${JSON.stringify(policy, null, 2)}\n`);
    const draft =
      (policy as { draft?: unknown }).draft === true ? ' (still "draft": review, then remove the mark)' : "";
    process.stderr.write(`wrote ${values.out} with ${plural(added.length, "grant")} added${draft}\n`);
  }
  return { added: added.length };
}
