/**
 * Whether the server's program can be started, checked before anything is spawned: without L3 the
 * server is exec'd by a wrapper shell in its cgroup, whose own message for a missing program
 * (`<cgroup.procs path>: 1: exec: x: not found`, status 127) would be all the user saw. Under L3
 * the kernel layer resolves the program itself, and says so.
 */
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, resolve } from "node:path";

/** execvp's search path when PATH is unset. */
const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

const executableFile = (file: string): boolean => {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    // Not there or not executable: not a candidate.
    return false;
  }
};

/**
 * Why `command` cannot be run from `cwd` with `path` as execvp would look it up, or undefined when
 * it can. A command with a slash is a file (relative to `cwd`); otherwise the first executable file
 * on PATH (an empty or relative entry is relative to `cwd`, as execvp reads it).
 */
export function programProblem(command: string, path: string | undefined, cwd: string): string | undefined {
  const shown = JSON.stringify(command);
  if (command === "") return "the server's command is empty";
  if (command.includes("/")) {
    const file = resolve(cwd, command);
    try {
      if (!statSync(file).isFile()) return `the server's program ${shown} is not a file`;
    } catch {
      // Reported in one line, which is the answer.
      return `cannot find the server's program ${shown}`;
    }
    return executableFile(file)
      ? undefined
      : `cannot run the server's program ${shown}: it is not executable`;
  }
  const dirs = (path ?? DEFAULT_PATH).split(delimiter);
  if (dirs.some((dir) => executableFile(resolve(cwd, dir, command)))) return undefined;
  return `cannot find the server's program ${shown} on its PATH`;
}
