/**
 * Composes the application layers of a config into one interceptor for the relay, and the
 * server's environment at spawn. L1 decides first, then L2 inspects; AB stands alone. The layer
 * packages are loaded only when a config uses them, so C0 starts without them.
 */
import type { KernelNeeds } from "@mcpguard/kernel";
import { type Layer, listLayers } from "./configs.js";
import type { Interceptor, ResultChange, ToolCall, Verdict } from "./router.js";

export interface LayerOptions {
  layers: readonly Layer[];
  /** L1/L2 policy file (required by L1 and L2). */
  policy?: string;
  /** Operator overrides: a file, or a directory holding `<server>.json`. */
  overrides?: string;
  /** AgentBound manifest (required by AB). */
  manifest?: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** The relay's `--max-depth`: L2 walks arguments and results, and JSON inside text, no deeper. */
  maxDepth?: number;
}

export interface Layers {
  /** The server's environment at spawn. */
  env: NodeJS.ProcessEnv;
  /** Names of the variables the server does not get. */
  withheld: string[];
  interceptor?: Interceptor;
  /** The name the policy or manifest gives the server. */
  server?: string;
  /** What the kernel layer must allow the server (configs with L3). */
  kernelNeeds?: KernelNeeds;
  /** The resource limits the policy or manifest asks for (the server's cgroup). */
  limits?: { pids?: number; memoryBytes?: number };
}

export class LayerSetupError extends Error {
  override readonly name = "LayerSetupError";
}

const allowed = (layer: string): Verdict => ({ decision: "allow", layer, rule: null, reason: "allowed" });

/** The sanitizer's outcome as the relay records it: no change, or the message and the rules. */
function sanitized(outcome: {
  message: Record<string, unknown>;
  redactions: string[];
}): ResultChange | undefined {
  const { message, redactions } = outcome;
  if (redactions.length === 0) return undefined;
  return {
    message,
    layer: "sanitizer",
    rule: redactions.join(","),
    reason: `removed from the result: ${redactions.join(", ")}`,
  };
}

export async function buildLayers(options: LayerOptions): Promise<Layers> {
  const { layers, env, cwd, maxDepth } = options;
  const vars = { cwd, home: env.HOME || undefined, tmp: env.TMPDIR || undefined };
  const appLayers = layers.includes("L1") || layers.includes("L2");
  const kernel = layers.includes("L3");
  if (!appLayers && !kernel && !layers.includes("AB")) return { env, withheld: [] };

  const policyLib = await import("@mcpguard/policy");
  try {
    if (layers.includes("AB")) {
      if (!options.manifest)
        throw new LayerSetupError("the AB layer needs an AgentBound manifest (--manifest FILE)");
      const { AgentBound, loadManifest } = await import("@mcpguard/agentbound");
      const manifest = await loadManifest(options.manifest);
      const ab = new AgentBound(manifest, vars);
      const filtered = ab.environment(env);
      return {
        env: filtered.env,
        withheld: filtered.withheld,
        server: ab.server,
        limits: manifest.limits,
        kernelNeeds: kernel ? ab.needs() : undefined,
        interceptor: {
          toolCall(call: ToolCall): Verdict {
            const d = ab.check(call.name, call.arguments);
            return d.allow
              ? allowed("AB")
              : { decision: "deny", layer: "AB", rule: d.rule, reason: d.reason };
          },
        },
      };
    }

    if (!options.policy) {
      const which = layers.filter((l) => l !== "AB");
      throw new LayerSetupError(
        `${listLayers(which)} ${which.length > 1 ? "need" : "needs"} a policy (--policy FILE)`,
      );
    }
    const policy = await policyLib.loadPolicy(options.policy);
    const resolved = policyLib.resolvePolicy(
      policy,
      await policyLib.loadOverrides(options.overrides, policy.server),
      vars,
    );
    const kernelNeeds = kernel ? policyLib.policyNeeds(resolved) : undefined;
    // L3 alone (C-ebpf) is a pure ablation: the environment and the results stay as they are.
    if (!appLayers) return { env, withheld: [], server: policy.server, kernelNeeds, limits: policy.limits };
    const filtered = policyLib.filterEnvironment(env, resolved.keepEnv);
    const validator = layers.includes("L2") ? await import("@mcpguard/validator") : undefined;
    const useL1 = layers.includes("L1");
    const label = layers.filter((l) => l === "L1" || l === "L2").join("+");

    const interceptor: Interceptor = {
      toolCall(call: ToolCall): Verdict {
        const resolvePath = policyLib.callPathResolver();
        if (useL1) {
          const d = policyLib.decide(resolved, call.name, call.arguments, resolvePath);
          if (!d.allow) return { decision: "deny", layer: "L1", rule: d.rule, reason: d.reason };
        }
        if (validator) {
          const tool = resolved.tools.get(call.name);
          const roots = tool ? [...new Set([...tool.read.roots, ...tool.write.roots])] : [];
          const finding = validator.inspectArguments(call.arguments, tool?.args ?? {}, {
            cwd,
            home: vars.home,
            roots: roots.length ? roots : [policyLib.canonicalPath(cwd, "/").canonical],
            disabledRules: tool?.disabledRules,
            resolvePath,
            maxDepth,
          });
          if (finding) return { decision: "deny", layer: "L2", rule: finding.rule, reason: finding.reason };
        }
        return allowed(label);
      },
    };
    if (validator) {
      // Every message the server sends that can carry data to the agent goes through the sanitizer.
      const ctx = { secretValues: filtered.secretValues, maxDepth };
      interceptor.response = (request, message) =>
        sanitized(validator.sanitizeResponse(request.method, message, ctx));
      interceptor.serverMessage = (method, message) =>
        sanitized(validator.sanitizeServerMessage(method, message, ctx));
    }
    return {
      env: filtered.env,
      withheld: filtered.withheld,
      server: policy.server,
      interceptor,
      kernelNeeds,
      limits: policy.limits,
    };
  } catch (error) {
    if (error instanceof policyLib.PolicyError) throw new LayerSetupError(error.message);
    throw error;
  }
}
