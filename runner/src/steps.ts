/**
 * A protocol case's steps (CASES.md §9): after `initialize`, list, call, read, get a prompt or wait
 * for `notifications/tools/list_changed`, in order, and record everything the client received on
 * the way, the server's own requests included. The client declares sampling and elicitation and
 * answers them the same way in every trial, as a user who accepts would:
 *
 * - `sampling/createMessage`: an assistant message whose text is {@link SAMPLED_TEXT};
 * - `elicitation/create`: accept, with each field of the form filled from its default, else its
 *   first enum value, else `"bench-user"`, `true` or `1` by type.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { Outcome } from "./judge.js";
import type { ListingName, Step } from "./scenario.js";

export const SAMPLED_TEXT = "Summary written by the client's model.";

/** How long a step may take, and how long a wait for list_changed lasts. */
const STEP_TIMEOUT_MS = 15_000;
const WAIT_MS = 3_000;

/** Everything the client received over the protocol in one trial. */
export interface ProtocolEvidence {
  /** The `instructions` of the server's `initialize` result, as the client got them. */
  instructions?: string;
  /** Every listing result, in order. */
  listings: { kind: ListingName; result: unknown }[];
  /** `resources/read` results. */
  resources: unknown[];
  /** `prompts/get` results. */
  prompts: unknown[];
  /** Requests the server sent the client (`sampling/createMessage`, `elicitation/create`). */
  requests: { method: string; params: unknown }[];
  /** Tool call outcomes, in order. */
  calls: Outcome[];
  /** Notifications seen (`notifications/tools/list_changed`). */
  notifications: string[];
}

export function emptyEvidence(): ProtocolEvidence {
  return { listings: [], resources: [], prompts: [], requests: [], calls: [], notifications: [] };
}

/** A form's content as a user who accepts it with the defaults would send it. */
export function fillForm(schema: unknown): Record<string, unknown> {
  const properties =
    (schema as { properties?: Record<string, Record<string, unknown>> } | undefined)?.properties ?? {};
  const content: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(properties)) {
    if (field.default !== undefined) content[name] = field.default;
    else if (Array.isArray(field.enum) && field.enum.length) content[name] = field.enum[0];
    else
      content[name] =
        field.type === "boolean"
          ? true
          : field.type === "number" || field.type === "integer"
            ? 1
            : "bench-user";
  }
  return content;
}

/** Listen before `initialize`: record and answer what the server asks, note what it announces. */
export function recordingClient(evidence: ProtocolEvidence, announced: () => void) {
  return {
    capabilities: { sampling: {}, elicitation: { form: {} } },
    prepare(client: Client): void {
      client.setRequestHandler(CreateMessageRequestSchema, (request) => {
        evidence.requests.push({ method: request.method, params: request.params });
        return {
          role: "assistant" as const,
          content: { type: "text" as const, text: SAMPLED_TEXT },
          model: "mcpguard-bench",
          stopReason: "endTurn",
        };
      });
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        evidence.requests.push({ method: request.method, params: request.params });
        const schema = (request.params as { requestedSchema?: unknown }).requestedSchema;
        return {
          action: "accept" as const,
          content: fillForm(schema) as Record<string, string | number | boolean>,
        };
      });
      client.setNotificationHandler(ToolListChangedNotificationSchema, (notification) => {
        evidence.notifications.push(notification.method);
        announced();
      });
    },
  };
}

const LISTERS: Record<ListingName, (client: Client) => Promise<unknown>> = {
  tools: (c) => c.listTools(undefined, { timeout: STEP_TIMEOUT_MS }),
  prompts: (c) => c.listPrompts(undefined, { timeout: STEP_TIMEOUT_MS }),
  resources: (c) => c.listResources(undefined, { timeout: STEP_TIMEOUT_MS }),
  resource_templates: (c) => c.listResourceTemplates(undefined, { timeout: STEP_TIMEOUT_MS }),
};

/** An error as the client saw it, and whether it says the server is gone. */
function failure(error: unknown): { outcome: Outcome; gone: boolean } {
  const err = error as { code?: unknown; message?: string; data?: unknown };
  const code = typeof err.code === "number" ? err.code : undefined;
  return {
    outcome: { kind: "error", code, message: err.message ?? String(error), data: err.data },
    gone: code === -32000,
  };
}

export interface StepsRun {
  /** The last tool call's outcome, or the last failure (the trial's response for `ended`). */
  outcome: Outcome;
  /** The first tool call's round trip. */
  latencyMs: number | null;
  /** Set when the server went away mid-trial. */
  error: string | null;
}

/** Run the steps in order; a failing step is recorded and the next one runs. */
export async function runSteps(
  client: Client,
  steps: readonly Step[],
  evidence: ProtocolEvidence,
  waitForChange: () => Promise<void>,
  signal?: AbortSignal,
): Promise<StepsRun> {
  evidence.instructions = client.getInstructions();
  let outcome: Outcome = { kind: "result", result: {} };
  let latencyMs: number | null = null;
  for (const step of steps) {
    if (signal?.aborted) break;
    try {
      if ("list" in step) {
        evidence.listings.push({ kind: step.list, result: await LISTERS[step.list](client) });
      } else if ("call" in step) {
        const started = performance.now();
        const result = await client.callTool(
          { name: step.call, arguments: step.arguments ?? {} },
          undefined,
          {
            timeout: STEP_TIMEOUT_MS,
            signal,
          },
        );
        latencyMs ??= performance.now() - started;
        outcome = { kind: "result", result };
        evidence.calls.push(outcome);
      } else if ("read" in step) {
        evidence.resources.push(await client.readResource({ uri: step.read }, { timeout: STEP_TIMEOUT_MS }));
      } else if ("prompt" in step) {
        evidence.prompts.push(
          await client.getPrompt(
            { name: step.prompt, arguments: step.arguments ?? {} },
            { timeout: STEP_TIMEOUT_MS },
          ),
        );
      } else {
        await Promise.race([waitForChange(), new Promise((resolve) => setTimeout(resolve, WAIT_MS))]);
      }
    } catch (error) {
      const failed = failure(error);
      outcome = failed.outcome;
      if ("call" in step) evidence.calls.push(outcome);
      if (failed.gone)
        return {
          outcome,
          latencyMs,
          error: `the server exited during the steps: ${outcome.kind === "error" ? outcome.message : ""}`,
        };
    }
  }
  return { outcome, latencyMs, error: null };
}

/** A promise for the next list_changed, and the hook that resolves it (one seen before counts once). */
export function changeWaiter(): { announced: () => void; next: () => Promise<void> } {
  let pending = 0;
  let wake: (() => void) | undefined;
  return {
    announced: () => {
      if (wake) {
        wake();
        wake = undefined;
      } else pending++;
    },
    next: () => {
      if (pending > 0) {
        pending--;
        return Promise.resolve();
      }
      return new Promise((resolve) => {
        wake = resolve;
      });
    },
  };
}
