/**
 * The Python reader's helper (the readers package's pyhelper.ts: `python3 -I -S pyast.py`, which
 * parses the code of a command with CPython's own grammar) as the proxy runs it.
 *
 * - It never runs an interpreter the server could have written: one inside a grant that lets the
 *   server write (L1's write grants by tool, the kernel's write rules) is refused, as the guard's
 *   own files are (guardFiles.ts).
 * - Where the kernel layer runs with Landlock, it starts through the launcher (bpf/launcher.c) with
 *   a ruleset of its own: read and run the interpreter and what it needs to start (its standard
 *   library, the shared libraries), read the script, write nothing but /dev/null, no TCP connect or
 *   bind, signals and abstract sockets scoped; with the seccomp filter, and a network namespace of
 *   its own where the host can make one. It is the proxy's child, in no cgroup of the server's.
 */
import { dirname } from "node:path";
import type { HelperLauncher } from "@mcpguard/readers";
import type { Grant } from "./guardFiles.js";

type Kernel = typeof import("@mcpguard/kernel");

/** The launcher for the helper: its ruleset and options, for the argv the readers package gives. */
export function confinedHelper(
  kernel: Kernel,
  options: { seccomp: boolean; isolateNet: boolean },
): HelperLauncher {
  return (argv) => {
    const [interpreter = "", ...rest] = argv;
    const script = rest.find((arg) => arg.endsWith(".py"));
    const plan = kernel.planAccess(
      { read: script ? [script] : [], write: [], exec: [], network: [], shell: false },
      [interpreter],
      { PATH: dirname(interpreter) },
    );
    const records: string[][] = [
      ["abi", String(kernel.LANDLOCK_MIN_ABI)],
      ["scope", "signal"],
      ["scope", "abstract-unix"],
      ["handle", "net"],
    ];
    for (const [path, rights] of [...plan.fs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      records.push(["fs", [...rights].sort().join(","), path]);
    return {
      argv: [
        kernel.binaries().launcher,
        ...(options.isolateNet ? ["--isolate", "net"] : []),
        ...(options.seccomp ? ["--seccomp"] : []),
        "--ruleset",
        "/dev/fd/3",
        "--",
        ...argv,
      ],
      fd3: kernel.encodeRecords(kernel.RULESET_HEADER, records),
    };
  };
}

/** Why `file` may not run as the helper: it lies in a grant that lets the server write. */
export function writableByServer(grants: readonly Grant[], file: string): string | undefined {
  const grant = grants.find(
    (g) => !g.read && (file === g.path || file.startsWith(`${g.path.replace(/\/$/, "")}/`)),
  );
  return grant
    ? `is not run: ${file} lies where the server may write (${grant.why}), so it could be the server's program`
    : undefined;
}
