import { existsSync } from "node:fs";
import { defineCommand } from "../args.js";
import { createContainment } from "../containment.js";
import { defaultLimits, describeLimits, type LimitsInfo, WRITE_LIMITS } from "../limits.js";

const DOCTOR = defineCommand({
  name: "mcpguard doctor",
  description:
    "Probe this host's kernel by really loading programs and applying a ruleset, and print which " +
    "backend enforces each L3 capability (file, exec, net, unix) for configs C-ebpf, C-full and " +
    "C-AB+ebpf, what the launcher adds beneath them (memfd-exec, socket-families, user-namespaces, " +
    "keyring, sysv-ipc, abstract-unix-bind), and how the " +
    "server's cgroup is contained in every config: its pids and memory limits, and the reaper that " +
    "outlives the proxy.",
  options: { json: { type: "boolean", help: "print the findings as JSON" } },
});

/** Create a scratch server cgroup with the default limits, as `mcpguard run` would, and remove it. */
function probeContainment(reaper: string): { kind: string; limits: LimitsInfo | undefined; reaper: string } {
  const containment = createContainment({ name: `mcpguard-doctor-${process.pid}`, limits: defaultLimits() });
  containment.dispose();
  return {
    kind: containment.kind,
    limits: containment.limits,
    reaper: existsSync(reaper) ? reaper : `none (${reaper} is not built: make -C bpf)`,
  };
}

export async function main(argv: string[]): Promise<number> {
  const parsed = DOCTOR.parse(argv);
  if (!parsed) return 0;
  const { values } = parsed;
  const kernel = await import("@mcpguard/kernel");
  const probe = await kernel.probeBackends({ fresh: true });
  const backends = kernel.capabilityBackends(probe);
  const hardening = kernel.hardeningBackends(probe);
  const containment = probeContainment(kernel.binaries().reaper);
  const ready =
    kernel.CAPABILITIES.every((c) => backends[c].backend !== null) &&
    kernel.HARDENING.every((c) => hardening[c].backend !== null);
  if (values.json) {
    const report = {
      probe,
      capabilities: backends,
      hardening,
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
    ...Object.entries(probe.errors).map(([what, why]) => `    ${what}: ${why}`),
  ];
  process.stdout.write(
    [
      `  ${"capability".padEnd(nameWidth)} ${"backend".padEnd(backendWidth)} how`,
      ...rows,
      "",
      "containment (every config):",
      `  server in        ${containment.kind === "cgroup" ? "a cgroup of its own" : "a process group of its own"}`,
      `  limits           ${limits ? describeLimits(limits) : "none"}`,
      `  writes           ${WRITE_LIMITS}`,
      `  reaper           ${containment.reaper}`,
      "",
      "probed:",
      ...facts,
      "",
      ready
        ? "L3 configs (C-ebpf, C-full, C-AB+ebpf) can run here."
        : "L3 configs are refused here: a capability has no backend.",
      "",
    ].join("\n"),
  );
  return ready ? 0 : 1;
}
