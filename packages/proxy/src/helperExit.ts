/**
 * How a helper command ends (policy derive, pin, wrap: those that start a server for a short
 * exchange rather than `mcpguard run`), however it ends. What a helper starts is held here while it
 * runs: a server's session (listTools.ts, openShortSession: its cgroup and all in it), a scratch
 * folder (the relative-path probe's world), a helper of its own (wrap's policy derive and pin).
 *
 * On SIGTERM, SIGINT or SIGHUP each is stopped, the newest first (handed the signal where it can
 * stop itself, then killed, its cgroup removed), and the helper exits with 128 + the signal's
 * number; a second signal meanwhile stops what is left at once. At an exit by any other path
 * (process.exit, a crash) what is still held is stopped synchronously. The helper's own time-outs,
 * errors and normal end stop each where it was started (ShortSession.close), which lets it go.
 *
 * A helper killed with SIGKILL runs none of this: the reaper a short session starts (reaper.ts)
 * removes the server's cgroup then.
 */
import { constants } from "node:os";

export interface Held {
  /** Stop it, letting it stop itself where it can (it gets the helper's signal); bounded. */
  stop?(signal: NodeJS.Signals): Promise<void>;
  /** Stop it now, synchronously: kill what runs, remove what was made. */
  stopNow(): void;
}

const held = new Set<Held>();
let installed = false;
let stopping = false;

/** Hold `thing` until the returned function lets it go (its own clean-up is done). */
export function hold(thing: Held): () => void {
  install();
  held.add(thing);
  return () => {
    held.delete(thing);
  };
}

/** The exit status of a process that stopped on `signal`, as a shell reports it. */
function signalStatus(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}

function install(): void {
  if (installed) return;
  installed = true;
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const)
    process.on(signal, () => void onSignal(signal));
  process.on("exit", stopAllNow);
}

async function onSignal(signal: NodeJS.Signals): Promise<never> {
  const status = signalStatus(signal);
  if (stopping) {
    stopAllNow();
    process.exit(status);
  }
  stopping = true;
  for (const thing of [...held].reverse()) {
    try {
      if (thing.stop) await thing.stop(signal);
      else thing.stopNow();
    } catch {
      // A stop that throws is followed by the immediate stop.
      try {
        thing.stopNow();
      } catch {
        // Nothing more to do here: the reaper, if any, goes on.
      }
    }
    held.delete(thing);
  }
  process.exit(status);
}

function stopAllNow(): void {
  for (const thing of [...held].reverse()) {
    held.delete(thing);
    try {
      thing.stopNow();
    } catch {
      // The next one still goes.
    }
  }
}
