import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveInterpreters } from "../src/interpreters.ts";
import { environmentProblems, probeEnvironment } from "../src/probe.ts";
import { WorldFactory } from "../src/world/world.ts";

const world = { HOME: "/w/home", TMPDIR: "/w/tmp", PATH: "/usr/bin", LANG: "C.UTF-8" };

describe("environment probe", () => {
  let factory: WorldFactory;
  beforeAll(async () => {
    factory = await WorldFactory.create();
  });
  afterAll(() => factory.dispose());

  it("accepts C0, which keeps the world's environment", async () => {
    expect(await probeEnvironment("C0", factory, await resolveInterpreters())).toBeNull();
  });

  it("names every variable a config removed or changed", () => {
    expect(environmentProblems(world, world)).toEqual([]);
    expect(environmentProblems({ ...world, HOME: "/root", LANG: null, PATH: "" }, world)).toEqual([
      "removes PATH",
      "removes LANG",
      "changes HOME to /root",
    ]);
    expect(environmentProblems({ ...world, TMPDIR: "/tmp" }, world)).toEqual(["changes TMPDIR to /tmp"]);
  });
});
