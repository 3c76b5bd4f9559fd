import { parseOptions, UsageError } from "../args.js";

const HELP = `usage: mcpguard doctor [--json]

Probe this host's kernel by really loading programs and applying a ruleset, and print which
backend enforces each L3 capability (file, exec, net, unix) for configs C-ebpf, C-full and C-AB+ebpf.
`;

export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseOptions(argv, {
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const kernel = await import("@mcpguard/kernel");
  const probe = await kernel.probeBackends({ fresh: true });
  const backends = kernel.capabilityBackends(probe);
  const ready = kernel.CAPABILITIES.every((c) => backends[c].backend !== null);
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ probe, capabilities: backends, l3Ready: ready }, null, 2)}\n`);
    return ready ? 0 : 1;
  }
  const rows = kernel.CAPABILITIES.map(
    (c) => `  ${c.padEnd(6)} ${(backends[c].backend ?? "NONE").padEnd(11)} ${backends[c].detail}`,
  );
  const facts = [
    `  root             ${probe.root ? "yes" : "no"}`,
    `  Landlock ABI     ${probe.landlockAbi || "unavailable"}`,
    `  cgroup BPF       ${probe.cgroupBpf ? "loads and attaches" : "unavailable"}`,
    `  tp_btf telemetry ${probe.tpBtf ? "loads and attaches" : "unavailable"}`,
    `  BPF LSM          ${probe.lsm ? "loads" : "refused at load"}`,
    ...Object.entries(probe.errors).map(([what, why]) => `    ${what}: ${why}`),
  ];
  process.stdout.write(
    [
      "capability  backend     how",
      ...rows,
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
