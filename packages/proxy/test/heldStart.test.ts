/**
 * A held start (relay.ts, `hold`): the process that becomes the server joins its cgroup at once
 * but runs nothing of the server until the release; refused, or with the proxy gone (its fd 3 at
 * end of file), the server never runs. The relay reads nothing from the client before the release.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { createContainment } from "../src/containment.ts";
import { Relay } from "../src/relay.ts";
import { makeWorkspace } from "./helpers.ts";

const probe = createContainment();
const cgroupReady = probe.kind === "cgroup";
probe.dispose();

const { scratch } = makeWorkspace("mcpguard-held-");
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A server that marks that it ran, answers one line with its cgroup, and waits for stdin's end. */
function server(marker: string): string[] {
  const script = `require("fs").writeFileSync(${JSON.stringify(marker)}, "ran");
process.stdin.once("data", () => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { cgroup: require("fs").readFileSync("/proc/self/cgroup", "utf8") } }) + "\\n"));
process.stdin.on("end", () => process.exit(0));`;
  return [process.execPath, "-e", script];
}

function heldRelay(marker: string, hold: Promise<{ fd3?: string }>) {
  const input = new PassThrough();
  const output = new PassThrough();
  let out = "";
  output.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  const containment = createContainment();
  const relay = new Relay({
    argv: server(marker),
    config: "C0",
    input,
    output,
    containment,
    hold,
    log: () => {},
    closeGraceMs: 100,
    termGraceMs: 100,
  });
  return { relay, input, containment, out: () => out };
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!cgroupReady)("a held start", () => {
  it("runs nothing of the server before the release, then the server in its cgroup", async () => {
    const marker = join(scratch, "released");
    let release!: (start: { fd3?: string }) => void;
    const { relay, input, containment, out } = heldRelay(
      marker,
      new Promise((resolve) => (release = resolve)),
    );
    const status = relay.run();
    input.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })}\n`);
    await wait(300);
    // The held process is in the cgroup already; the server has not run, and nothing was relayed.
    const procs = readFileSync(join(containment.cgroupPath as string, "cgroup.procs"), "utf8").trim();
    expect(procs).not.toBe("");
    expect(existsSync(marker)).toBe(false);
    expect(out()).toBe("");
    release({});
    for (let i = 0; i < 100 && !out().includes("\n"); i++) await wait(20);
    expect(existsSync(marker)).toBe(true);
    expect(JSON.parse(out()).result.cgroup).toContain(containment.cgroupPath?.split("/").pop());
    input.end();
    expect(await status).toBe(0);
  });

  it("kills the held process when the start is refused: the server never runs", async () => {
    const marker = join(scratch, "refused");
    let refuse!: (error: Error) => void;
    const { relay, containment } = heldRelay(marker, new Promise((_, reject) => (refuse = reject)));
    const status = relay.run();
    await wait(200);
    refuse(new Error("the reaper did not start"));
    expect(await status).toBe(1);
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(containment.cgroupPath as string)).toBe(false);
  });

  /** A held process that joins no cgroup for a while (as a launcher not yet scheduled would), then waits for "go" on fd 3. */
  function lateRelay(marker: string, hold: Promise<{ fd3?: string }>) {
    const relay = new Relay({
      argv: server(marker),
      config: "C0",
      input: new PassThrough(),
      output: new PassThrough(),
      containment: createContainment(),
      launch: (argv) => ({
        argv: [
          "/bin/sh",
          "-c",
          'sleep 0.3; read -r go <&3 && [ "$go" = go ] && exec "$@" 3<&-',
          "sh",
          ...argv,
        ],
      }),
      hold,
      log: () => {},
      closeGraceMs: 100,
      termGraceMs: 100,
    });
    return relay;
  }

  it("stopped while held, it never runs the server, even where the held process had not joined its cgroup", async () => {
    const marker = join(scratch, "late-abort");
    let release!: (start: { fd3?: string }) => void;
    const relay = lateRelay(marker, new Promise((resolve) => (release = resolve)));
    const status = relay.run();
    await wait(100);
    // The reaper lost during the hold: the cgroup is killed, but the held process is not in it yet.
    relay.abort("the reaper exited");
    release({});
    expect(await status).toBe(1);
    await wait(200);
    expect(existsSync(marker)).toBe(false);
  }, 10_000);

  it("refused while the held process has not joined its cgroup, it ends instead of waiting forever", async () => {
    const marker = join(scratch, "late-refuse");
    let refuse!: (error: Error) => void;
    const relay = lateRelay(marker, new Promise((_, reject) => (refuse = reject)));
    const status = relay.run();
    await wait(100);
    refuse(new Error("the loader failed"));
    expect(await status).toBe(1);
    expect(existsSync(marker)).toBe(false);
  }, 10_000);

  it("never execs the server when its gate ends without a go (the proxy gone)", () => {
    const containment = createContainment();
    const marker = join(scratch, "gone");
    const [command, ...args] = containment.wrap(server(marker), { gate: true });
    // fd 3 at end of file at once, as when the proxy was killed before the release.
    const result = spawnSync(command as string, args, { stdio: ["ignore", "ignore", "ignore", "ignore"] });
    expect(result.status).not.toBe(0);
    expect(existsSync(marker)).toBe(false);
    containment.dispose();
  });
});
