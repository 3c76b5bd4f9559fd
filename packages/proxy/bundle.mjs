/**
 * Second half of the proxy's build (`pnpm run build` here, through turbo, after tsc): the CLI
 * started from one file and a V8 code cache instead of about a hundred modules.
 * - dist/mcpguard-<hash>.bundle.cjs: dist/cli.js and everything it imports, the workspace packages'
 *   dist/ and zod included, bundled by esbuild into one CommonJS file. The lazily loaded commands
 *   and layers stay lazy: esbuild turns each import() into a call that runs that module's code
 *   the first time it is asked for, so `run --config C0` still runs no policy, validator or kernel
 *   code. Each `import.meta.url` becomes the URL of the module's own file in dist/ (computed from
 *   the bundle's directory at run time), so that every lookup relative to a module (package.json
 *   for --version, bpf/.output, node_modules/.bin, bin/mcpguard.js, and acorn and mvdan-sh, which
 *   the readers package requires through code caches of its own) finds the same file as from dist/
 *   unbundled.
 *   zod's error messages are bundled in English only (scripts/zod-english.mjs): its other languages
 *   were a quarter of the bundle, read at every start for nothing. zod itself is zod/mini's functional
 *   API: classic zod, which builds its methods onto every schema, cost about 9.5 ms of each start that
 *   reads a policy, manifest or probe cache (zod/mini 1.2 ms). The build fails if classic zod or
 *   another language gets into the bundle.
 * - dist/mcpguard.cjs, which bin/mcpguard.js requires: runs the bundle through loader.cjs;
 * - two code caches in dist/code-cache/<node version>-<arch>/, each made by running the bundle once
 *   over the test fixture server through initialize, tools/list and three tool calls, allowed and
 *   refused (prime.cjs), and written atomically: mcpguard-<bundle hash>.bin as `mcpguard run
 *   --config C-full` (L1, L2 and the kernel layer's code: 8 ms less of a C-full start than a cache
 *   without the kernel layer; as C-app where `mcpguard doctor` says L3 cannot run here), for
 *   every command, and mcpguard-<bundle hash>-c0.bin as `run --config C0`,
 *   which bin/mcpguard.js takes for C0 (the default config): it holds only what C0 runs, so V8 reads
 *   about half as much at the start of the config with the tightest start-up budget.
 * `mcpguard run` only reads dist/; nothing at run time writes a cache.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { primeSession, sessionMessages } from "../../scripts/prime-session.mjs";
import { zodEnglishOnly } from "../../scripts/zod-english.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = join(HERE, "..", "..");
/**
 * `node bundle.mjs --pack DIR`: a package folder instead, DIR/{package.json,bin,dist,bpf}, for `npm
 * pack` (packages/proxy itself depends on the workspace's packages, which are not published). There
 * acorn and mvdan-sh are bundled too, and the kernel layer is built for this machine and carried in
 * DIR/bpf (pack-kernel.mjs); $MCPGUARD_BPF_DIR still overrides it where the package is installed.
 */
const PACK = process.argv[2] === "--pack" && process.argv[3] ? resolve(process.argv[3]) : undefined;
const DIST = PACK ? join(PACK, "dist") : join(HERE, "dist");

/** Each module's `import.meta.url` as the URL of its own file, relative to the bundle's directory. */
const importMetaUrl = {
  name: "import-meta-url",
  setup(b) {
    b.onLoad({ filter: /\.js$/, namespace: "file" }, (args) => {
      const source = readFileSync(args.path, "utf8");
      // The workspace's modules only (dependencies from node_modules are left to esbuild).
      if (args.path.includes(`${sep}node_modules${sep}`)) return undefined;
      // In a package folder the readers package's own dependencies (acorn, mvdan-sh) are not beside
      // it: bundled, lazily. In the checkout they are required through the readers package's code
      // caches (requireCached).
      const own = PACK ? source.replace(/\brequireCached\(("[\w-]+")\)/g, "require($1)") : source;
      if (!own.includes("import.meta")) return own === source ? undefined : { contents: own, loader: "js" };
      let rel = relative(join(HERE, "dist"), args.path).split(sep).join("/");
      // In a package folder, another workspace package's module is given a path inside the package
      // (DIR/workspace/packages/<name>/dist/..., which does not exist: its code is in the bundle), so
      // that a lookup upwards from it, such as the kernel layer's (binaries.ts), finds the package's
      // own files and never leaves it for the folder it is installed in.
      if (PACK && rel.startsWith("../"))
        rel = `../workspace/${relative(REPO, args.path).split(sep).join("/")}`;
      const contents = own.replaceAll("import.meta.url", `__mcpguardModuleUrl(${JSON.stringify(rel)})`);
      // Any other use of import.meta (import.meta.dirname, ...) would be empty in a CommonJS bundle.
      if (/import\.meta[^\s"']/.test(contents)) throw new Error(`${args.path}: import.meta other than .url`);
      return { contents, loader: "js" };
    });
  },
};

/** Write `bytes` to `file` through a temporary file renamed over it. */
function writeAtomic(file, bytes) {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, bytes);
  renameSync(temporary, file);
}

/**
 * The bundle as ASCII bytes, which loader.cjs reads as latin1 (no UTF-8 decoding at each start).
 * esbuild escapes every other character in strings and templates (its ASCII charset) but keeps it in
 * comments and regular expression literals: a line that is a comment has it replaced by "?" (in a
 * string or template it would have been escaped already, so such a line is a comment); a regular
 * expression must say \uXXXX in its source. Anything left fails the build, as it would slow every
 * start.
 */
function asciiOnly(text) {
  const out = text
    .split("\n")
    .map((line) => (/^\s*\/\//.test(line) ? line.replace(/[\u0080-\uffff]/g, "?") : line))
    .join("\n");
  const left = out.split("\n").findIndex((line) => /[\u0080-\uffff]/.test(line));
  if (left !== -1) {
    // A non-ASCII character in the code (a regular expression literal, which esbuild keeps as
    // written) makes V8 read the whole bundle as UTF-8 on every start: write it as \uXXXX instead.
    process.stderr.write(
      `bundle.mjs: line ${left + 1} of the bundle is not ASCII, so every start would read it as UTF-8; write the character as \\uXXXX in the source: ${out.split("\n")[left].trim().slice(0, 120)}\n`,
    );
    process.exit(1);
  }
  return Buffer.from(out, "utf8");
}

/**
 * esbuild defines every export of every module as a getter on the module's namespace object at the
 * bundle's top level, even for a module it initializes lazily (an `__esm` wrapper, such as zod and
 * the policy layers, which `run --config C0` never loads): 1,100 getters at every start. For such a
 * module the definition moves into its initializer, which esbuild calls before any use of the
 * module (an import, a require, an import()). A module is recognized by its `// <path>` header (an
 * annotation esbuild keeps as a line comment, such as zod/mini's `// @__NO_SIDE_EFFECTS__`, is no
 * header), its one `__export(<name>, {...});` of `name: () => name` entries and its `__esm` keyed by
 * the same path; any other shape is left as esbuild wrote it. Returns the text and how many were moved.
 */
function lazyExports(text) {
  let moved = 0;
  const sections = text.split(/^(?=\/\/ (?!@__)\S.*$)/m).map((section) => {
    const path = /^\/\/ (\S.*)$/m.exec(section)?.[1];
    const exported = /^__export\([\w$]+, \{\n(?: {2}[\w$]+: \(\) => [\w$]+,?\n)*\}\);\n/m.exec(section);
    if (path === undefined || !exported) return section;
    const opening = `= __esm({\n  ${JSON.stringify(path)}() {\n`;
    const init = section.indexOf(opening);
    if (init < exported.index || section.indexOf(opening, init + 1) !== -1) return section;
    moved++;
    const at = init + opening.length;
    return (
      section.slice(0, exported.index) +
      section.slice(exported.index + exported[0].length, at) +
      exported[0] +
      section.slice(at)
    );
  });
  return { text: sections.join(""), moved };
}

/** The bundle, dist/mcpguard-<hash>.bundle.cjs, and loader.cjs beside it; returns the hash. */
async function bundle() {
  const result = await build({
    stdin: {
      contents:
        'import { main } from "./cli.js";\n' +
        "main(process.argv.slice(2)).then((code) => { process.exitCode = code; });\n",
      resolveDir: join(HERE, "dist"),
      sourcefile: "mcpguard-main.js",
      loader: "js",
    },
    outfile: join(DIST, "mcpguard.bundle.cjs"),
    write: false,
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    // acorn and mvdan-sh stay run-time requires, from the readers package's files and code caches.
    banner: {
      js:
        '"use strict";\nconst __mcpguardModuleUrl = (rel) => require("node:url").pathToFileURL(' +
        'require("node:path").join(__dirname, rel)).href;',
    },
    plugins: [importMetaUrl, zodEnglishOnly],
    legalComments: "none",
    logLevel: "warning",
  });
  const lazy = lazyExports(result.outputFiles[0].text);
  // zod/mini's iso namespace at least: a bundle where none moved means esbuild's output changed shape.
  if (lazy.moved === 0)
    throw new Error("bundle.mjs: no lazily initialized module's exports were found to move");
  // esbuild names each module it bundles in a comment: classic zod's or another language's must not be one.
  const zod = /zod\/v4\/(?:classic\/[\w-]+|locales\/(?!en\.js|english-only\.js)[\w-]+)\.js/.exec(lazy.text);
  if (zod)
    throw new Error(
      `bundle.mjs: ${zod[0]} is in the bundle; the CLI takes zod/mini, with English messages only`,
    );
  const code = asciiOnly(lazy.text);
  const hash = createHash("sha256").update(code).digest("hex").slice(0, 16);
  writeAtomic(join(DIST, `mcpguard-${hash}.bundle.cjs`), code);
  writeAtomic(join(DIST, "loader.cjs"), readFileSync(join(HERE, "..", "..", "scripts", "code-cache.cjs")));
  return hash;
}

/**
 * dist/mcpguard.cjs, the entry bin/mcpguard.js requires, naming the bundle and its caches by hash;
 * written once the caches are, then the bundles and caches of earlier builds are removed. Run as a
 * script it starts the CLI from the full cache; required, it exports start(cache), "c0" or "full".
 */
function publish(hash) {
  const bundleFile = JSON.stringify(`mcpguard-${hash}.bundle.cjs`);
  const full = JSON.stringify(`mcpguard-${hash}`);
  const c0 = JSON.stringify(`mcpguard-${hash}-c0`);
  writeAtomic(
    join(DIST, "mcpguard.cjs"),
    "// Generated by packages/proxy/bundle.mjs: runs the bundle from a code cache (loader.cjs).\n" +
      '"use strict";\n' +
      `const start = (cache) => require("./loader.cjs").start(__dirname, ${bundleFile}, cache === "c0" ? ${c0} : ${full});\n` +
      'if (require.main === module) start("full");\nelse module.exports = start;\n',
  );
  for (const name of readdirSync(DIST))
    if (/^mcpguard-[0-9a-f]{16}\.bundle\.cjs$/.test(name) && !name.includes(hash)) rmSync(join(DIST, name));
  const caches = join(DIST, "code-cache");
  for (const dir of existsSync(caches) ? readdirSync(caches) : [])
    for (const name of readdirSync(join(caches, dir)))
      if (!name.includes(hash) || dir !== `${process.version}-${process.arch}`)
        rmSync(join(caches, dir, name));
}

/**
 * Run the bundle once as `mcpguard run` under `config` (initialize, tools/list and three calls) so
 * that prime.cjs writes the code cache `cacheName`: C-full's has L1, L2 and L3 in it, C-app's L1 and
 * L2, C0's only the relay.
 */
function prime(hash, scratch, config, cacheName) {
  // Tool calls too, allowed and refused, so that what L1 and L2 run on a call (argument checks,
  // path resolution, the result's sanitizer, the deny path and its audit record) is in the cache:
  // otherwise a fresh session's first call compiles it, and pays for that on the call's path.
  const messages = sessionMessages([
    { method: "tools/list" },
    { method: "tools/call", params: { name: "echo", arguments: { text: "hello" } } },
    {
      method: "tools/call",
      params: { name: "read", arguments: { path: join(scratch, "data", "note.txt") } },
    },
    { method: "tools/call", params: { name: "read", arguments: { path: "/etc/hostname" } } },
  ]);
  mkdirSync(join(scratch, "data"), { recursive: true });
  writeFileSync(join(scratch, "data", "note.txt"), "a note for the build\n");
  const fixtures = join(HERE, "test", "fixtures");
  // The fixture's policy, with a read grant narrower than the working directory (the scratch one).
  const policy = JSON.parse(readFileSync(join(fixtures, "policy.json"), "utf8"));
  policy.tools.read.read = ["{{cwd}}/data/**"];
  writeFileSync(join(scratch, "policy.json"), JSON.stringify(policy));
  const layers =
    config === "C0"
      ? []
      : ["--policy", join(scratch, "policy.json"), "--audit-log", join(scratch, "audit.jsonl")];
  const argv = ["run", "--config", config, ...layers, "--", process.execPath, join(fixtures, "server.mjs")];
  return primeSession({
    script: join(HERE, "prime.cjs"),
    args: [DIST, hash, cacheName, ...argv],
    messages,
    scratch,
    what: "the proxy",
  });
}

/** Why `mcpguard doctor --json` says L3 cannot run: the capabilities without a backend, else its first line of stderr. */
function doctorSays(doctor) {
  try {
    const report = JSON.parse(doctor.stdout);
    const missing = Object.entries(report.capabilities ?? {}).filter(([, c]) => c?.backend === null);
    if (missing.length) return missing.map(([name, c]) => `${name}: ${c.detail}`).join("; ");
  } catch {
    // Not a report: its stderr says why.
  }
  return (doctor.stderr ?? "").trim().split("\n")[0] || `exit status ${doctor.status}`;
}

mkdirSync(DIST, { recursive: true });
if (PACK) {
  const own = JSON.parse(readFileSync(join(HERE, "package.json"), "utf8"));
  const pkg = {
    name: "mcpguard",
    version: own.version,
    description: own.description,
    type: "module",
    engines: own.engines,
    bin: { mcpguard: "./bin/mcpguard.js" },
    files: ["bin", "dist", "bpf", "workspace"],
  };
  writeFileSync(join(PACK, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
  mkdirSync(join(PACK, "bin"), { recursive: true });
  copyFileSync(join(HERE, "bin", "mcpguard.js"), join(PACK, "bin", "mcpguard.js"));
  // It says bin/mcpguard.js is CommonJS, in a package of ES modules.
  copyFileSync(join(HERE, "bin", "package.json"), join(PACK, "bin", "package.json"));
  chmodSync(join(PACK, "bin", "mcpguard.js"), 0o755);
  const { packKernelLayer } = await import("./pack-kernel.mjs");
  packKernelLayer(PACK);
  // The Python reader's helper (a file the readers package runs with python3) where its bundled
  // module looks for it: beside that module's path in the package.
  const reader = join(PACK, "workspace", "packages", "readers", "dist", "code");
  mkdirSync(reader, { recursive: true });
  copyFileSync(join(REPO, "packages", "readers", "dist", "code", "pyast.py"), join(reader, "pyast.py"));
}
const scratch = mkdtempSync(join(tmpdir(), "mcpguard-proxy-build-"));
try {
  const hash = await bundle();
  // C-full where `mcpguard doctor` says the kernel layer runs here (then a failure fails the build);
  // elsewhere (not root, no BPF) C-app, and a C-full start compiles the kernel layer's code from
  // source (about 8 ms).
  // The new bundle's own doctor, through prime.cjs (its cache name "-": none written):
  // dist/mcpguard.cjs is written only once the caches are, and names an earlier build's bundle or none.
  const doctor = spawnSync(process.execPath, [join(HERE, "prime.cjs"), DIST, hash, "-", "doctor", "--json"], {
    cwd: scratch,
    encoding: "utf8",
  });
  if (doctor.status === 0) await prime(hash, scratch, "C-full", `mcpguard-${hash}`);
  else {
    const why = doctorSays(doctor);
    process.stdout.write(
      `proxy build: the kernel layer cannot run here (mcpguard doctor: ${why}); code cache primed with C-app\n`,
    );
    await prime(hash, scratch, "C-app", `mcpguard-${hash}`);
  }
  await prime(hash, scratch, "C0", `mcpguard-${hash}-c0`);
  publish(hash);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
