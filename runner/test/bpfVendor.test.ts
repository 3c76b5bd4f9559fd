/**
 * bpf/vendor/: the BPF skeletons shipped for hosts that cannot generate them (no clang-19, no
 * bpftool, or a bpftool older than the kernel, as on hosted CI runners). They must be the ones the
 * sources build (`make -C bpf vendor` after a change to a .bpf.c or .bpf.h), and a build that
 * cannot generate skeletons must take them and give a loader that works.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { repoPath } from "../src/paths.ts";

const BPF = repoPath("bpf");
const has = (command: string) => spawnSync("sh", ["-c", `command -v ${command}`]).status === 0;
const toolchain =
  has("make") &&
  has("gcc") &&
  spawnSync("sh", ["-c", "printf '#include <bpf/libbpf.h>\\n' | gcc -E -o /dev/null -"]).status === 0;
const doctor = (env: NodeJS.ProcessEnv = {}) =>
  spawnSync(process.execPath, [repoPath("packages", "proxy", "bin", "mcpguard.js"), "doctor", "--json"], {
    encoding: "utf8",
    env: { ...process.env, ...env },
  });
const l3 = doctor().status === 0;

describe("the vendored BPF skeletons", () => {
  const out = mkdtempSync(join(tmpdir(), "mcpguard-bpf-"));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it.skipIf(!has("make"))("were built from the sources as they are (else: make -C bpf vendor)", () => {
    const r = spawnSync("make", ["-s", "-C", BPF, "vendor-check"], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("bpf: vendor/x86 matches the sources\n");
    expect(r.status).toBe(0);
  });

  it.skipIf(!toolchain)(
    "are what a build takes where bpftool cannot read the kernel's BTF, and its loader runs the L3 configs",
    () => {
      const r = spawnSync("make", ["-s", "-C", BPF, `OUTPUT=${out}`, "BPFTOOL=/bin/false"], {
        encoding: "utf8",
        timeout: 120_000,
      });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toContain(
        "bpf: the skeletons cannot be generated here (clang-19, llvm-strip-19, or a bpftool that reads /sys/kernel/btf/vmlinux); using the vendored ones in vendor/x86",
      );
      if (!l3) return; // the kernel here cannot run the layer at all, whatever the build
      const report = JSON.parse(doctor({ MCPGUARD_BPF_DIR: out }).stdout);
      expect(report).toMatchObject({ l3Ready: true, kernelLayer: { dir: out } });
    },
    150_000,
  );
});
