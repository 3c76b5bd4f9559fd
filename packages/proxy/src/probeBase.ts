/**
 * Where a server resolves a relative path argument, found out by asking it rather than by a table of
 * versions nobody can check (server-filesystem 2025.7.x and 2025.8.18 resolve against their working
 * directory; 2025.8.21 and later against their first allowed folder). `mcpguard policy derive`
 * starts the server once more, in a scratch world: each folder of its command line (and each of the
 * client's roots) replaced by a scratch folder, its working directory another, each holding a file
 * of one name and a content of its own. It calls one of the server's read-only path tools with that
 * relative name, and the content that comes back says which folder the server read.
 *
 * The server is real code, possibly hostile: it runs under `mcpguard run --config C-ebpf`, whose
 * kernel layer lets it read the scratch world and what its interpreter needs, and nothing else (no
 * network, no write). Where the kernel layer cannot run, it is not probed, and the draft refuses
 * relative paths instead.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import type { Tool } from "@mcpguard/protocol/mcp";
import { hold } from "./helperExit.js";
import { ListingError, openShortSession } from "./listTools.js";

export type RelativeBase =
  | { base: "cwd"; tool: string }
  | { base: "root"; root: string; tool: string }
  | { unknown: string };

export interface ProbeOptions {
  /** This mcpguard's bin script (the probe runs `mcpguard run` through it). */
  bin: string;
  /** The server's command line, as the client starts it. */
  argv: readonly string[];
  /** The folder the command line's relative folders are read against. */
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The folders its command line names, in order. */
  roots: readonly string[];
  /** The client's roots (declared on roots/list), in order. */
  clientRoots: readonly string[];
  tools: readonly Tool[];
  /** The read-only path tool to call and its path argument: see {@link probeTool}. */
  probe: { tool: string; arg: string } | undefined;
  timeoutMs: number;
  /** Whether the kernel layer can confine the server here (every L3 capability has a backend). */
  kernelReady: boolean;
}

/** A word of the command line that names `root` (as it is, or as the value of `--flag=`), else undefined. */
function replaceRoot(
  word: string,
  cwd: string,
  roots: readonly string[],
  scratch: readonly string[],
): string {
  const named = (text: string): number => {
    if (!text || text.startsWith("-")) return -1;
    try {
      return roots.indexOf(realpathSync(isAbsolute(text) ? text : resolve(cwd, text)));
    } catch {
      // Missing: under no root.
      return -1;
    }
  };
  const whole = named(word);
  if (whole >= 0) return scratch[whole] as string;
  const flag = /^(--?[\w.-]+=)(.+)$/.exec(word);
  const valued = flag ? named(flag[2] as string) : -1;
  return flag && valued >= 0 ? `${flag[1]}${scratch[valued]}` : word;
}

/**
 * How `mcpguard run` stops the probed server once the probe is done (or derive is stopped): the end
 * of its input, then SIGTERM after RUN_GRACE_MS, SIGKILL after as long again. Derive waits
 * STOP_GRACE_MS for run to stop it and remove its cgroups (the v1 ones of its limits among them,
 * which only run knows) before it kills what is left.
 */
const RUN_GRACE_MS = 500;
const STOP_GRACE_MS = 5000;

/** The text of a tools/call result, whatever shape its content has. */
const resultText = (result: unknown): string => JSON.stringify(result ?? "");

export async function probeRelativeBase(options: ProbeOptions): Promise<RelativeBase> {
  const { probe } = options;
  if (!probe) return { unknown: "none of its tools reads a path without other arguments" };
  if (!options.kernelReady)
    return { unknown: "the kernel layer cannot run here to confine the server while it is asked" };
  const world = realpathSync(mkdtempSync(join(tmpdir(), "mcpguard-probe-")));
  const removeWorld = () => rmSync(world, { recursive: true, force: true });
  // Held after the session (stopped first, on a signal): the world goes once nothing runs in it.
  const letGo = hold({ stopNow: removeWorld });
  try {
    const nonce = randomBytes(8).toString("hex");
    const marker = `mcpguard-probe-${nonce}.txt`;
    const folders = [...options.roots, ...options.clientRoots];
    const scratch = folders.map((_, i) => join(world, `root-${i}`));
    // The working directory inside the first folder: a server that checks what it resolved against
    // its folders then reads either file, and the content says which.
    const cwd = join(scratch[0] ?? world, `cwd-${nonce}`);
    for (const [i, dir] of scratch.entries()) {
      mkdirSync(dir);
      writeFileSync(join(dir, marker), `root-${i}-${nonce}`);
    }
    mkdirSync(cwd);
    writeFileSync(join(cwd, marker), `cwd-${nonce}`);
    const argv = options.argv.map((word) => replaceRoot(word, options.cwd, options.roots, scratch));
    // Outside every grant: the policy of this one call, reading the scratch world only.
    const policy = join(world, "policy.json");
    writeFileSync(
      policy,
      JSON.stringify({
        version: 1,
        server: "probe",
        tools: {
          [probe.tool]: {
            args: { [probe.arg]: "path.read" },
            read: [...scratch, cwd].map((dir) => `${dir}/**`),
          },
        },
      }),
    );
    const grace = ["--close-grace-ms", String(RUN_GRACE_MS), "--term-grace-ms", String(RUN_GRACE_MS)];
    const run = [process.execPath, options.bin, "run", "--config", "C-ebpf", "--policy", policy, ...grace];
    const session = await openShortSession([...run, "--", ...argv], {
      cwd,
      env: options.env,
      roots: scratch.slice(options.roots.length),
      timeoutMs: options.timeoutMs,
      graceMs: STOP_GRACE_MS,
      clientName: "mcpguard-policy-derive-probe",
    });
    let text: string;
    try {
      // A server given the client's roots asks for them after the handshake: the call waits until it
      // has (a server that does not ask gets a second), and a moment more to take them in.
      if (options.clientRoots.length) {
        await Promise.race([session.rootsAsked, new Promise((resolve) => setTimeout(resolve, 1000))]);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      text = resultText(
        await session.request("tools/call", { name: probe.tool, arguments: { [probe.arg]: marker } }),
      );
    } finally {
      await session.close();
    }
    // What it read, or else the file it names (a refusal usually says which file it resolved).
    const root = new RegExp(`root-(\\d+)-${nonce}`).exec(text);
    const named = scratch.findIndex((dir) => text.includes(JSON.stringify(join(dir, marker)).slice(1, -1)));
    const i = root ? Number(root[1]) : named;
    if (text.includes(`cwd-${nonce}`) || text.includes(JSON.stringify(join(cwd, marker)).slice(1, -1)))
      return { base: "cwd", tool: probe.tool };
    if (i >= 0) return { base: "root", root: folders[i] as string, tool: probe.tool };
    return { unknown: `${probe.tool} read, and named, no file of the scratch world for a relative path` };
  } catch (error) {
    if (error instanceof ListingError) return { unknown: `asked in a scratch world, ${error.message}` };
    throw error;
  } finally {
    removeWorld();
    letGo();
  }
}
