/**
 * The kernel layer a packed mcpguard carries (bundle.mjs --pack, for `npm run pack:bin`): built
 * once here, at pack time, for this machine's architecture (`make -C bpf package`), and copied into
 * the package as `bpf/<machine>/` (os.machine(): x86_64, aarch64), stripped:
 * - mcpguard-exec, the launcher (static);
 * - mcpguard-loader, the BPF loader, linked statically here (bpf/.output/static/), so the host it
 *   is installed on needs no libbpf, libelf or zlib; its BPF programs are inside it (skeletons),
 *   compiled once for CO-RE, so they load on any kernel with BTF;
 * - mcpguard-reaper (static).
 * `bpf/kernel-layer.json` says what was packed, for each machine (one, this one): the folder, the
 * ELF machine of each file and its sha256, what the kernel must offer, and where and from what it
 * was built. The installed mcpguard finds it beside its bundle (@mcpguard/kernel, binaries.ts) and
 * refuses L3 on another machine in one line; `doctor` checks each file against its sha256.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { machine, release } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { KERNEL_LAYER_MANIFEST, LANDLOCK_MIN_ABI } from "@mcpguard/kernel";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const BPF = join(REPO, "bpf");

/** What the package ships, by its name there, from bpf/.output. */
const FILES = {
  "mcpguard-exec": "mcpguard-exec",
  "mcpguard-loader": "static/mcpguard-loader",
  "mcpguard-reaper": "mcpguard-reaper",
};

/** ELF e_machine of the architectures bpf/seccomp.h knows. */
const ELF_MACHINE = { x86_64: 62, aarch64: 183 };

/** An ELF file's e_machine, and whether it asks for a dynamic loader (a PT_INTERP header). */
function readElf(file) {
  const b = readFileSync(file);
  if (b.readUInt32BE(0) !== 0x7f454c46 || b[4] !== 2 || b[5] !== 1)
    throw new Error(`${file}: not a 64-bit little-endian ELF file`);
  const phoff = Number(b.readBigUInt64LE(0x20));
  const phentsize = b.readUInt16LE(0x36);
  const phnum = b.readUInt16LE(0x38);
  let interp = false;
  for (let i = 0; i < phnum; i++) if (b.readUInt32LE(phoff + i * phentsize) === 3) interp = true;
  return { machine: b.readUInt16LE(0x12), interp };
}

function git(...args) {
  try {
    return execFileSync("git", ["-C", REPO, ...args], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
  } catch {
    return undefined;
  }
}

/** Build the kernel layer for this machine and put it into the package folder `pack`. */
export function packKernelLayer(pack) {
  const arch = machine();
  if (!(arch in ELF_MACHINE))
    throw new Error(
      `pack-kernel.mjs: the launcher's seccomp filter knows x86_64 and aarch64 only, not ${arch}`,
    );
  // make's own lines go to stderr: bundle.mjs's stdout is its caller's.
  execFileSync("make", ["-C", BPF, "package"], { stdio: ["ignore", 2, 2] });
  const root = join(pack, "bpf");
  rmSync(root, { recursive: true, force: true });
  const dir = join(root, arch);
  mkdirSync(dir, { recursive: true });
  const files = {};
  for (const [name, from] of Object.entries(FILES)) {
    const target = join(dir, name);
    copyFileSync(join(BPF, ".output", from), target);
    execFileSync("strip", [target]);
    chmodSync(target, 0o755);
    const elf = readElf(target);
    if (elf.machine !== ELF_MACHINE[arch])
      throw new Error(`pack-kernel.mjs: ${from} is for ELF machine ${elf.machine}, not ${arch}`);
    if (elf.interp)
      throw new Error(`pack-kernel.mjs: ${from} is linked dynamically; the package needs it static`);
    const bytes = readFileSync(target);
    files[name] = {
      sha256: createHash("sha256").update(bytes).digest("hex"),
      bytes: bytes.length,
      linked: "static",
      from: `bpf/.output/${from}`,
    };
  }
  const commit = git("rev-parse", "HEAD")?.trim();
  const build = {
    dir: arch,
    machine: arch,
    node: process.arch,
    files,
    needs: {
      kernel: "Linux on the same machine architecture, run as root, with a writable cgroup2 hierarchy",
      btf: "/sys/kernel/btf/vmlinux (CONFIG_DEBUG_INFO_BTF): the BPF programs are CO-RE",
      landlockAbi: LANDLOCK_MIN_ABI,
    },
    packedOn: `Linux ${release()}`,
    packedAt: new Date().toISOString(),
    ...(commit ? { commit, bpfChanged: git("status", "--porcelain", "--", "bpf")?.trim() !== "" } : {}),
  };
  writeFileSync(
    join(root, KERNEL_LAYER_MANIFEST),
    `${JSON.stringify({ format: 1, builds: { [arch]: build } }, null, 2)}\n`,
  );
  return build;
}
