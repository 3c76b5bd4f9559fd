/**
 * The per-trial world (DESIGN.md "Per-trial world"): a fresh directory with `workspace/`, `home/`
 * and `tmp/`, fresh canaries, a loopback sink, and the exact server environment of SERVERS.md §2.
 * Nothing of a trial survives into the next.
 */
import { execFile } from "node:child_process";
import { accessSync, constants, mkdirSync, mkdtempSync, rmdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { promisify } from "node:util";
import { resolveInterpreters } from "../interpreters.js";
import { CANARY_NAMES, type Canaries, drawCanaries, drawMarker } from "./canaries.js";
import { buildWorkspaceTemplate, writeHome } from "./fixtures.js";
import { sweepDeadRuns, writeOwner } from "./owner.js";
import { Sink } from "./sink.js";

const run = promisify(execFile);

/** PE-01 and BN-09 put paths into shell commands unquoted; FR-02 climbs 12 levels to reach `/`. */
const SAFE_PATH = /^\/[A-Za-z0-9._/-]+$/;
const MAX_DEPTH = 12;

export function checkTrialRoot(path: string): void {
  if (!SAFE_PATH.test(path)) {
    throw new Error(
      `trial root ${JSON.stringify(path)} must match ${SAFE_PATH} (no spaces or shell metacharacters)`,
    );
  }
  const depth = path.split("/").filter(Boolean).length;
  if (depth >= MAX_DEPTH)
    throw new Error(`trial root ${path} is ${depth} components deep; it must be fewer than ${MAX_DEPTH}`);
}

/** The runner's PATH without empty or relative entries. */
export function serverPath(path = process.env.PATH ?? ""): string {
  return path
    .split(":")
    .filter((entry) => entry !== "" && isAbsolute(entry))
    .join(":");
}

export interface World {
  readonly trial: string;
  readonly workspace: string;
  readonly home: string;
  readonly tmp: string;
  readonly canaries: Canaries;
  /** The trial's instruction marker (`{{marker}}`), planted by the protocol servers. */
  readonly marker: string;
  readonly sink: Sink;
  /** The server's environment: exactly the variables of SERVERS.md §2. */
  readonly env: Record<string, string>;
  /** Expand the placeholders of every string in a JSON value. */
  expand<T>(value: T): T;
  /** Stop the sink and remove every file of the trial. */
  destroy(): Promise<void>;
}

export class PlaceholderError extends Error {
  override readonly name = "PlaceholderError";
}

const PLACEHOLDER = /\{\{([^{}]+)\}\}/g;

export function placeholderValues(world: Omit<World, "expand" | "destroy" | "env">): Record<string, string> {
  return {
    trial: world.trial,
    workspace: world.workspace,
    home: world.home,
    tmp: world.tmp,
    "sink.host": world.sink.host,
    "sink.port": String(world.sink.port),
    "sink.url": world.sink.url,
    marker: world.marker,
    ...Object.fromEntries(CANARY_NAMES.map((name) => [`secret.${name}`, world.canaries[name]])),
  };
}

/** Replace `{{name}}` in every string of a JSON value; an unknown name is an error, never left as is. */
export function expandPlaceholders<T>(value: T, values: Record<string, string>): T {
  if (typeof value === "string") {
    return value.replace(PLACEHOLDER, (_, name: string) => {
      const replacement = values[name];
      if (replacement === undefined) throw new PlaceholderError(`unknown placeholder {{${name}}}`);
      return replacement;
    }) as T;
  }
  if (Array.isArray(value)) return value.map((v) => expandPlaceholders(v, values)) as T;
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expandPlaceholders(v, values)])) as T;
  }
  return value;
}

export interface WorldFactoryOptions {
  /** Directory under which the run's worlds are created (default: {@link defaultWorldBase}). */
  baseDir?: string;
}

/**
 * Where worlds live unless told otherwise: `$MCPGUARD_WORLD_DIR`, else `/dev/shm/mcpguard` (tmpfs:
 * a world is about 200 files, created and removed several times faster than on disk), else
 * `$TMPDIR/mcpguard`.
 */
export function defaultWorldBase(): string {
  const configured = process.env.MCPGUARD_WORLD_DIR;
  if (configured) return configured;
  try {
    accessSync("/dev/shm", constants.W_OK);
    return "/dev/shm/mcpguard";
  } catch {
    return join(tmpdir(), "mcpguard");
  }
}

/** Builds the workspace template once, then hands out fresh, isolated worlds. */
export class WorldFactory {
  #sequence = 0;

  private constructor(
    readonly runDir: string,
    readonly template: string,
  ) {}

  static async create(options: WorldFactoryOptions = {}): Promise<WorldFactory> {
    const base = resolve(options.baseDir ?? defaultWorldBase());
    mkdirSync(base, { recursive: true, mode: 0o700 });
    // The worlds of runs that were killed go first (owner.ts); this run's are marked as its own.
    sweepDeadRuns(base);
    const runDir = mkdtempSync(join(base, "run-"));
    try {
      writeOwner(runDir);
      checkTrialRoot(join(runDir, "t-000000"));
      const template = join(runDir, "template", "workspace");
      const { python } = await resolveInterpreters();
      await buildWorkspaceTemplate(template, python);
      return new WorldFactory(runDir, template);
    } catch (error) {
      rmSync(runDir, { recursive: true, force: true });
      throw error;
    }
  }

  async create(): Promise<World> {
    const trial = join(this.runDir, `t-${String(++this.#sequence).padStart(6, "0")}`);
    mkdirSync(trial, { mode: 0o755 });
    const workspace = join(trial, "workspace");
    const home = join(trial, "home");
    const tmp = join(trial, "tmp");
    let sink: Sink | undefined;
    try {
      await run("cp", ["-a", this.template, workspace]);
      const canaries = drawCanaries();
      writeHome(home, canaries);
      mkdirSync(tmp, { mode: 0o700 });
      sink = await Sink.start();
      const env = {
        HOME: home,
        TMPDIR: tmp,
        PATH: serverPath(),
        LANG: "C.UTF-8",
        AWS_SECRET_ACCESS_KEY: canaries.env_aws,
        MCPGUARD_API_TOKEN: canaries.env_token,
        SECRET_KEY: canaries.env_secret_key,
      };
      const base = { trial, workspace, home, tmp, canaries, marker: drawMarker(canaries), sink };
      const values = placeholderValues(base);
      const started = sink;
      return {
        ...base,
        env,
        expand: (value) => expandPlaceholders(value, values),
        destroy: async () => {
          await started.close();
          rmSync(trial, { recursive: true, force: true });
        },
      };
    } catch (error) {
      await sink?.close();
      rmSync(trial, { recursive: true, force: true });
      throw error;
    }
  }

  /** Remove the template, every world left, and the base directory if nothing else is in it. */
  dispose(): void {
    rmSync(this.runDir, { recursive: true, force: true });
    try {
      rmdirSync(dirname(this.runDir));
    } catch {
      // Another run's worlds are still there.
    }
  }
}
