#!/usr/bin/env node
/**
 * The two-command entry point: `npm test` and `npm run bench` call this. It installs what is missing
 * (pnpm, the Debian packages the project needs when running as root, the workspace dependencies),
 * builds, then runs. Each step is skipped when it is already done, so a second run starts at once.
 *
 *   node scripts/dev.mjs setup            install and build only
 *   node scripts/dev.mjs test [args]      + run every test (vitest args pass through)
 *   node scripts/dev.mjs bench [args]     + run the benchmark: `mcpguard bench [args]`
 *   node scripts/dev.mjs soak [args]      + attack the proxy for a long time: `mcpguard soak [args]`
 */
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const PNPM_VERSION = "12.4.2";
/**
 * Debian packages the project uses: the shell tools the victim servers and cases exec, the BPF
 * toolchain that builds bpf/ (clang-19, libbpf, bpftool), QEMU with a static busybox for the
 * BPF LSM test in a VM, the peer sandboxes the benchmark compares with (bubblewrap, firejail;
 * socat and ripgrep for sandbox-runtime, which comes from npm), and the everyday tools beyond
 * coreutils that the benign corpus's shell calls use.
 */
const APT_PACKAGES = [
  "git",
  "curl",
  "wget",
  "ca-certificates",
  "make",
  "gcc",
  "libc6-dev",
  "clang-19",
  "llvm-19",
  "libbpf-dev",
  "bpftool",
  "libelf-dev",
  "zlib1g-dev",
  "qemu-system-x86",
  "busybox-static",
  "cpio",
  "bubblewrap",
  "firejail",
  "socat",
  "ripgrep",
  // The headless browser the HTML report's test loads the page in (runner/test/page.test.ts).
  "chromium",
  // Tools of the shell server's policy that the benign corpus uses beyond coreutils.
  "jq",
  "sqlite3",
  "bc",
  "file",
  "zip",
  "unzip",
  "xxd",
  // The shell reader's differential test watches the files dash and bash open with strace.
  "strace",
  // A Python MCP server installed the way pipx installs apps (proxy/test/pythonVenv.test.ts).
  "pipx",
];

const env = {
  ...process.env,
  TURBO_TELEMETRY_DISABLED: "1",
  TURBO_NO_UPDATE_NOTIFIER: "1",
  DO_NOT_TRACK: "1",
  NPM_CONFIG_UPDATE_NOTIFIER: "false",
  // The builds write V8 code caches for the Node.js that runs them (proxy, policy, TypeScript
  // victims): turbo's hash names it (turbo.json), so a build made under another Node.js is not replayed.
  MCPGUARD_BUILD_NODE: `${process.version}-${process.arch}`,
};

function say(line) {
  process.stderr.write(`[setup] ${line}\n`);
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: ROOT, stdio: "inherit", env, ...options });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} exited with status ${result.status ?? result.signal}`);
  }
}

function versionOf(command) {
  try {
    return execFileSync(command, ["--version"], {
      encoding: "utf8",
      env,
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return undefined;
  }
}

function ensurePnpm() {
  if (versionOf("pnpm") === PNPM_VERSION) return "pnpm";
  const bin = join(ROOT, ".tools", "node_modules", ".bin");
  const local = join(bin, "pnpm");
  // turbo looks pnpm up on PATH, so the local copy goes first on it.
  env.PATH = `${bin}:${env.PATH ?? ""}`;
  if (versionOf(local) === PNPM_VERSION) return local;
  say(`installing pnpm ${PNPM_VERSION} into .tools/`);
  mkdirSync(join(ROOT, ".tools"), { recursive: true });
  run("npm", [
    "install",
    "--prefix",
    join(ROOT, ".tools"),
    "--no-audit",
    "--no-fund",
    "--no-save",
    `pnpm@${PNPM_VERSION}`,
  ]);
  if (versionOf(local) !== PNPM_VERSION) throw new Error(`pnpm ${PNPM_VERSION} did not install into .tools/`);
  return local;
}

function missingDebianPackages() {
  return APT_PACKAGES.filter((name) => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a dpkg-query format, not a template
    const r = spawnSync("dpkg-query", ["-W", "-f=${Status}", name], { encoding: "utf8" });
    return r.status !== 0 || !r.stdout.includes("install ok installed");
  });
}

function ensureDebianPackages() {
  if (!existsSync("/usr/bin/dpkg-query")) return;
  const missing = missingDebianPackages();
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) {
    say(
      `not root, so these Debian packages stay missing: ${missing.join(" ")} (tests that need them say so)`,
    );
    return;
  }
  say(`installing Debian packages: ${missing.join(" ")}`);
  const aptEnv = { ...env, DEBIAN_FRONTEND: "noninteractive" };
  run("apt-get", ["update", "-qq"], { env: aptEnv });
  run("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...missing], { env: aptEnv });
}

function ensureDependencies(pnpm) {
  const stampFile = join(ROOT, "node_modules", ".mcpguard-install");
  const hash = createHash("sha256");
  hash.update(readFileSync(join(ROOT, "pnpm-lock.yaml")));
  hash.update(PNPM_VERSION);
  const stamp = hash.digest("hex");
  if (existsSync(stampFile) && readFileSync(stampFile, "utf8") === stamp) return;
  say("installing workspace dependencies (pnpm install --frozen-lockfile)");
  run(pnpm, ["install", "--frozen-lockfile", "--reporter=append-only"]);
  writeFileSync(stampFile, stamp);
}

function build(pnpm) {
  // The kernel layer's launcher, loader and BPF programs (make does nothing when they are current),
  // first: the proxy's build primes its code cache by running C-full, which needs them.
  // Where the BPF skeletons cannot be generated (no clang-19, no bpftool, or a bpftool older than
  // the kernel, as on hosted CI runners), make takes the ones vendored in bpf/vendor/<arch>/ and
  // says so; only gcc and libbpf are needed then.
  if (spawnSync("sh", ["-c", "command -v make && command -v gcc"], { stdio: "ignore" }).status === 0) {
    run("make", ["-s", "-C", join(ROOT, "bpf")]);
  } else {
    say(
      "make or gcc is missing: bpf/ is not built, and the bench reports the L3 configs as not run (see mcpguard doctor)",
    );
  }
  run(pnpm, ["exec", "turbo", "run", "build", "--output-logs=errors-only", "--log-prefix=none"]);
  // The Python victims' bytecode (servers/python/__pycache__, gitignored), so that no trial compiles
  // their shared module: they start with -B, which reads bytecode and never writes it.
  if (
    spawnSync("python3", ["-m", "compileall", "-q", "-x", "/tests/", join(ROOT, "servers", "python")], {
      stdio: "inherit",
    }).status !== 0
  ) {
    say("python3 could not compile servers/python: the Python victims start without bytecode");
  }
}

/**
 * The npm cache of the tests that start servers with `npx -y <package>` (as most mcpServers
 * configs do): a cache of the project's own, filled once here, so those tests run offline
 * (`npm_config_offline`), as a user whose npx has the package cached. Without the registry the
 * step is skipped and those tests say so.
 */
const NPX_PACKAGES = ["@modelcontextprotocol/server-filesystem"];

function ensureNpxCache() {
  const cache = join(ROOT, ".cache", "npm");
  // Outside the checkout, whose node_modules npx would take the package from.
  const npx = (extra, pkg) =>
    spawnSync("npx", ["--yes", "--ignore-scripts", ...extra, `--package=${pkg}`, "-c", "true"], {
      cwd: tmpdir(),
      env: { ...env, npm_config_cache: cache },
      stdio: ["ignore", "ignore", "pipe"],
      encoding: "utf8",
      timeout: 300_000,
    });
  for (const pkg of NPX_PACKAGES) {
    if (npx(["--offline"], pkg).status === 0) continue;
    say(`filling the tests' npm cache with ${pkg} (.cache/npm)`);
    const r = npx([], pkg);
    if (r.status !== 0)
      say(`could not cache ${pkg}; the npx tests will be skipped: ${(r.stderr ?? "").trim().split("\n")[0]}`);
  }
}

function setup() {
  const pnpm = ensurePnpm();
  ensureDebianPackages();
  ensureDependencies(pnpm);
  build(pnpm);
  ensureNpxCache();
  return pnpm;
}

const [task = "setup", ...rest] = process.argv.slice(2);
try {
  const pnpm = setup();
  if (task === "test") {
    mkdirSync(join(ROOT, ".test-results"), { recursive: true });
    run(pnpm, [
      "exec",
      "vitest",
      "run",
      "--reporter=default",
      "--reporter=json",
      "--outputFile.json=.test-results/vitest.json",
      ...rest,
    ]);
  } else if (task === "bench") {
    // Every config built here, all cases, one trial unless told otherwise; the table and the report path are printed.
    run(process.execPath, [join(ROOT, "packages", "proxy", "bin", "mcpguard.js"), "bench", ...rest]);
  } else if (task === "soak") {
    // The proxy under attack for a long time (mcpguard soak --help): kills and generated frames.
    run(process.execPath, [join(ROOT, "packages", "proxy", "bin", "mcpguard.js"), "soak", ...rest]);
  } else if (task !== "setup") {
    throw new Error(`unknown task "${task}" (setup, test, bench, soak)`);
  }
} catch (error) {
  process.stderr.write(`[setup] ${error.message}\n`);
  process.exit(1);
}
