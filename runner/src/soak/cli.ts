/**
 * `mcpguard soak [containment|frames|all]`: the proxy under attack for a long time, as numbers.
 *
 *   containment   SIGKILL of the proxy mid-call (C0, C-full) and of the BPF loader (C-full),
 *                 --iterations times each: processes, cgroups and datagrams left after the kill.
 *   frames        --frames generated frames, hostile and valid, through C0 and C-full: crashes,
 *                 malformed frames forwarded, the planted key reaching the client, peak RSS.
 *
 * A Markdown table goes to stdout, progress to stderr, the full report (JSON) to --json FILE.
 * Exit status 1 when a guarantee failed, 2 on a usage error.
 */
import { writeFileSync } from "node:fs";
import { defineCommand, intOption, UsageError } from "@mcpguard/proxy/args";
import { type ContainmentSoakReport, runContainmentSoak } from "./containment.js";
import { type FrameSoakReport, runFrameSoak, SOAK_CONFIGS } from "./frames.js";

const SOAK = defineCommand({
  name: "mcpguard soak",
  description: "Attack the proxy for a long time and count what must never happen.",
  args: [["[part]", "containment, frames or all (default: all)"]],
  options: {
    iterations: {
      type: "string",
      value: "n",
      help: "containment: kills per config and per kind (default 100)",
    },
    frames: { type: "string", value: "n", help: "frames: generated frames per config (default 1000000)" },
    configs: { type: "string", value: "list", help: "C0, C-full or both (default both)" },
    seed: { type: "string", value: "n", help: "frames: seed of the generator (default 11)" },
    json: { type: "string", value: "file", help: "write the whole report as JSON to the file" },
    quiet: { type: "boolean", help: "no progress lines" },
  },
});

type SoakConfig = (typeof SOAK_CONFIGS)[number];

export interface SoakReport {
  containment?: ContainmentSoakReport;
  frames?: FrameSoakReport;
}

function configsOption(value: string | undefined): SoakConfig[] {
  if (value === undefined) return [...SOAK_CONFIGS];
  const names = value.split(",").map((n) => n.trim());
  for (const name of names) {
    if (!(SOAK_CONFIGS as readonly string[]).includes(name))
      throw new UsageError(`--configs: ${name} is not one of ${SOAK_CONFIGS.join(", ")}`);
  }
  return names as SoakConfig[];
}

/** Whether the numbers show a broken guarantee. */
export function soakFailed(report: SoakReport): boolean {
  const c = report.containment;
  const kills = c ? [...Object.values(c.proxyKill), ...(c.loaderKill ? [c.loaderKill] : [])] : [];
  const leaked = kills.some((k) => k.processesLeft + k.cgroupsLeft > 0);
  const escaped = Object.entries(c?.proxyKill ?? {}).some(
    ([config, k]) => config !== "C0" && k.datagramsAfterKill > 0,
  );
  const loaderLeak = (c?.loaderKill?.datagramsAfterKill ?? 0) > 0;
  const relay = (report.frames?.configs ?? []).some(
    (r) =>
      r.crashes + r.malformedToClient + r.malformedToServer > 0 ||
      (r.config !== "C0" && r.plantedKeyToClient > 0),
  );
  return leaked || escaped || loaderLeak || relay;
}

export function soakMarkdown(report: SoakReport): string {
  const lines: string[] = [];
  const c = report.containment;
  if (c) {
    lines.push(
      `### Containment (${c.iterations} kills each, ${c.wallSeconds} s)`,
      "",
      "| killed | processes left | cgroups left | datagrams after kill | cleanup p50 / p95 / max [ms] |",
      "|---|---:|---:|---:|---|",
    );
    const rows = [
      ...Object.entries(c.proxyKill).map(([config, k]) => [`proxy, ${config}`, k] as const),
      ...(c.loaderKill ? [["loader, C-full", c.loaderKill] as const] : []),
    ];
    for (const [what, k] of rows) {
      const t = k.cleanupMs;
      lines.push(
        `| ${what} | ${k.processesLeft} | ${k.cgroupsLeft} | ${k.datagramsAfterKill} (${k.runsWithDatagramsAfterKill} runs) | ${t.p50} / ${t.p95} / ${t.max} |`,
      );
    }
    lines.push("");
  }
  const f = report.frames;
  if (f) {
    lines.push(
      `### Frames (${f.frames} per config, seed ${f.seed}, max depth ${f.maxDepth})`,
      "",
      "| config | crashes | malformed to client / server | planted key to client | peak RSS [MiB] | time [s] |",
      "|---|---:|---:|---:|---:|---:|",
    );
    for (const r of f.configs) {
      lines.push(
        `| ${r.config} | ${r.crashes} | ${r.malformedToClient} / ${r.malformedToServer} | ${r.plantedKeyToClient} | ${r.peakRssMiB.toFixed(1)} | ${Math.round(r.durationMs / 1000)} |`,
      );
    }
    lines.push("");
  }
  return lines.join("\n");
}

export async function main(argv: string[]): Promise<number> {
  const parsed = SOAK.parse(argv);
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  const [part = "all", ...extra] = positionals;
  if (extra.length || !["containment", "frames", "all"].includes(part))
    throw new UsageError(`expected containment, frames or all, got ${JSON.stringify(positionals.join(" "))}`);
  const configs = configsOption(values.configs);
  const progress = values.quiet ? () => {} : (line: string) => process.stderr.write(`soak: ${line}\n`);
  const report: SoakReport = {};
  if (part !== "frames") {
    report.containment = await runContainmentSoak(
      {
        iterations: intOption(values.iterations, "iterations", 100),
        configs,
        loaderKills: configs.includes("C-full"),
      },
      progress,
    );
  }
  if (part !== "containment") {
    report.frames = await runFrameSoak(
      {
        frames: intOption(values.frames, "frames", 1_000_000),
        configs,
        seed: intOption(values.seed, "seed", 11),
      },
      progress,
    );
  }
  if (values.json) writeFileSync(values.json, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(soakMarkdown(report));
  return soakFailed(report) ? 1 : 0;
}
