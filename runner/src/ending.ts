/**
 * How an attack that did not fire ended, judged from what the client received (a layer's deny in
 * the audit log upgrades it to `refused` afterwards, in the trial). It tells a defense that stops
 * an attack by refusing it from one that stops it by breaking the server or the call.
 */
import type { Outcome } from "./judge.js";

/**
 * - `answered`: the tool answered normally, without the effect (a sanitized answer included);
 * - `refused`: a layer refused the call (mcpguard's refusal, or a deny in the audit log);
 * - `failed`: the server or the call failed: an error result from the server, a kernel EACCES or
 *   EPERM in the response, a JSON-RPC error or a timeout.
 */
export type Ending = "answered" | "refused" | "failed";

export const ENDINGS: readonly Ending[] = ["answered", "refused", "failed"];

/** The refusal the proxy sends for a call a layer denied (`Blocked by mcpguard (L1): ...`). */
const REFUSAL = /^Blocked by mcpguard \(/;
/** What a denied system call looks like once a server or a program reports it. */
const KERNEL_DENIAL = /\b(EACCES|EPERM)\b|Permission denied|Operation not permitted/;

function firstText(result: unknown): string {
  const content = (result as { content?: unknown } | undefined)?.content;
  if (!Array.isArray(content)) return "";
  const item = content[0] as { type?: unknown; text?: unknown } | undefined;
  return item?.type === "text" && typeof item.text === "string" ? item.text : "";
}

export function classifyEnding(outcome: Outcome, response: string): Ending {
  if (outcome.kind === "error") return "failed";
  const isError = (outcome.result as { isError?: unknown } | undefined)?.isError === true;
  if (isError && REFUSAL.test(firstText(outcome.result))) return "refused";
  if (isError || KERNEL_DENIAL.test(response)) return "failed";
  return "answered";
}
