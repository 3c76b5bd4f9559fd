/**
 * The hidden behaviours of the malicious and trojaned servers really happen: with no defense, in a
 * fresh world, every hidden attack case's oracle fires on the real effect, while a second world
 * standing by is left untouched. The benign servers have no hidden effect at all.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Interpreters, resolveInterpreters } from "../src/interpreters.ts";
import { judge, type Outcome, responseText, takeSnapshot } from "../src/judge.ts";
import { loadRegistry, type ServerEntry } from "../src/registry.ts";
import { loadScenarios, type Oracle, type Scenario } from "../src/scenario.ts";
import { suitePaths } from "../src/select.ts";
import { openSession } from "../src/session.ts";
import { applySetup } from "../src/trial.ts";
import { type World, WorldFactory } from "../src/world/world.ts";

const registry = loadRegistry();
const { scenarios } = loadScenarios(suitePaths("core"));
const hidden = scenarios.filter((s) => s.kind === "attack" && s.visibility === "hidden");
const benign = scenarios.filter((s) => s.kind === "benign");

let factory: WorldFactory;
let interpreters: Interpreters;

beforeAll(async () => {
  [factory, interpreters] = await Promise.all([WorldFactory.create(), resolveInterpreters()]);
});
afterAll(() => factory.dispose());

/** Run one case straight against its server (no proxy) in `world`; judge `oracle` afterwards. */
async function runDirect(scenario: Scenario, world: World, oracle: Oracle) {
  applySetup(world, scenario.setup ?? []);
  const expanded = world.expand(oracle);
  const roots = [world.workspace, world.home, world.tmp];
  const session = await openSession({
    world,
    server: registry.get(scenario.server) as ServerEntry,
    interpreters,
    config: "direct",
  });
  try {
    const before = await takeSnapshot(roots, expanded, interpreters.python);
    let outcome: Outcome;
    try {
      outcome = {
        kind: "result",
        result: await session.client.callTool({
          name: scenario.tool,
          arguments: world.expand(scenario.arguments),
        }),
      };
    } catch (error) {
      outcome = { kind: "error", message: (error as Error).message };
    }
    await world.sink.drain();
    const after = await takeSnapshot(roots, expanded, interpreters.python);
    return {
      judgement: judge(expanded, {
        response: responseText(outcome),
        sink: world.sink.events(),
        before,
        after,
        canaries: world.canaries,
      }),
      before,
      after,
    };
  } finally {
    await session.close();
  }
}

const everything = (w: World) => [w.workspace, w.home, w.tmp];

/** Live processes whose working directory or command line lies inside `dir`. */
function processesIn(dir: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (cwd.startsWith(dir) || cmdline.includes(dir)) found.push(Number(entry));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return found;
}

describe("hidden behaviours, with no defense", () => {
  it("covers the 43 hidden attacks in 21 distinct server · tool groups", () => {
    expect(hidden).toHaveLength(43);
    expect(new Set(hidden.map((s) => `${s.server}·${s.tool}`)).size).toBe(21);
  });

  it.concurrent.each(hidden.map((s) => [s.id, s] as const))(
    "%s: the effect really happens, and a world standing by is untouched",
    async (_, scenario) => {
      const [world, bystander] = await Promise.all([factory.create(), factory.create()]);
      try {
        const untouched = await takeSnapshot(
          everything(bystander),
          { sink_contacted: true },
          interpreters.python,
        );
        const { judgement } = await runDirect(scenario, world, scenario.oracle as Oracle);
        expect(judgement.fired, `${scenario.id} ${scenario.title}`).toBe(true);
        // The session is closed: nothing the server started (curl in its own session included) is left.
        expect(processesIn(world.trial)).toEqual([]);
        await bystander.sink.drain();
        expect(bystander.sink.events()).toEqual([]);
        const now = await takeSnapshot(everything(bystander), { sink_contacted: true }, interpreters.python);
        expect([...now.files]).toEqual([...untouched.files]);
      } finally {
        await Promise.all([world.destroy(), bystander.destroy()]);
      }
    },
  );
});

describe("benign servers, with no defense", () => {
  it.concurrent.each(benign.map((s) => [s.id, s] as const))(
    "%s works and has no effect outside the workspace",
    async (_, scenario) => {
      const world = await factory.create();
      try {
        const { judgement, before, after } = await runDirect(scenario, world, scenario.expect as Oracle);
        expect(judgement.fired, `${scenario.id} ${scenario.title}`).toBe(true);
        expect(world.sink.events()).toEqual([]);
        const outside = (snap: typeof before) =>
          [...snap.files].filter(([path]) => !path.startsWith(`${world.workspace}/`));
        expect(outside(after)).toEqual(outside(before));
      } finally {
        await world.destroy();
      }
    },
  );
});
