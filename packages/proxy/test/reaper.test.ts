/**
 * The reaper (bpf/reaper.c) once its proxy is gone: what the proxy wrote on its stdin just before
 * it died is still read, though only the proxy's pidfd says so (another process holds the pipe
 * open, so no end of file comes). A process group named then ("pgid N", as process-group
 * containment names the server's) is killed. No root needed.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { eventually, isAlive } from "./helpers.ts";

const REAPER = join(import.meta.dirname, "..", "..", "..", "bpf", ".output", "mcpguard-reaper");
const built = existsSync(REAPER);
if (!built) console.warn(`reaper tests skipped: ${REAPER} is not built (make -C bpf)`);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcpguard-reaper-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A pid the shell wrote to `name` in the scratch folder. */
const pidIn = (name: string) => Number(readFileSync(join(dir, name), "utf8"));

describe.skipIf(!built)("the reaper, once its proxy is killed with a child holding the pipe open", () => {
  it.each([
    ["kills the process group its proxy named just before", "", false],
    ['leaves the group its proxy named and then "released" just before', "echo released >&3\n", true],
  ])("%s", async (_, after, survives) => {
    // The "server": a process group of its own that exists before it is named (the relay names
    // the group of a server it has spawned, in a session of its own).
    const server = spawn("sleep", ["30"], { detached: true, stdio: "ignore" }).pid as number;
    // The proxy is a shell: it starts the reaper, waits for "ready", names the server's group,
    // leaves a child holding the pipe's write end, and dies by SIGKILL with the lines unread.
    const script = [
      'mkfifo "$1/in" "$1/out"',
      '"$2" --proxy $$ < "$1/in" > "$1/out" & echo $! > "$1/reaper"',
      'exec 3> "$1/in"',
      'read -r ready < "$1/out"',
      'echo "pgid $3" >&3',
      after,
      'sleep 30 & echo $! > "$1/holder"',
      "kill -9 $$",
    ].join("\n");
    const proxy = spawn("/bin/sh", ["-c", script, "sh", dir, REAPER, String(server)], { stdio: "ignore" });
    const ended = await new Promise<NodeJS.Signals | null>((resolve) =>
      proxy.once("exit", (_code, signal) => resolve(signal)),
    );
    expect(ended).toBe("SIGKILL");
    const [reaper, holder] = [pidIn("reaper"), pidIn("holder")];
    try {
      expect(isAlive(holder)).toBe(true);
      // It reads what is in the pipe, kills what it was told to, and exits.
      expect(await eventually(() => !isAlive(reaper), 5000)).toBe(true);
      // Forgotten after "released": the proxy said it ended that group itself. A SIGKILL sent
      // lands when the server is next scheduled.
      if (survives) expect(isAlive(server)).toBe(true);
      else expect(await eventually(() => !isAlive(server), 5000)).toBe(true);
    } finally {
      for (const pid of [server, holder]) if (isAlive(pid)) process.kill(pid, "SIGKILL");
    }
  });
});
