/**
 * The guard's own files out of the server's reach (issue 29): `mcpguard run` refuses, before the
 * server starts, a policy, pin file or audit log inside what the server may write (rule a), or
 * where another user could replace it (rule b, ssh's StrictModes). Through the real bin.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canonical } from "../src/guardFiles.ts";
import { connect, FIXTURE, MCPGUARD, makeWorkspace, toolText } from "./helpers.ts";

const doctor = spawnSync(process.execPath, [MCPGUARD, "doctor", "--json"], { encoding: "utf8" });
const l3 = doctor.status === 0;
if (!l3)
  console.warn(
    `the C-full and C-ebpf cases are skipped: mcpguard doctor says L3 cannot run here:\n${doctor.stdout}${doctor.stderr}`,
  );
const root = process.getuid?.() === 0;

let scratch: string;
let work: string;
beforeEach(() => {
  ({ scratch, work } = makeWorkspace("mcpguard-guard-"));
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

/** A policy for the fixture whose tool `save` may write the working directory. */
function writerPolicy(path: string): string {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(
    path,
    JSON.stringify({
      version: 1,
      server: "proxy-fixture",
      tools: {
        echo: { args: { text: "text" } },
        save: { args: { path: "path.write", text: "text" }, write: ["{{cwd}}/**"] },
      },
    }),
  );
  chmodSync(path, 0o644);
  return path;
}

/** The environment without sudo's SUDO_UID (CI runs the tests under sudo): the owners are root and you. */
const { SUDO_UID: _caller, ...plainEnv } = process.env;

/** `mcpguard run` in the workspace, with no client: status and stderr. */
function start(config: string, options: string[], env: NodeJS.ProcessEnv = plainEnv, server = FIXTURE) {
  const r = spawnSync(
    process.execPath,
    [MCPGUARD, "run", "--config", config, ...options, "--", process.execPath, server],
    { cwd: work, encoding: "utf8", input: "", timeout: 30_000, env },
  );
  return { status: r.status, stderr: r.stderr, lines: r.stderr.trim().split("\n") };
}

describe("rule a: nothing the server may write", () => {
  const configs = ["C-app", ...(l3 ? ["C-full", "C-ebpf"] : [])];

  it.each(configs)(
    "%s refuses a policy inside the write grant, in one line, before the server starts",
    (config) => {
      // Where an older mcpguard wrap put it: beside the project's client config.
      const policy = writerPolicy(join(work, ".vscode", "mcpguard", "fixture.json"));
      const r = start(config, ["--policy", policy]);
      expect(r.status).toBe(2);
      expect(r.lines).toHaveLength(1);
      const grant = config === "C-ebpf" ? "the kernel's write rule" : "the write grant of tool save";
      expect(r.stderr).toBe(
        `mcpguard run: the policy ${policy} lies in ${work}, ${grant}: the server could rewrite it; ` +
          "keep it outside every folder the server may write, or narrow the grant\n",
      );
    },
  );

  it("refuses an audit log and a pin file inside the workspace grant, and starts with them outside", async () => {
    const policy = writerPolicy(join(scratch, "policies", "fixture.json"));
    const log = start("C-app", ["--policy", policy, "--audit-log", join(work, "audit", "fixture.ndjson")]);
    expect(log.status).toBe(2);
    expect(log.stderr).toMatch(
      new RegExp(
        `^mcpguard run: the audit log ${work}/audit/fixture\\.ndjson lies in ${work}, the write grant of tool save:`,
      ),
    );
    writeFileSync(join(work, "pins.json"), '{"version": 1, "servers": {}}\n');
    const pins = start("C-app", ["--policy", policy, "--pins", join(work, "pins.json")]);
    expect(pins.status).toBe(2);
    expect(pins.stderr).toMatch(
      /^mcpguard run: the pin file .*pins\.json lies in .*, the write grant of tool save:/,
    );
    // A pin file there means nothing to C0, which reads none: only the audit log counts.
    expect(start("C0", ["--policy", policy, "--pins", join(work, "pins.json")]).status).toBe(0);

    const s = await connect(
      [
        MCPGUARD,
        "run",
        "--config",
        "C-app",
        "--policy",
        policy,
        "--audit-log",
        join(scratch, "audit.ndjson"),
        "--",
        "node",
        FIXTURE,
      ],
      undefined,
      work,
    );
    expect(toolText(await s.client.callTool({ name: "echo", arguments: { text: "started" } }))).toBe(
      "started",
    );
    await s.client.close();
  });

  it("judges a symbolic link where it points and where it lies", () => {
    const policy = writerPolicy(join(scratch, "policies", "fixture.json"));
    const link = join(work, "policy.json");
    spawnSync("ln", ["-s", policy, link]);
    const r = start("C-app", ["--policy", link]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /^mcpguard run: the policy .*\/work\/policy\.json lies in .*\/work, the write grant of tool save:/,
    );
  });

  it("refuses a write grant over mcpguard's own install (code that runs as root at the next start)", () => {
    // This checkout is the install: its bundle, code caches and kernel-layer binaries.
    const install = realpathSync(join(MCPGUARD, "..", "..", "..", ".."));
    const policy = join(scratch, "install-policy.json");
    writeFileSync(
      policy,
      JSON.stringify({
        version: 1,
        server: "proxy-fixture",
        tools: { save: { args: { path: "path.write", text: "text" }, write: [`${install}/packages/**`] } },
      }),
    );
    const r = start("C-app", ["--policy", policy]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      new RegExp(
        `^mcpguard run: the mcpguard install ${install}/packages is ${install}/packages, the write grant of tool save:`,
      ),
    );
    // Under C0 nothing is granted, and the install is no concern of the run.
    expect(start("C0", ["--policy", policy]).status).toBe(0);
    // A grant inside the code (the bundle's folder) is refused as well; one on the checkout's
    // documents is not: they are not what the next start runs.
    const grant = (write: string) => {
      writeFileSync(
        policy,
        JSON.stringify({
          version: 1,
          server: "proxy-fixture",
          tools: { save: { args: { path: "path.write", text: "text" }, write: [write] } },
        }),
      );
      return start("C-app", ["--policy", policy]);
    };
    const inside = grant(`${install}/packages/proxy/dist/**`);
    expect(inside.status).toBe(2);
    expect(inside.stderr).toMatch(
      /^mcpguard run: the mcpguard install .*\/packages holds .*\/packages\/proxy\/dist/,
    );
    expect(grant(`${install}/docs/**`).status).toBe(0);
  });

  it.skipIf(!l3)(
    "C-full refuses an audit key beside the server's script, which the ruleset lets it read though the policy does not",
    () => {
      // Outside TMPDIR (/tmp), where the key is refused for another reason.
      const outside = mkdtempSync("/var/tmp/mcpguard-guard-");
      try {
        mkdirSync(join(outside, "srv", "keys"), { recursive: true, mode: 0o700 });
        const script = join(outside, "srv", "server.mjs");
        writeFileSync(script, readFileSync(FIXTURE));
        const policy = join(scratch, "key-policy.json");
        writeFileSync(
          policy,
          JSON.stringify({
            version: 1,
            server: "proxy-fixture",
            tools: { echo: { args: { text: "text" } } },
          }),
        );
        const key = join(outside, "srv", "keys", "audit.key");
        const log = join(outside, "audit.ndjson");
        const r = start(
          "C-full",
          ["--policy", policy, "--audit-log", log, "--audit-key", key],
          plainEnv,
          script,
        );
        expect(r.status).toBe(2);
        expect(r.stderr).toBe(
          `mcpguard run: config C-full: the audit key ${key} lies in ${join(outside, "srv")}, which the kernel's ruleset lets the server read (its interpreter's, script's or environment's files included): keep the key elsewhere (--audit-key FILE)\n`,
        );
      } finally {
        rmSync(outside, { recursive: true, force: true });
      }
    },
  );

  it("judges a file under /dev that is a file: an audit log on /dev/shm inside a write grant", () => {
    const shm = mkdtempSync("/dev/shm/mcpguard-guard-");
    try {
      const policy = join(scratch, "shm-policy.json");
      writeFileSync(
        policy,
        JSON.stringify({
          version: 1,
          server: "proxy-fixture",
          tools: { save: { args: { path: "path.write", text: "text" }, write: [`${shm}/**`] } },
        }),
      );
      const r = start("C-app", ["--policy", policy, "--audit-log", join(shm, "audit.ndjson")]);
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(
        new RegExp(
          `^mcpguard run: the audit log ${shm}/audit\\.ndjson lies in ${shm}, the write grant of tool save:`,
        ),
      );
      // A pipe elsewhere is no device of the host: one in the workspace is the server's to read.
      const fifo = join(work, "audit.fifo");
      spawnSync("mkfifo", [fifo]);
      const piped = start("C-app", [
        "--policy",
        writerPolicy(join(scratch, "p2", "fixture.json")),
        "--audit-log",
        fifo,
      ]);
      expect(piped.status).toBe(2);
      expect(piped.stderr).toMatch(
        /^mcpguard run: the audit log .*audit\.fifo lies in .*, the write grant of tool save:/,
      );
    } finally {
      rmSync(shm, { recursive: true, force: true });
    }
  });

  it("judges an audit log where the kernel writes it: `..` after a link, and a dangling link it would create through", () => {
    const policy = writerPolicy(join(scratch, "policies", "fixture.json"));
    // <scratch>/logs/inner leads into the workspace: its `..` is the workspace, not <scratch>/logs.
    mkdirSync(join(scratch, "logs"));
    mkdirSync(join(work, "deep"));
    symlinkSync(join(work, "deep"), join(scratch, "logs", "inner"));
    // Spelled out: path.join would fold the `..` as the guard once did.
    const up = start("C-app", ["--policy", policy, "--audit-log", `${scratch}/logs/inner/../a.ndjson`]);
    expect(up.status).toBe(2);
    expect(up.stderr).toMatch(
      new RegExp(
        `^mcpguard run: the audit log .*/logs/inner/\\.\\./a\\.ndjson lies in ${work}, the write grant of tool save:`,
      ),
    );
    // A log that is a link to a file not there yet: opening it creates the file in the workspace.
    symlinkSync(join(work, "planted.ndjson"), join(scratch, "logs", "b.ndjson"));
    const dangling = start("C-app", ["--policy", policy, "--audit-log", join(scratch, "logs", "b.ndjson")]);
    expect(dangling.status).toBe(2);
    expect(dangling.stderr).toMatch(
      new RegExp(
        `^mcpguard run: the audit log .*/logs/b\\.ndjson lies in ${work}, the write grant of tool save:`,
      ),
    );
    expect(existsSync(join(work, "planted.ndjson"))).toBe(false);
  });
});

describe("rule b: owned by root or you, writable by nobody else", () => {
  it("refuses a policy open to others, in a group-writable folder, or owned by another uid (C-app)", () => {
    const policy = writerPolicy(join(scratch, "policies", "fixture.json"));
    chmodSync(policy, 0o666);
    const open = start("C-app", ["--policy", policy]);
    expect(open.status).toBe(2);
    expect(open.stderr).toBe(
      `mcpguard run: the policy ${policy} is writable by group and others (mode 0666): chmod go-w ${policy}, or keep the policy elsewhere\n`,
    );
    chmodSync(policy, 0o644);
    chmodSync(join(scratch, "policies"), 0o775);
    const folder = start("C-app", ["--policy", policy]);
    expect(folder.status).toBe(2);
    expect(folder.stderr).toBe(
      `mcpguard run: the policy ${policy} is in ${scratch}/policies, which is writable by group (mode 0775): chmod go-w ${scratch}/policies, or keep the policy elsewhere\n`,
    );
    chmodSync(join(scratch, "policies"), 0o755);
    if (!root) {
      console.log("skipped the ownership case: chown needs root");
      return;
    }
    chownSync(policy, 65534, 65534);
    const owned = start("C-app", ["--policy", policy]);
    expect(owned.status).toBe(2);
    expect(owned.stderr).toBe(
      `mcpguard run: the policy ${policy} is owned by uid 65534, not by root: that user could rewrite the policy; chown it, or keep the policy elsewhere\n`,
    );
    // Started through sudo by that user, root's proxy counts their files as root's (who runs sudo is root).
    expect(start("C-app", ["--policy", policy], { ...plainEnv, SUDO_UID: "65534" }).status).toBe(0);
    expect(start("C-app", ["--policy", policy], { ...plainEnv, SUDO_UID: "1000" }).stderr).toMatch(
      /is owned by uid 65534, not by root or the user who ran sudo \(uid 1000\):/,
    );
  });

  it("judges C0's audit log and a log still to be created by the folders above it; a sticky folder (/tmp) passes", () => {
    const shared = join(scratch, "shared");
    mkdirSync(shared);
    chmodSync(shared, 0o777);
    const log = join(shared, "logs", "fixture.ndjson");
    const r = start("C0", ["--audit-log", log]);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      `mcpguard run: the audit log ${log} is in ${shared}, which is writable by group and others (mode 0777): chmod go-w ${shared}, or keep the audit log elsewhere\n`,
    );
    // With the sticky bit nobody else can replace our entries there: like /tmp itself.
    chmodSync(shared, 0o1777);
    mkdirSync(join(shared, "logs"));
    expect(start("C0", ["--audit-log", log]).status).toBe(0);
    chmodSync(log, 0o666);
    expect(start("C0", ["--audit-log", log]).stderr).toMatch(
      /^mcpguard run: the audit log .* is writable by group and others \(mode 0666\): chmod go-w /,
    );
    if (root) {
      chmodSync(log, 0o600);
      chownSync(join(shared, "logs"), 65534, 65534);
      expect(start("C0", ["--audit-log", log]).stderr).toBe(
        `mcpguard run: the audit log ${log} is in ${shared}/logs, which is owned by uid 65534, not by root: that user could replace the audit log; chown the folder, or keep the audit log elsewhere\n`,
      );
    }
  });
});

describe("canonical: where the kernel finds a guard file, or creates it", () => {
  /** The folders of the tree, where links are made and queries start. */
  const dirs = ["", "a", "a/b", "c"];
  const links = ["l0", "l1", "l2", "l3"];
  /** What a query walks through after its start: folders, files, links, and what the kernel reads specially. */
  const names = ["a", "b", "c", "f", ...links, ".", "..", "..", "new"];
  /** What a link may point to: up, across, absolute, dangling, to itself, through another link. */
  const targets = (root: string) => [
    "../c",
    "b",
    "..",
    ".",
    "../../x",
    `${root}/a/b`,
    `${root}/c/new`,
    "missing",
    "missing/deeper",
    "l0",
    "l1/..",
    "../a/f",
  ];

  /** The path the kernel gives a descriptor: where it really opened the file. */
  function kernelPath(fd: number): string {
    return readlinkSync(`/proc/self/fd/${fd}`);
  }

  it("agrees with the kernel on every path through a tree of links, `..` after a link and dangling links included", () => {
    const scratch = realpathSync(mkdtempSync(join(tmpdir(), "mcpguard-canonical-")));
    // Deep enough that no walk up (the `..` of a query, two of each link it follows) leaves the
    // scratch folder: the kernel creates what a query names.
    const root = join(scratch, ...Array.from({ length: 16 }, (_, i) => `d${i}`), "root");
    let compared = 0;
    let created = 0;
    try {
      fc.assert(
        fc.property(
          fc.array(fc.tuple(fc.constantFrom(...dirs), fc.nat()), { minLength: 1, maxLength: 4 }),
          // Most often one of the links (where it lies), else a folder; then a few names.
          fc.array(
            fc.tuple(
              fc.constantFrom(...dirs),
              fc.option(fc.nat(), { freq: 4 }),
              fc.array(fc.constantFrom(...names), { maxLength: 3 }),
            ),
            { minLength: 8, maxLength: 8 },
          ),
          fc.boolean(),
          (linked, queries, relative) => {
            rmSync(root, { recursive: true, force: true });
            mkdirSync(join(root, "a", "b"), { recursive: true });
            mkdirSync(join(root, "c"));
            writeFileSync(join(root, "a", "f"), "");
            const pool = targets(root);
            linked.forEach(([dir, pick], i) => {
              symlinkSync(pool[pick % pool.length] as string, join(root, dir, `l${i}`));
            });
            for (const [folder, pick, rest] of queries) {
              const link = pick === null ? undefined : pick % linked.length;
              const start = link === undefined ? folder : join(linked[link]?.[0] ?? "", `l${link}`);
              const parts = [...(start ? [start] : []), ...rest];
              if (parts.length === 0) continue;
              const query = relative ? parts.join("/") : `${root}/${parts.join("/")}`;
              const cwd = process.cwd();
              if (relative) process.chdir(root);
              try {
                const judged = canonical(query);
                let fd: number | undefined;
                let fresh = false;
                try {
                  fd = openSync(query, constants.O_RDONLY);
                } catch {
                  // Not there: where an open with O_CREAT (the audit log's) would put it, if anywhere.
                  try {
                    fd = openSync(query, constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND);
                    fresh = true;
                  } catch {
                    // A path the kernel neither opens nor creates (a missing folder, a loop).
                  }
                }
                if (fd === undefined) continue;
                const real = kernelPath(fd);
                closeSync(fd);
                if (fresh) {
                  unlinkSync(real);
                  created++;
                }
                compared++;
                expect(judged, `${query} (${fresh ? "created" : "opened"})`).toBe(real);
              } finally {
                process.chdir(cwd);
              }
            }
          },
        ),
        { numRuns: 150 },
      );
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
    // The walks compared both kinds: files and folders found, and files the kernel created.
    expect(compared).toBeGreaterThan(300);
    expect(created).toBeGreaterThan(20);
  });
});
