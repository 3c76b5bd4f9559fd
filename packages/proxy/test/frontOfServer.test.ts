/**
 * `mcpguard run` in front of a server, as a new user sets it up (issue 13): a policy is never
 * silently widened by the folder the client starts the proxy in, a draft never runs without a
 * word, and L1 follows a dangling symlink to the file a write would create.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { connect, FIXTURE, MCPGUARD, makeWorkspace, readNdjson, toolText } from "./helpers.ts";

const ROOT = join(import.meta.dirname, "..", "..", "..");
const FIXTURE_POLICY = join(import.meta.dirname, "fixtures", "policy.json");

let scratch: string;
let work: string;
beforeEach(() => {
  ({ scratch, work } = makeWorkspace("mcpguard-front-"));
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

describe("broad grants", () => {
  it("refuses {{cwd}}/** when the client starts the proxy in /, in one line naming the tool", () => {
    for (const config of ["C-app", "C-ebpf"]) {
      const r = spawnSync(
        process.execPath,
        [MCPGUARD, "run", "--config", config, "--policy", FIXTURE_POLICY, "--", process.execPath, FIXTURE],
        { cwd: "/", encoding: "utf8", input: "", timeout: 30_000 },
      );
      expect(r.status, config).toBe(2);
      expect(r.stderr).toBe(
        `mcpguard run: config ${config}: policy "proxy-fixture", tool "read": the read grant "{{cwd}}/**" (/**) covers / entirely; refused (give the folders the tool needs, or set "allowBroadGrants": true in the policy)\n`,
      );
    }
  });

  it("runs it when the policy says allowBroadGrants", async () => {
    const policy = JSON.parse(readFileSync(FIXTURE_POLICY, "utf8"));
    const file = join(scratch, "broad.json");
    writeFileSync(file, JSON.stringify({ ...policy, allowBroadGrants: true }));
    const s = await connect(
      [MCPGUARD, "run", "--config", "C-app", "--policy", file, "--", process.execPath, FIXTURE],
      undefined,
      "/",
    );
    expect(toolText(await s.client.callTool({ name: "echo", arguments: { text: "hi" } }))).toBe("hi");
    await s.client.close();
  });
});

describe("draft policies", () => {
  it("run with one warning on stderr, and the start record says draft", async () => {
    const policy = JSON.parse(readFileSync(FIXTURE_POLICY, "utf8"));
    const draft = join(scratch, "draft.json");
    writeFileSync(draft, JSON.stringify({ ...policy, draft: true }));
    const log = join(scratch, "audit.ndjson");
    const s = await connect(
      [
        MCPGUARD,
        "run",
        "--config",
        "C-app",
        "--policy",
        draft,
        "--audit-log",
        log,
        "--",
        process.execPath,
        FIXTURE,
      ],
      undefined,
      work,
    );
    expect(toolText(await s.client.callTool({ name: "read", arguments: { path: "readme.txt" } }))).toBe(
      "inside",
    );
    await s.client.close();
    const warnings = s
      .stderr()
      .split("\n")
      .filter((l) => l.startsWith("mcpguard: warning:"));
    expect(warnings).toEqual([
      `mcpguard: warning: ${draft} is a draft policy ("draft": true) that nobody has reviewed: check its grants (its description says what to look at), then remove the mark`,
    ]);
    expect(readNdjson(log).find((e) => e.event === "start")).toMatchObject({ draft: true });

    const reviewed = await connect(
      [
        MCPGUARD,
        "run",
        "--config",
        "C-app",
        "--policy",
        FIXTURE_POLICY,
        "--audit-log",
        log,
        "--",
        process.execPath,
        FIXTURE,
      ],
      undefined,
      work,
    );
    await reviewed.client.close();
    expect(reviewed.stderr()).not.toMatch(/draft/);
    expect(readNdjson(log).filter((e) => e.event === "start")[1]?.draft).toBeUndefined();
  });
});

describe("a write through a dangling symlink", () => {
  const victim = ["python3", "-u", "-B", join(ROOT, "servers", "python", "filesystem.py")];
  const policy = join(ROOT, "policies", "servers", "filesystem.json");

  it("is refused by L1 under C-app when the link points out of the grant; the file is never made", async () => {
    const outside = join(scratch, "outside");
    mkdirSync(outside);
    const target = join(outside, "created_via_dangling.txt");
    symlinkSync(target, join(work, "notes.txt"));
    // The probe is real: without the layers, the write lands outside.
    const plain = await connect([MCPGUARD, "run", "--config", "C0", "--", ...victim], undefined, work);
    await plain.client.callTool({ name: "write_file", arguments: { path: "notes.txt", content: "escaped" } });
    await plain.client.close();
    expect(readFileSync(target, "utf8")).toBe("escaped");
    rmSync(target);

    const guarded = await connect(
      [MCPGUARD, "run", "--config", "C-app", "--policy", policy, "--", ...victim],
      undefined,
      work,
    );
    const refused = await guarded.client.callTool({
      name: "write_file",
      arguments: { path: "notes.txt", content: "escaped" },
    });
    expect(refused.isError).toBe(true);
    expect(toolText(refused)).toBe(
      `Blocked by mcpguard (L1): ${target} is outside what write_file may write`,
    );
    // A relative link that stays in the workspace is an ordinary new file.
    symlinkSync("fresh.txt", join(work, "fresh.lnk"));
    const inside = await guarded.client.callTool({
      name: "write_file",
      arguments: { path: "fresh.lnk", content: "kept" },
    });
    expect(inside.isError).toBeFalsy();
    await guarded.client.close();
    expect(existsSync(target)).toBe(false);
    expect(readFileSync(join(work, "fresh.txt"), "utf8")).toBe("kept");
  });
});
