/**
 * The BPF LSM programs for real. This host refuses BPF LSM at load, so `make -C bpf vm-test` boots
 * Debian's 6.1 kernel under QEMU (TCG) with the project's own LSM programs and loader, and shows
 * file, exec and connect denials with no side effect inside the guest.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const BPF = join(import.meta.dirname, "..", "..", "..", "bpf");
const tools = ["qemu-system-x86_64", "busybox", "cpio", "apt-get", "clang-19"].filter(
  (t) => spawnSync("sh", ["-c", `command -v ${t}`]).status !== 0,
);
if (tools.length)
  console.warn(`BPF LSM VM test skipped: missing ${tools.join(", ")} (npm run setup installs them as root)`);

it.skipIf(tools.length > 0)(
  "denies file, exec and connect with the BPF LSM programs in a VM, leaving no side effect",
  () => {
    const r = spawnSync("make", ["-s", "-C", BPF, "vm-test"], { encoding: "utf8", timeout: 400_000 });
    const log = `${r.stdout}\n${r.stderr}`;
    expect(log, log.slice(-3000)).toMatch(/^VM TEST PASS$/m);
    expect(r.status).toBe(0);
    for (const check of ["O_CREAT", "truncate", "unlinking", "renaming", "exec of", "TCP connect"]) {
      expect(log, check).toMatch(new RegExp(`vmtest: ok: .*${check}`, "i"));
    }
    expect(log).not.toMatch(/vmtest: FAIL/);
  },
  420_000,
);

describe("a guest that stalls in its own kernel (vm/run.sh, with a stand-in for QEMU)", () => {
  const scratch = mkdtempSync(join(tmpdir(), "mcpguard-vm-"));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  /**
   * A stand-in for qemu-system-x86_64 that plays `boots` in turn, one per call: "stall" prints the
   * probe and a soft lockup and waits (the script must kill it); "pass" prints a verdict and exits;
   * "fail" prints a verdict, then a lockup, and lives 2 s more. Each call is counted, and a killed
   * stall leaves a mark. The tests' log is their own, not the real run's.
   */
  function standIn(name: string, boots: ("stall" | "pass" | "fail")[]): string {
    const dir = join(scratch, name);
    const script = join(scratch, `${name}.sh`);
    writeFileSync(
      script,
      `#!/bin/sh
dir=${JSON.stringify(dir)}
mkdir -p "$dir"
n=$(ls "$dir" | grep -c '^call' || true)
n=$((n + 1))
touch "$dir/call$n"
set -- ${boots.join(" ")}
shift $((n - 1))
echo 'vm: probe {"lsm":true}'
case "$1" in
stall)
  trap 'kill $! 2>/dev/null; touch "$dir/killed$n"; exit 143' TERM
  echo 'vmtest: ok: reading /srv/allowed/ok.txt works (ok)'
  echo '[   60.759992] watchdog: BUG: soft lockup - CPU#1 stuck for 48s! [init:1]'
  sleep 60 & wait ;;
pass) echo 'VM TEST PASS' ;;
fail)
  # A verdict, then a lockup while the guest powers off, as long as the script looks.
  trap 'kill $! 2>/dev/null; exit 143' TERM
  echo 'vmtest: FAIL: reading /srv/denied/secret.txt worked'
  echo 'VM TEST FAIL'
  echo '[ 61.0] watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [x:1]'
  sleep 2 & wait ;;
esac
`,
    );
    chmodSync(script, 0o755);
    return script;
  }
  const vmTest = (qemu: string) =>
    spawnSync("make", ["-s", "-C", BPF, "vm-test"], {
      encoding: "utf8",
      env: { ...process.env, VM_QEMU: qemu, VM_SERIAL_LOG: join(scratch, "serial.log") },
      timeout: 120_000,
    });
  const called = (name: string, n: number) => existsSync(join(scratch, name, `call${n}`));

  it.skipIf(tools.length > 0)(
    "stops a stalled guest at once and boots it once more, saying so",
    () => {
      const r = vmTest(standIn("once", ["stall", "pass"]));
      expect(r.stderr).toMatch(/the guest stalled in its own kernel before a verdict .*booting it once more/);
      expect(r.stdout).toMatch(/^vm-test: PASS in \d+s$/m);
      expect(r.status).toBe(0);
      expect([called("once", 2), called("once", 3)]).toEqual([true, false]);
      expect(existsSync(join(scratch, "once", "killed1"))).toBe(true);
    },
    150_000,
  );

  it.skipIf(tools.length > 0)(
    "fails when the guest stalls twice, and never boots a verdict again",
    () => {
      const twice = vmTest(standIn("twice", ["stall", "stall", "pass"]));
      expect(twice.status).not.toBe(0);
      expect(twice.stderr).toMatch(/no PASS from the guest/);
      expect([called("twice", 2), called("twice", 3)]).toEqual([true, false]);
      const failed = vmTest(standIn("failed", ["fail", "pass"]));
      expect(failed.status).not.toBe(0);
      expect(failed.stdout).toMatch(/vmtest: FAIL/);
      expect(failed.stderr).not.toMatch(/booting it once more/);
      expect(called("failed", 2)).toBe(false);
    },
    150_000,
  );
});
