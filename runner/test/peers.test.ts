/**
 * The peer configs for real: a trivial server wrapped by srt, bwrap and firejail with the profile
 * exported from its policy, behind `mcpguard run --config C0`, as the benchmark runs it. What the
 * policy grants works; what it does not is refused by the peer; HOME and TMPDIR are the world's.
 * A peer not installed here is skipped with the reason printed.
 */
import { once } from "node:events";
import { existsSync, mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Interpreters, resolveInterpreters } from "../src/interpreters.ts";
import { repoPath } from "../src/paths.ts";
import {
  isPeerConfig,
  PEER_CONFIGS,
  peerInstall,
  peersNotRun,
  peerWorldBase,
  withViableBaseline,
} from "../src/peers.ts";
import type { ServerEntry } from "../src/registry.ts";
import { resolveConfigs } from "../src/select.ts";
import { openSession, type Session } from "../src/session.ts";
import { type World, WorldFactory } from "../src/world/world.ts";

const PROBE: ServerEntry = {
  id: "peer_probe",
  language: "javascript",
  argv: ["node", repoPath("runner", "test", "fixtures", "peerProbe.mjs")],
  sink: true,
  description: "tries one thing per tool and says what happened",
};
const POLICIES = {
  policy: repoPath("runner", "test", "fixtures", "peerProbe.policy.json"),
  manifest: repoPath("runner", "probe", "manifest.json"),
  overrides: repoPath("policies", "overrides"),
};

let factory: WorldFactory;
let interpreters: Interpreters;
beforeAll(async () => {
  [factory, interpreters] = await Promise.all([
    WorldFactory.create({ baseDir: peerWorldBase(["P-srt"]) }),
    resolveInterpreters(),
  ]);
});
afterAll(() => factory?.dispose());

async function text(session: Session, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const result = (await session.client.callTool({ name, arguments: args })) as {
    content: { text: string }[];
  };
  return result.content[0]?.text ?? "";
}

describe("peer configs", () => {
  it("are chosen only by name, never by default", () => {
    expect(resolveConfigs(undefined).some(isPeerConfig)).toBe(false);
    expect(resolveConfigs("C0,peers")).toEqual(["C0", "P-bwrap", "P-firejail", "P-srt"]);
    expect(resolveConfigs("C-full", true)).toEqual(["C-full", "P-bwrap", "P-firejail", "P-srt"]);
    // Attacks need C0 for their viable set; a benign suite does not.
    expect(withViableBaseline(resolveConfigs("C-full,P-srt"), true)).toEqual(["C0", "C-full", "P-srt"]);
    expect(withViableBaseline(resolveConfigs("C-full,P-srt"), false)).toEqual(["C-full", "P-srt"]);
    expect(withViableBaseline(["C-full"], true)).toEqual(["C-full"]);
    expect(() => resolveConfigs("P-docker")).toThrow(/unknown peer config "P-docker"/);
  });

  it("reports a peer that cannot run as not run, with the reason", () => {
    const reasons = peersNotRun([...PEER_CONFIGS, "C0"]);
    expect(reasons.has("C0")).toBe(false);
    for (const [config, reason] of reasons) expect(reason, config).toMatch(/^not run: .+/);
  });

  for (const config of PEER_CONFIGS) {
    const install = peerInstall(config);
    const skip = typeof install === "string" ? install : "";
    if (skip) console.log(`skipping ${config}: ${skip}`);

    it.skipIf(skip !== "")(
      `${config} runs the server with the profile exported from its policy, and holds it to it`,
      async () => {
        const world: World = await factory.create();
        mkdirSync(join(world.workspace, "out"));
        const session = await openSession({ world, server: PROBE, interpreters, config, policies: POLICIES });
        try {
          // What the policy grants works.
          expect(await text(session, "read", { path: join(world.workspace, "readme.txt") })).not.toMatch(
            /^error/,
          );
          expect(
            await text(session, "write", { path: join(world.workspace, "out", "a.txt"), text: "x" }),
          ).toBe("written");
          expect(existsSync(join(world.workspace, "out", "a.txt"))).toBe(true);
          // The world's HOME and TMPDIR, unchanged; a secret the policy withholds is gone.
          expect(await text(session, "env", { name: "HOME" })).toBe(JSON.stringify(world.home));
          expect(await text(session, "env", { name: "TMPDIR" })).toBe(JSON.stringify(world.tmp));
          expect(await text(session, "env", { name: "SECRET_KEY" })).toBe("null");
          // What it does not grant is refused by the peer.
          expect(await text(session, "read", { path: join(world.home, ".ssh", "id_rsa") })).toMatch(/^error/);
          expect(await text(session, "write", { path: join(world.home, "evil.txt"), text: "x" })).toMatch(
            /^error/,
          );
          expect(existsSync(join(world.home, "evil.txt"))).toBe(false);
          expect(
            await text(session, "write", { path: join(world.workspace, "readme.txt"), text: "x" }),
          ).toMatch(/^error/);
          expect(await text(session, "connect")).toMatch(/^error/);
          // Beyond the kernel layer: nothing outside the grant exists, not even its metadata, and a
          // pathname unix socket outside it cannot be reached (Landlock mediates neither).
          expect(await text(session, "stat", { path: join(world.home, ".ssh", "id_rsa") })).toMatch(/^error/);
          const host = createServer((c) => c.end()).listen(join(world.trial, "host.sock"));
          await once(host, "listening");
          try {
            expect(await text(session, "unix", { path: join(world.trial, "host.sock") })).toMatch(/^error/);
          } finally {
            host.close();
          }
          await world.sink.drain();
          expect(world.sink.events()).toHaveLength(0);
          // A program the policy does not name is not in bwrap's or firejail's view. srt has no exec
          // rule, and its export makes /usr/bin readable whole for /bin/sh (srt does not restore the
          // link /usr/bin/sh -> dash), so curl runs there: measured, and said in the profile's notes.
          const curl = await text(session, "run", { program: "curl" });
          expect(curl).toMatch(config === "P-srt" ? /^status \d+/ : /^error: (ENOENT|EACCES)/);
        } finally {
          await session.close();
          await world.destroy();
        }
      },
    );
  }
});
