/**
 * The BPF LSM programs for real. This host refuses BPF LSM at load, so `make -C bpf vm-test` boots
 * Debian's 6.1 kernel under QEMU (TCG) with the project's own LSM programs and loader, and shows
 * file, exec and connect denials with no side effect inside the guest.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { expect, it } from "vitest";

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
