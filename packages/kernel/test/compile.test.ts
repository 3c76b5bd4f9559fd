import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  checkSockets,
  compile,
  encodeRecords,
  interpreterOf,
  type KernelNeeds,
  planAccess,
  which,
  writablePaths,
} from "../src/compile.ts";
import { capabilityBackends, hardeningBackends, type ProbeResult } from "../src/probe.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "mcpguard-compile-")));
const ws = join(root, "workspace");
mkdirSync(join(ws, "data"), { recursive: true });
writeFileSync(join(ws, "app.db"), "");
const script = join(root, "server.mjs");
writeFileSync(script, "");
afterAll(() => rmSync(root, { recursive: true, force: true }));

const node = realpathSync(process.execPath);
const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
const none: KernelNeeds = { read: [], write: [], exec: [], network: [], shell: false };
/** The records of the kernel-side format (bpf/input.h), each as its fields joined by spaces. */
const records = (encoded: string) =>
  encoded
    .split("\0\0")
    .filter(Boolean)
    .map((r) => r.split("\0").join(" "));
const rules = (ruleset: string) => records(ruleset).filter((l) => l.startsWith("fs "));
const ruleFor = (ruleset: string, path: string) => rules(ruleset).find((l) => l.endsWith(` ${path}`));

describe("compile", () => {
  it("grants the interpreter, its ELF loader and its script, and nothing of /proc, /etc or HOME", async () => {
    const { ruleset } = await compile(none, [process.execPath, script], env);
    expect(ruleFor(ruleset, node)).toBe(`fs execute,read_file ${node}`);
    const ld = interpreterOf(node);
    expect(ld).toMatch(/ld-linux/);
    expect(ruleFor(ruleset, realpathSync(ld as string))).toMatch(/^fs execute,read_file /);
    expect(ruleFor(ruleset, root)).toBe(`fs read_dir,read_file ${root}`);
    expect(records(ruleset).slice(0, 4)).toEqual([
      "mcpguard-ruleset 1",
      "abi 6",
      "scope signal",
      "scope abstract-unix",
    ]);
    for (const line of rules(ruleset)) {
      const path = line.split(" ").slice(2).join(" ");
      expect(path, line).not.toMatch(/^\/(proc|sys|root|home)(\/|$)|^\/etc$|^\/etc\/(passwd|shadow)/);
    }
  });

  it("grants /proc whole, read-only, only where the server has a /proc of its own, and says so", async () => {
    const own = await compile(none, [process.execPath, script], env, undefined, { privateProc: true });
    expect(ruleFor(own.ruleset, "/proc")).toBe("fs read_dir,read_file /proc");
    expect(rules(own.ruleset).filter((l) => / \/proc\//.test(l))).toEqual([]);
    expect(own.notes).toContainEqual(expect.stringMatching(/a \/proc of its own/));
    const host = await compile(none, [process.execPath, script], env, undefined, { privateProc: false });
    expect(ruleFor(host.ruleset, "/proc")).toBeUndefined();
  });

  it("grants reads, writes (a missing file through its directory) and programs from the needs", async () => {
    const needs: KernelNeeds = {
      read: [join(ws, "data")],
      write: [join(ws, "app.db"), join(ws, "app.db-journal")],
      exec: ["git log", "sh"],
      network: [],
      shell: true,
    };
    const { ruleset, notes } = await compile(needs, [process.execPath, script], env);
    expect(ruleFor(ruleset, join(ws, "data"))).toBe(`fs read_dir,read_file ${join(ws, "data")}`);
    expect(ruleFor(ruleset, join(ws, "app.db"))).toBe(
      `fs read_file,truncate,write_file ${join(ws, "app.db")}`,
    );
    expect(ruleFor(ruleset, ws)).toMatch(/make_reg/);
    expect(ruleFor(ruleset, ws)).not.toMatch(/execute/);
    expect(notes).toContainEqual(expect.stringMatching(/app\.db-journal does not exist yet/));
    const git = which("git", env.PATH);
    expect(git).toBeDefined();
    expect(ruleFor(ruleset, git as string)).toBe(`fs execute,read_file ${git}`);
    expect(ruleFor(ruleset, which("sh", env.PATH) as string)).toMatch(/^fs execute,read_file /);
  });

  it("compiles from a plan (planAccess, read once and judged by the caller) exactly what it compiles without one", async () => {
    const needs: KernelNeeds = {
      read: [join(ws, "data")],
      write: [join(ws, "app.db"), join(ws, "app.db-journal")],
      exec: ["git log"],
      network: ["127.0.0.1:443"],
      shell: true,
    };
    const argv = [process.execPath, script];
    for (const options of [{}, { privateProc: true }]) {
      const plan = planAccess(needs, argv, env);
      const planned = await compile(needs, argv, env, undefined, { ...options, plan });
      expect(planned).toEqual(await compile(needs, argv, env, undefined, options));
      // The plan is copied, never added to: it says what it said when it was judged.
      expect(plan).toEqual(planAccess(needs, argv, env));
    }
  });

  it("lets the server read the certificate authorities its environment names, and no other file a variable names", async () => {
    const ca = join(root, "corp-ca.pem");
    writeFileSync(ca, "-----BEGIN CERTIFICATE-----\n");
    const trusted = { ...env, NODE_EXTRA_CA_CERTS: ca, SSL_CERT_DIR: ws, OTHER_FILE: join(ws, "app.db") };
    const { ruleset } = await compile(none, [process.execPath, script], trusted);
    expect(ruleFor(ruleset, ca)).toBe(`fs read_dir,read_file ${ca}`);
    expect(ruleFor(ruleset, ws)).toBe(`fs read_dir,read_file ${ws}`);
    expect(ruleFor(ruleset, join(ws, "app.db"))).toBeUndefined();
    // A relative or missing path grants nothing.
    const loose = { ...env, SSL_CERT_FILE: "corp-ca.pem", CURL_CA_BUNDLE: join(root, "missing.pem") };
    expect(rules((await compile(none, [process.execPath, script], loose)).ruleset)).toEqual(
      rules((await compile(none, [process.execPath, script], env)).ruleset),
    );
  });

  it("lets a write grant move files within itself (refer), never a read grant or a file grant", async () => {
    const needs: KernelNeeds = {
      ...none,
      read: [join(ws, "data")],
      write: [ws, join(ws, "app.db"), join(root, "new", "x.txt")],
    };
    const { ruleset } = await compile(needs, [process.execPath, script], env);
    expect(ruleFor(ruleset, ws)).toMatch(/^fs \S*\bmake_reg\b\S*\brefer\b\S*\bremove_file\b/);
    // A file that does not exist yet is granted through its folder, with refer too.
    expect(ruleFor(ruleset, root)).toMatch(/^fs .*\brefer\b/);
    expect(ruleFor(ruleset, join(ws, "app.db"))).not.toMatch(/refer/);
    expect(ruleFor(ruleset, join(ws, "data"))).not.toMatch(/refer/);
  });

  it("grants what #!/usr/bin/env runs: a script's interpreter is a program too", async () => {
    const tool = join(root, "tool.js");
    writeFileSync(tool, "#!/usr/bin/env sh\n", { mode: 0o755 });
    const sh = which("sh", env.PATH) as string;
    const without = await compile(none, [process.execPath, script], env);
    expect(ruleFor(without.ruleset, sh)).toBeUndefined();
    const { ruleset } = await compile({ ...none, exec: [tool] }, [process.execPath, script], env);
    expect(ruleFor(ruleset, tool)).toBe(`fs execute,read_file ${tool}`);
    const envBin = realpathSync("/usr/bin/env");
    expect(ruleFor(ruleset, envBin)).toBe(`fs execute,read_file ${envBin}`);
    expect(ruleFor(ruleset, sh)).toBe(`fs execute,read_file ${sh}`);
  });

  it("limits TCP ports with Landlock and addresses with the loader", async () => {
    const needs = { ...none, network: ["127.0.0.1:8443", "[::1]:9000", "nowhere.invalid:443"] };
    const { ruleset, loaderPolicy, notes } = await compile(needs, [process.execPath, script], env);
    expect(records(ruleset).join("\n")).toContain(
      "handle net\nnet connect 8443\nnet connect 9000\nnet connect 443\n",
    );
    expect(records(loaderPolicy)).toContain("net allow4 127.0.0.1 8443");
    expect(records(loaderPolicy)).toContain("net allow6 ::1 9000");
    expect(notes).toContainEqual(expect.stringMatching(/nowhere\.invalid did not resolve/));
    const open = await compile({ ...none, network: ["127.0.0.1"] }, [process.execPath, script], env);
    expect(records(open.ruleset)).not.toContain("handle net");
    expect(open.notes).toContainEqual(expect.stringMatching(/without a port/));
  });

  it("lets a server resolve the hosts its policy names, and only then", async () => {
    const byAddress = await compile(
      { ...none, network: ["127.0.0.1:8443"] },
      [process.execPath, script],
      env,
    );
    expect(ruleFor(byAddress.ruleset, "/etc/resolv.conf")).toBeUndefined();
    expect(records(byAddress.loaderPolicy).filter((r) => / 53$/.test(r))).toEqual([]);
    const { ruleset, loaderPolicy, notes } = await compile(
      { ...none, network: ["localhost:8443"] },
      [process.execPath, script],
      env,
    );
    for (const file of ["/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf"].filter(existsSync))
      expect(ruleFor(ruleset, realpathSync(file)), file).toBe(`fs read_file ${realpathSync(file)}`);
    expect(ruleFor(ruleset, "/etc/passwd")).toBeUndefined();
    const servers = [...readFileSync("/etc/resolv.conf", "utf8").matchAll(/^nameserver\s+(\S+)/gm)].map(
      (m) => m[1] as string,
    );
    for (const server of servers.length ? servers : ["127.0.0.1"])
      expect(records(loaderPolicy)).toContainEqual(expect.stringMatching(new RegExp(` ${server} 53$`)));
    expect(records(ruleset)).toContain("net connect 53");
    expect(notes).toContainEqual(
      expect.stringMatching(/localhost is a name: .*DNS queries can carry data out/),
    );
  });

  it("passes a path with '#', a newline, spaces and non-ASCII letters whole, in one field", async () => {
    const odd = join(root, "C#proj\nwith  spaces é", "ws");
    mkdirSync(odd, { recursive: true });
    const { ruleset, loaderPolicy } = await compile(
      { ...none, read: [odd] },
      [process.execPath, script],
      env,
    );
    expect(ruleset).toContain(`\0fs\0read_dir,read_file\0${odd}\0\0`);
    expect(loaderPolicy).toContain(`\0fs\0r\0${odd}\0\0`);
    expect(ruleset.startsWith("mcpguard-ruleset\x001\0\0")).toBe(true);
    expect(loaderPolicy.startsWith("mcpguard-policy\x001\0\0")).toBe(true);
  });

  it("refuses to encode a field that is empty or holds NUL", () => {
    expect(() => encodeRecords(["h", "1"], [["fs", "read_file", "/a\0b"]])).toThrow(/holding NUL/);
    expect(() => encodeRecords(["h", "1"], [["fs", "", "/a"]])).toThrow(/empty/);
  });

  it("refuses a server program it cannot find", async () => {
    await expect(compile(none, ["no-such-program-anywhere"], env)).rejects.toThrow(
      /cannot find the server's program/,
    );
  });
});

describe("unix socket grants", () => {
  const grant =
    (sockets: string[], write: string[] = []) =>
    () =>
      checkSockets({ ...none, write, sockets }, env);

  it("go to the loader as they are named, one record each", async () => {
    const compiled = await compile({ ...none, sockets: ["/run/app.sock"] }, [node, script], env);
    expect(records(compiled.loaderPolicy)).toContain("unix /run/app.sock");
  });

  it("are one absolute, normal path of at most 108 bytes, outside every folder the server may write", () => {
    expect(grant(["/run/app.sock", "/nonexistent/folder/app.sock"])).not.toThrow();
    for (const path of ["run/app.sock", "/run/../run/app.sock", "/run//app.sock", "/run/app.sock/"])
      expect(grant([path]), path).toThrow(/absolute path without/);
    expect(grant([`/${"s".repeat(108)}`])).toThrow(/longer than the 108 bytes/);
    // In a write grant, or below one in a folder not made yet.
    for (const path of [join(ws, "app.sock"), join(ws, "not", "yet", "app.sock")])
      expect(grant([path], [ws]), path).toThrow(/which the server may write/);
    // A write grant below the socket's folder changes nothing on its way.
    expect(grant([join(root, "app.sock")], [ws])).not.toThrow();
  });

  it("are walked as the kernel walks them: a symlink leading into a write grant or onto procfs refuses, one that does not is fine", () => {
    const sockets = join(root, "sockets");
    mkdirSync(join(root, "elsewhere"), { recursive: true });
    mkdirSync(sockets, { recursive: true });
    symlinkSync(ws, join(sockets, "via-link"));
    symlinkSync(join(ws, "real.sock"), join(sockets, "link.sock"));
    symlinkSync(join(ws, "not-yet"), join(sockets, "dangling"));
    symlinkSync(root, join(ws, "out"));
    symlinkSync(join(ws, "out", "elsewhere"), join(sockets, "hop"));
    symlinkSync("../elsewhere", join(sockets, "fine"));
    // The socket's own name, a link whose target is missing, a hop through a link in a write grant.
    for (const path of [
      join(sockets, "via-link", "app.sock"),
      join(sockets, "link.sock"),
      join(sockets, "dangling", "app.sock"),
      join(sockets, "hop", "app.sock"),
    ])
      expect(grant([path], [ws]), path).toThrow(/leads through .* which the server may write/);
    // procfs's links lead where the process that follows them points them.
    for (const path of ["/dev/fd/3", "/proc/1/fd/3", "/proc/1/cwd/app.sock"])
      expect(grant([path]), path).toThrow(/leads through procfs \(\/proc/);
    // A link no grant reaches, to a folder no grant reaches: the name leads to one socket.
    expect(grant([join(sockets, "fine", "app.sock")], [ws])).not.toThrow();
  });

  it.skipIf(process.getuid?.() !== 0)(
    "judge folders by their filesystem, not their spelling: a bind mount of a write grant, or a mount beneath one, is the grant",
    () => {
      const alias = join(root, "alias");
      const host = join(root, "host-folder");
      mkdirSync(alias, { recursive: true });
      mkdirSync(host, { recursive: true });
      mkdirSync(join(ws, "sub"), { recursive: true });
      const mount = (...args: string[]) => spawnSync("mount", args, { encoding: "utf8" });
      expect(mount("--bind", ws, alias).status).toBe(0);
      try {
        mount("--bind", host, join(ws, "sub"));
        expect(grant([join(alias, "app.sock")], [ws])).toThrow(
          /leads through .*alias, which the server may write/,
        );
        expect(grant([join(host, "later.sock")], [ws])).toThrow(
          /leads through .*host-folder, which the server may write/,
        );
      } finally {
        spawnSync("umount", [join(ws, "sub")]);
        spawnSync("umount", [alias]);
      }
    },
  );
});

describe("capability backends", () => {
  const probe = (p: Partial<ProbeResult>): ProbeResult => ({
    root: true,
    landlockAbi: 7,
    cgroupBpf: true,
    tpBtf: true,
    unixBpf: true,
    lsm: false,
    seccomp: true,
    namespaces: true,
    pidNamespace: true,
    errors: {},
    ...p,
  });

  it("pick Landlock and cgroup BPF where BPF LSM is refused, BPF LSM where it loads", () => {
    expect(Object.values(capabilityBackends(probe({}))).map((b) => b.backend)).toEqual([
      "landlock",
      "landlock",
      "cgroup-bpf",
      "landlock+cgroup-bpf",
    ]);
    expect(Object.values(capabilityBackends(probe({ lsm: true }))).map((b) => b.backend)).toEqual([
      "bpf-lsm",
      "bpf-lsm",
      "bpf-lsm",
      "landlock+cgroup-bpf",
    ]);
    // A kernel before 6.7 has no cgroup unix socket hooks: pathname sockets are left open, and said so.
    const old = capabilityBackends(probe({ unixBpf: false, errors: { unixBpf: "Invalid argument" } }));
    expect(old.unix).toEqual({
      backend: "landlock",
      detail: expect.stringMatching(/pathname sockets are not mediated: Invalid argument/),
    });
  });

  it("name seccomp and the namespaces for what Landlock and cgroup BPF leave open, or nothing when they do not work", () => {
    expect(hardeningBackends(probe({}))).toMatchObject({
      "memfd-exec": { backend: "seccomp" },
      "socket-families": { backend: "seccomp" },
      "user-namespaces": { backend: "seccomp" },
      keyring: { backend: "seccomp" },
      "sysv-ipc": { backend: "ipc-namespace" },
      "abstract-unix-bind": { backend: "net-namespace" },
      procfs: { backend: "pid-namespace" },
      "file-metadata": { backend: "read-only-mounts" },
    });
    const none = hardeningBackends(
      probe({ seccomp: false, errors: { seccomp: "the filter cannot be installed" } }),
    );
    expect(none["memfd-exec"]).toMatchObject({
      backend: null,
      detail: expect.stringMatching(/cannot be installed/),
    });
    // Without namespaces SysV falls back to the filter; abstract names have no other backend.
    const noNs = hardeningBackends(probe({ namespaces: false, errors: { namespaces: "EPERM" } }));
    expect(noNs["sysv-ipc"]).toMatchObject({ backend: "seccomp", detail: expect.stringMatching(/ENOSYS/) });
    expect(noNs["abstract-unix-bind"]).toMatchObject({
      backend: null,
      detail: expect.stringMatching(/EPERM/),
    });
    // Without a PID namespace /proc is denied whole: stricter, so no backend is missing.
    const noPid = hardeningBackends(
      probe({ pidNamespace: false, errors: { pidNamespace: "unshare failed" } }),
    );
    expect(noPid.procfs).toMatchObject({
      backend: "landlock",
      detail: expect.stringMatching(/not granted at all.*unshare failed/),
    });
    // But a file's metadata has no other backend: Landlock does not mediate chmod and chown.
    expect(noPid["file-metadata"]).toMatchObject({
      backend: null,
      detail: expect.stringMatching(/not mediated anywhere.*unshare failed/),
    });
  });

  it("leave a capability without backend when nothing enforces it", () => {
    const b = capabilityBackends(
      probe({ cgroupBpf: false, landlockAbi: 3, errors: { cgroupBpf: "Operation not permitted" } }),
    );
    expect(b.net).toMatchObject({
      backend: null,
      detail: expect.stringMatching(/cgroup BPF did not load: Operation not permitted/),
    });
    expect(b.file).toMatchObject({
      backend: null,
      detail: expect.stringMatching(/Landlock ABI 3 \(ABI 6 needed\)/),
    });
  });
});

describe("what programs need beyond their binary", () => {
  it("grants git HOME's settings, read only, and never the credentials beside them", async () => {
    const home = join(root, "home");
    mkdirSync(join(home, ".config", "git"), { recursive: true });
    writeFileSync(join(home, ".gitconfig"), "[user]\n\tname = x\n");
    writeFileSync(join(home, ".config", "git", "config"), "");
    writeFileSync(join(home, ".config", "git", "credentials"), "https://u:p@example.com\n");
    const { ruleset } = await compile({ ...none, exec: ["git"] }, [process.execPath, script], {
      ...env,
      HOME: home,
    });
    expect(ruleFor(ruleset, join(home, ".gitconfig"))).toBe(
      `fs read_dir,read_file ${join(home, ".gitconfig")}`,
    );
    expect(ruleFor(ruleset, join(home, ".config", "git", "config"))).toMatch(/^fs read_dir,read_file /);
    for (const line of rules(ruleset)) expect(line).not.toMatch(/credentials|\.config\/git$|home$/);
  });

  it("never grants a version manager's shim, but the program behind it on PATH", async () => {
    const shims = join(root, "pyenv", "shims");
    const real = join(root, "bin");
    mkdirSync(shims, { recursive: true });
    mkdirSync(real, { recursive: true });
    writeFileSync(join(shims, "tool"), "#!/usr/bin/env bash\nexec pyenv exec tool\n", { mode: 0o755 });
    writeFileSync(join(real, "tool"), "#!/bin/sh\necho real\n", { mode: 0o755 });
    expect(which("tool", `${shims}:${real}`)).toBe(join(real, "tool"));
    const { ruleset } = await compile({ ...none, exec: ["tool"] }, [process.execPath, script], {
      PATH: `${shims}:${real}:${env.PATH}`,
    });
    expect(ruleFor(ruleset, join(real, "tool"))).toMatch(/^fs execute,read_file /);
    expect(ruleFor(ruleset, join(shims, "tool"))).toBeUndefined();
  });

  it("lets a workspace hold symlinks: Landlock judges the file a path resolves to", async () => {
    const { ruleset } = await compile({ ...none, write: [ws] }, [process.execPath, script], env);
    expect(ruleFor(ruleset, ws)).toMatch(/\bmake_sym\b/);
  });
});

describe("writablePaths", () => {
  it("is what the ruleset lets the server change: write grants (a missing file's folder) and /dev/null, never a read grant", async () => {
    const needs: KernelNeeds = {
      ...none,
      read: [join(root, "server.mjs")],
      write: [join(ws, "data"), join(ws, "new", "out.txt")],
      exec: ["git"],
    };
    const paths = writablePaths(needs, env);
    expect(paths).toContain(join(ws, "data"));
    // out.txt and new/ do not exist: the grant is the nearest folder that does.
    expect(paths).toContain(ws);
    expect(paths).toContain("/dev/null");
    expect(paths).not.toContain(join(root, "server.mjs"));
    expect(paths.some((p) => p.startsWith("/usr"))).toBe(false);
    // The same paths the compiled ruleset grants a write right on.
    const { ruleset } = await compile(needs, [process.execPath, script], env);
    const written = rules(ruleset)
      .filter((l) => /\b(write_file|make_reg|remove_file)\b/.test(l))
      .map((l) => l.split(" ").slice(2).join(" "));
    expect([...paths].sort()).toEqual([...written].sort());
  });
});

/** The paths the ruleset lets the server read beneath. */
const readable = (needs: KernelNeeds, argv: string[]) =>
  [...planAccess(needs, argv, env).fs]
    .filter(([, r]) => r.has("read_file") || r.has("read_dir"))
    .map(([p]) => p);

describe("what the server wrote widens nothing at its next start", () => {
  it("follows no node_modules link from a write grant out of it, and no .pth or venv home a server planted", async () => {
    const project = join(root, "planted");
    mkdirSync(join(project, "srv"), { recursive: true });
    const entry = join(project, "srv", "index.mjs");
    writeFileSync(entry, "");
    // The server could have made this link: the project is its write grant.
    symlinkSync("/etc", join(project, "node_modules"));
    const writer: KernelNeeds = { ...none, write: [project] };
    const planted = await compile(writer, [process.execPath, entry], env);
    expect(ruleFor(planted.ruleset, "/etc")).toBeUndefined();
    expect(readable(writer, [process.execPath, entry])).not.toContain("/etc");
    expect(planted.notes).toContainEqual(
      expect.stringMatching(/node_modules leads out of the write grants to \/etc/),
    );
    // The same link where the server cannot write: the operator's, followed as before.
    const reader: KernelNeeds = { ...none, read: [project] };
    expect(readable(reader, [process.execPath, entry])).toContain("/etc");

    // A virtual environment in the write grant: a .pth naming / and a home with no Python in it.
    const venv = join(project, ".venv");
    const site = join(venv, "lib", "python3.11", "site-packages");
    mkdirSync(site, { recursive: true });
    mkdirSync(join(venv, "bin"));
    symlinkSync("/usr/bin/python3", join(venv, "bin", "python"));
    writeFileSync(join(venv, "pyvenv.cfg"), "home = /var/bin\n");
    mkdirSync(join(project, "src"));
    writeFileSync(join(site, "planted.pth"), `/\n${join(project, "src")}\n`);
    const py = await compile(writer, [join(venv, "bin", "python"), "-c", "0"], env);
    expect(readable(writer, [join(venv, "bin", "python"), "-c", "0"])).not.toContain("/");
    expect(readable(writer, [join(venv, "bin", "python"), "-c", "0"])).not.toContain("/var/lib");
    expect(py.notes).toContainEqual(expect.stringMatching(/named by a \.pth file/));
    // Where the venv is the operator's (outside the write grants), its .pth is followed.
    expect(readable({ ...none, read: [project] }, [join(venv, "bin", "python"), "-c", "0"])).toContain("/");
  });
});
