/**
 * Before a run, each config is checked with the environment probe: a config that removes HOME,
 * TMPDIR, PATH or LANG from the server's environment, or changes HOME or TMPDIR, describes a
 * different world and is refused (CASES.md §4, step 1).
 */
import { spawnSync } from "node:child_process";
import { z } from "zod";
import type { Interpreters } from "./interpreters.js";
import { repoPath } from "./paths.js";
import type { ServerEntry } from "./registry.js";
import { openSession } from "./session.js";
import type { WorldFactory } from "./world/world.js";

export const PROBE_SERVER: ServerEntry = {
  id: "env_probe",
  language: "javascript",
  argv: ["node", repoPath("runner", "probe", "envProbe.mjs")],
  sink: false,
  description: "Reports HOME, TMPDIR, PATH and LANG as the server sees them",
};

/** What a config did to the world's environment, as the probe reported it (empty when nothing). */
export function environmentProblems(
  reported: Record<string, string | null>,
  world: Record<string, string>,
): string[] {
  const problems: string[] = [];
  for (const name of ["HOME", "TMPDIR", "PATH", "LANG"])
    if (!reported[name]) problems.push(`removes ${name}`);
  for (const name of ["HOME", "TMPDIR"]) {
    if (reported[name] && reported[name] !== world[name])
      problems.push(`changes ${name} to ${reported[name]}`);
  }
  return problems;
}

/** The reason a config may not run, or null when it keeps the world's environment. */
export async function probeEnvironment(
  config: string,
  factory: WorldFactory,
  interpreters: Interpreters,
): Promise<string | null> {
  const world = await factory.create();
  try {
    const session = await openSession({
      world,
      server: PROBE_SERVER,
      interpreters,
      config,
      policies: {
        policy: repoPath("runner", "probe", "policy.json"),
        manifest: repoPath("runner", "probe", "manifest.json"),
        overrides: repoPath("policies", "overrides"),
      },
    });
    try {
      const result = (await session.client.callTool({ name: "environment", arguments: {} })) as {
        content?: { type: string; text?: string }[];
        isError?: boolean;
      };
      const text = result.content?.[0]?.text ?? "";
      let env: Record<string, string | null>;
      try {
        env = JSON.parse(text);
      } catch {
        return `the environment probe did not answer under ${config}: ${text.slice(0, 200)}`;
      }
      const problems = environmentProblems(env, world.env);
      return problems.length ? `config ${config} ${problems.join(", ")} in the server's environment` : null;
    } finally {
      await session.close();
    }
  } catch (error) {
    return `the environment probe could not run under ${config}: ${(error as Error).message}`;
  } finally {
    await world.destroy();
  }
}

/**
 * `MCPGUARD_ASSUME_NO_L3=1`: the bench takes the kernel layer as unavailable on this host, as on a
 * host without Landlock or cgroup BPF or as a user who is not root. For tests of that path only:
 * it changes nothing in what the proxy enforces.
 */
export const ASSUME_NO_L3 = "MCPGUARD_ASSUME_NO_L3";

/** What the bench reads of `mcpguard doctor --json`. */
const DoctorReport = z.looseObject({
  probe: z.looseObject({ root: z.boolean() }),
  capabilities: z.record(z.string(), z.looseObject({ backend: z.string().nullable(), detail: z.string() })),
  hardening: z.record(z.string(), z.looseObject({ backend: z.string().nullable(), detail: z.string() })),
  l3Ready: z.boolean(),
});

/**
 * Why the configs with L3 cannot be enforced on this host, or null when they can: what
 * `mcpguard doctor` finds (the kernel probed by loading programs and applying a ruleset), or the
 * {@link ASSUME_NO_L3} override.
 */
export function kernelLayerUnavailable(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env[ASSUME_NO_L3] === "1") return `assumed absent (${ASSUME_NO_L3}=1)`;
  const r = spawnSync(
    process.execPath,
    [repoPath("packages", "proxy", "bin", "mcpguard.js"), "doctor", "--json"],
    {
      encoding: "utf8",
      timeout: 60_000,
    },
  );
  let report: z.infer<typeof DoctorReport>;
  try {
    report = DoctorReport.parse(JSON.parse(r.stdout));
  } catch {
    const why = (r.stderr || r.stdout || r.error?.message || "no output").trim().split("\n")[0];
    return `mcpguard doctor could not probe the kernel (${why})`;
  }
  if (report.l3Ready) return null;
  const missing = [...Object.entries(report.capabilities), ...Object.entries(report.hardening)].filter(
    ([, b]) => b.backend === null,
  );
  const root = report.probe.root ? "" : "not root; ";
  const what = missing.map(([name]) => name).join(", ");
  const first = missing[0];
  return `${root}no backend enforces ${what || "every capability"}${first ? ` (${first[0]}: ${first[1].detail})` : ""}`;
}
