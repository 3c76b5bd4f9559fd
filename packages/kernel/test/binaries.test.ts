/**
 * Where the kernel layer's programs are looked for: MCPGUARD_BPF_DIR, else the nearest packed
 * package (bpf/kernel-layer.json) or checkout (bpf/Makefile) above the module, and a package packed
 * for another machine is refused, never run.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { binaries, locateBinaries, whyAbsent } from "../src/binaries.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "mcpguard-binaries-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => {
  delete process.env.MCPGUARD_BPF_DIR;
});

function tree(files: Record<string, string>): string {
  const top = mkdtempSync(join(root, "t-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(top, path, ".."), { recursive: true });
    writeFileSync(join(top, path), text);
  }
  return top;
}

const manifest = (builds: Record<string, unknown>) => JSON.stringify({ format: 1, builds });

describe("locateBinaries", () => {
  it("finds a checkout's bpf/.output from a module inside it", () => {
    const top = tree({ "bpf/Makefile": "", "packages/kernel/dist/binaries.js": "" });
    expect(locateBinaries(join(top, "packages", "kernel", "dist"), "x86_64")).toEqual({
      dir: join(top, "bpf", ".output"),
      source: "checkout",
    });
  });

  it("finds a package's build for this machine, before a checkout the package sits in", () => {
    const build = { dir: "x86_64", machine: "x86_64" };
    const top = tree({
      "bpf/Makefile": "",
      "pkg/bpf/kernel-layer.json": manifest({ x86_64: build }),
      "pkg/workspace/packages/kernel/dist/binaries.js": "",
    });
    expect(locateBinaries(join(top, "pkg", "workspace", "packages", "kernel", "dist"), "x86_64")).toEqual({
      dir: join(top, "pkg", "bpf", "x86_64"),
      source: "package",
      packed: build,
    });
  });

  it("refuses a package packed for another machine, and one whose record is damaged", () => {
    const top = tree({ "bpf/kernel-layer.json": manifest({ x86_64: { dir: "x86_64" } }) });
    const other = locateBinaries(join(top, "dist"), "aarch64");
    expect(other).toMatchObject({ source: "package", dir: join(top, "bpf", "aarch64") });
    expect(other.unusable).toMatch(
      /^this mcpguard package carries its kernel layer for x86_64 only, and this machine is aarch64: pack it on aarch64 /,
    );
    // A name every object has is no build.
    expect(locateBinaries(join(top, "dist"), "constructor").unusable).toMatch(/for x86_64 only/);
    writeFileSync(join(top, "bpf", "kernel-layer.json"), "{");
    expect(locateBinaries(join(top, "dist"), "x86_64").unusable).toMatch(
      /kernel-layer\.json cannot be read .*; reinstall it$/,
    );
  });

  it("says where to get a build when there is none above the module", () => {
    const top = tree({ "lib/mcpguard/dist/x.js": "" });
    const none = locateBinaries(join(top, "lib", "mcpguard", "dist"), "x86_64");
    expect(none.source).toBe("none");
    expect(none.unusable).toMatch(/^no build of the kernel layer found: .* set MCPGUARD_BPF_DIR/);
  });
});

describe("binaries", () => {
  it("takes MCPGUARD_BPF_DIR over anything found, as it is", () => {
    process.env.MCPGUARD_BPF_DIR = join(root, "mine");
    expect(binaries()).toEqual({
      dir: join(root, "mine"),
      source: "MCPGUARD_BPF_DIR",
      launcher: join(root, "mine", "mcpguard-exec"),
      loader: join(root, "mine", "mcpguard-loader"),
      reaper: join(root, "mine", "mcpguard-reaper"),
    });
    expect(whyAbsent(binaries(), binaries().loader)).toBe(
      `${join(root, "mine", "mcpguard-loader")} is not built (make -C bpf)`,
    );
  });

  it("finds this checkout's build from the module's own folder, whatever the working directory", () => {
    const cwd = process.cwd();
    process.chdir(root);
    try {
      expect(binaries()).toMatchObject({
        source: "checkout",
        dir: join(import.meta.dirname, "..", "..", "..", "bpf", ".output"),
      });
    } finally {
      process.chdir(cwd);
    }
  });
});
