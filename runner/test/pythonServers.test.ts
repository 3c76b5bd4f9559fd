/**
 * The Python victims' own stdlib unittest suite (servers/python/tests), run as part of the
 * project's tests so CI counts it.
 */
import { spawnSync } from "node:child_process";
import { expect, it } from "vitest";
import { resolveInterpreters } from "../src/interpreters.ts";
import { REPO_ROOT } from "../src/paths.ts";

it("servers/python unittest suite passes", async () => {
  const { python } = await resolveInterpreters();
  const result = spawnSync(python, ["-B", "-m", "unittest", "discover", "-s", "servers/python/tests"], {
    cwd: REPO_ROOT,
    encoding: "utf8",
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
    timeout: 180_000,
  });
  const tail = result.stderr.split("\n").slice(-40).join("\n");
  expect(result.status, tail).toBe(0);
  expect(result.stderr).toMatch(/^Ran \d+ tests? in/m);
  expect(result.stderr).toMatch(/^OK/m);
}, 200_000);
