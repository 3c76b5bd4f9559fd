import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname } from "node:path";
import type { Binaries } from "@mcpguard/kernel";
import { defineCommand } from "../args.js";
import { createContainment } from "../containment.js";
import { defaultLimits, describeLimits, type LimitsInfo, WRITE_LIMITS } from "../limits.js";

const DOCTOR = defineCommand({
  name: "mcpguard doctor",
  description:
    "Probe this host's kernel by really loading programs and applying a ruleset, and print which " +
    "backend enforces each L3 capability (file, exec, net, unix) for configs C-ebpf, C-full and " +
    "C-AB+ebpf, what the launcher adds beneath them (memfd-exec, socket-families, user-namespaces, " +
    "keyring, sysv-ipc, abstract-unix-bind, procfs), and how the " +
    "server's cgroup is contained in every config: its pids and memory limits, and the reaper that " +
    "outlives the proxy. First it names the launcher, loader and reaper it uses and where they come " +
    "from: $MCPGUARD_BPF_DIR when set, else the build an installed package carries (checked against " +
    "its sha256), else the checkout's bpf/.output.",
  options: { json: { type: "boolean", help: "print the findings as JSON" } },
});

/** Where the kernel layer's programs come from, and each file as it is on disk. */
function describeBinaries(bins: Binaries) {
  const from = {
    MCPGUARD_BPF_DIR: "$MCPGUARD_BPF_DIR",
    package: "this package's build",
    checkout: "the checkout's build (make -C bpf)",
    none: "nowhere",
  }[bins.source];
  const files = (["launcher", "loader", "reaper"] as const).map((role) => {
    const path = bins[role];
    if (bins.unusable || !existsSync(path)) return { role, path, state: "absent" };
    // A packed build is checked against what the package recorded of it at pack time.
    const recorded = (bins.packed?.files as Record<string, { sha256?: string }> | undefined)?.[basename(path)]
      ?.sha256;
    if (!recorded) return { role, path, state: "present" };
    const sha256 = createHash("sha256").update(readFileSync(path)).digest("hex");
    return {
      role,
      path,
      state: sha256 === recorded ? "as packed, sha256 checked" : "CHANGED since it was packed",
    };
  });
  return { source: bins.source, from, dir: bins.dir, packed: bins.packed, unusable: bins.unusable, files };
}

/** Create a scratch server cgroup with the default limits, as `mcpguard run` would, and remove it. */
function probeContainment(
  bins: Binaries,
  whyAbsent: (bins: Binaries, file: string) => string,
): { kind: string; limits: LimitsInfo | undefined; reaper: string } {
  const containment = createContainment({ name: `mcpguard-doctor-${process.pid}`, limits: defaultLimits() });
  containment.dispose();
  return {
    kind: containment.kind,
    limits: containment.limits,
    reaper:
      !bins.unusable && existsSync(bins.reaper) ? bins.reaper : `none (${whyAbsent(bins, bins.reaper)})`,
  };
}

// long: the report as printed, top to bottom: each probe and its row beside each other
export async function main(argv: string[]): Promise<number> {
  const parsed = DOCTOR.parse(argv);
  if (!parsed) return 0;
  const { values } = parsed;
  const kernel = await import("@mcpguard/kernel");
  const probe = await kernel.probeBackends({ fresh: true });
  const backends = kernel.capabilityBackends(probe);
  const hardening = kernel.hardeningBackends(probe);
  const bins = kernel.binaries();
  const layer = describeBinaries(bins);
  const containment = probeContainment(bins, kernel.whyAbsent);
  const ready =
    kernel.CAPABILITIES.every((c) => backends[c].backend !== null) &&
    kernel.HARDENING.every((c) => hardening[c].backend !== null);
  if (values.json) {
    const report = {
      probe,
      capabilities: backends,
      hardening,
      kernelLayer: layer,
      containment,
      writes: WRITE_LIMITS,
      l3Ready: ready,
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return ready ? 0 : 1;
  }
  const entries = [
    ...kernel.CAPABILITIES.map((c) => [c, backends[c]] as const),
    ...kernel.HARDENING.map((c) => [c, hardening[c]] as const),
  ];
  const nameWidth = Math.max(10, ...entries.map(([c]) => c.length));
  const backendWidth = Math.max(7, ...entries.map(([, b]) => (b.backend ?? "NONE").length));
  const rows = entries.map(
    ([c, b]) => `  ${c.padEnd(nameWidth)} ${(b.backend ?? "NONE").padEnd(backendWidth)} ${b.detail}`,
  );
  const limits = containment.limits;
  const facts = [
    `  root             ${probe.root ? "yes" : "no"}`,
    `  Landlock ABI     ${probe.landlockAbi || "unavailable"}`,
    `  cgroup BPF       ${probe.cgroupBpf ? "loads and attaches" : "unavailable"}`,
    `  tp_btf telemetry ${probe.tpBtf ? "loads and attaches" : "unavailable"}`,
    `  BPF LSM          ${probe.lsm ? "loads" : "refused at load"}`,
    `  seccomp filter   ${probe.seccomp ? "installs and refuses what it must" : "does not work"}`,
    `  namespaces       ${probe.namespaces ? "IPC and network namespaces of the server's own" : "cannot be made"}`,
    `  pid namespace    ${probe.pidNamespace ? "PID and mount namespaces with a /proc of the server's own" : "cannot be made"}`,
    ...Object.entries(probe.errors).map(([what, why]) => `    ${what}: ${why}`),
  ];
  const packed = bins.packed;
  const packedFacts = packed
    ? ` (packed for ${String(packed.machine)} on ${String(packed.packedOn)}, ${String(packed.packedAt)})`
    : "";
  const containmentLines = [
    "containment (every config):",
    `  server in        ${containment.kind === "cgroup" ? "a cgroup of its own" : "a process group of its own"}`,
    `  limits           ${limits ? describeLimits(limits) : "none"}`,
    `  writes           ${WRITE_LIMITS}`,
    `  reaper           ${bins.unusable ? "none (see below)" : containment.reaper}`,
  ];
  // Nothing to probe with: one line says why, in place of a table of the same reason.
  const lines = bins.unusable
    ? [
        `kernel layer     ${bins.source === "package" ? `none for this machine in ${dirname(bins.dir)}` : "none found"}`,
        "",
        ...containmentLines,
        "",
        `L3 configs are refused here: ${bins.unusable}.`,
      ]
    : [
        `kernel layer     ${layer.from}, ${layer.dir}${packedFacts}`,
        ...layer.files.map((f) => `  ${f.role.padEnd(14)} ${f.path} (${f.state})`),
        "",
        `  ${"capability".padEnd(nameWidth)} ${"backend".padEnd(backendWidth)} how`,
        ...rows,
        "",
        ...containmentLines,
        "",
        "probed:",
        ...facts,
        "",
        ready
          ? "L3 configs (C-ebpf, C-full, C-AB+ebpf) can run here."
          : "L3 configs are refused here: a capability has no backend.",
      ];
  process.stdout.write(`${lines.join("\n")}\n`);
  return ready ? 0 : 1;
}
