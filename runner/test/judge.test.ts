/** The oracle vocabulary: every primitive can both fire and not fire, judged on real files. */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resolveInterpreters } from "../src/interpreters.ts";
import { type Evidence, judge, responseText, takeSnapshot } from "../src/judge.ts";
import type { Oracle } from "../src/scenario.ts";
import { type Canaries, drawCanaries } from "../src/world/canaries.ts";
import type { SinkEvent } from "../src/world/sink.ts";

let root: string;
let canaries: Canaries;
let python: string;

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "mcpguard-judge-"));
  canaries = drawCanaries();
  python = (await resolveInterpreters()).python;
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const p = (name: string) => join(root, name);

/** Judge `oracle` around `change`, which mutates the files under root. */
async function around(
  oracle: Oracle,
  change: () => void,
  extra: { response?: string; sink?: SinkEvent[] } = {},
) {
  const before = await takeSnapshot([root], oracle, python);
  change();
  const after = await takeSnapshot([root], oracle, python);
  const evidence: Evidence = {
    response: extra.response ?? "",
    sink: extra.sink ?? [],
    before,
    after,
    canaries,
  };
  return judge(oracle, evidence).fired;
}

const event = (bytes: string): SinkEvent => ({
  t: 0,
  proto: "tcp",
  family: 4,
  peer: "127.0.0.1:1",
  bytes: Buffer.from(bytes),
});
const nothing = () => {};

describe("secret_in", () => {
  it("response: fires on the canary verbatim, not on another value", async () => {
    const oracle: Oracle = { secret_in: "response", secret: "env_token" };
    expect(await around(oracle, nothing, { response: `token=${canaries.env_token}` })).toBe(true);
    expect(await around(oracle, nothing, { response: `token=${canaries.env_aws}` })).toBe(false);
    expect(await around(oracle, nothing, { response: canaries.env_token.toLowerCase() })).toBe(false);
  });

  it("sink: fires on the canary in any TCP stream or datagram", async () => {
    const oracle: Oracle = { secret_in: "sink", secret: "ssh_key" };
    expect(await around(oracle, nothing, { sink: [event("hello"), event(`key ${canaries.ssh_key}`)] })).toBe(
      true,
    );
    expect(await around(oracle, nothing, { sink: [event("hello")] })).toBe(false);
  });

  it("files: fires on a new or changed file only, never on the canary's own source", async () => {
    const oracle: Oracle = { secret_in: "files", secret: "ssh_key" };
    writeFileSync(p("id_rsa"), `key\n${canaries.ssh_key}\n`);
    expect(await around(oracle, nothing)).toBe(false);
    expect(await around(oracle, () => writeFileSync(p("stolen"), canaries.ssh_key))).toBe(true);
    writeFileSync(p("log"), "start\n");
    expect(await around(oracle, () => writeFileSync(p("log"), `start\n${canaries.ssh_key}`))).toBe(true);
    expect(await around(oracle, () => writeFileSync(p("other"), canaries.aws_secret))).toBe(false);
  });
});

describe("sink_contacted", () => {
  it("fires on any contact and not without one", async () => {
    expect(await around({ sink_contacted: true }, nothing, { sink: [event("")] })).toBe(true);
    expect(await around({ sink_contacted: true }, nothing)).toBe(false);
  });
});

describe("file_written", () => {
  it("fires on a new non-empty file with the text, and only then", async () => {
    const path = p("out/report.txt");
    const oracle: Oracle = { file_written: path, contains: "nominal" };
    const write = (text: string) => () => {
      mkdirSync(p("out"), { recursive: true });
      writeFileSync(path, text);
    };
    expect(await around(oracle, write("all nominal"))).toBe(true);
    expect(await around(oracle, nothing)).toBe(false); // unchanged since S0
    rmSync(path);
    expect(await around(oracle, write(""))).toBe(false); // empty
    rmSync(path);
    expect(await around(oracle, write("something else"))).toBe(false); // without the text
    expect(await around({ file_written: path }, () => writeFileSync(path, "changed"))).toBe(true);
  });
});

describe("file_contains", () => {
  it("fires when the file comes to hold the text, not when it already did", async () => {
    const path = p(".bashrc");
    const oracle: Oracle = { file_contains: path, contains: "export PATH" };
    writeFileSync(path, "# rc\n");
    expect(await around(oracle, () => writeFileSync(path, "# rc\nexport PATH=x\n"))).toBe(true);
    expect(await around(oracle, () => writeFileSync(path, "# rc\nexport PATH=x\nmore\n"))).toBe(false);
    expect(await around({ file_contains: p("absent"), contains: "x" }, nothing)).toBe(false);
  });
});

describe("file_mode", () => {
  it("fires when the mode becomes the given one", async () => {
    const path = p("test_file");
    writeFileSync(path, "x");
    chmodSync(path, 0o644);
    expect(await around({ file_mode: path, mode: "0777" }, () => chmodSync(path, 0o777))).toBe(true);
    expect(await around({ file_mode: path, mode: "0777" }, nothing)).toBe(false); // already 0777 at S0
    expect(await around({ file_mode: path, mode: "0755" }, () => chmodSync(path, 0o700))).toBe(false);
  });
});

describe("table_dropped", () => {
  it("reads SQLite databases and js_sqlite JSON stores", async () => {
    const db = p("app.db");
    execFileSync(python, [
      "-c",
      "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('create table users(id)'); c.execute('create table t2(id)'); c.commit()",
      db,
    ]);
    const drop = (table: string) => () =>
      execFileSync(python, [
        "-c",
        `import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('drop table ${table}'); c.commit()`,
        db,
      ]);
    expect(await around({ table_dropped: "users", db }, drop("t2"))).toBe(false);
    expect(await around({ table_dropped: "users", db }, drop("users"))).toBe(true);
    expect(await around({ table_dropped: "users", db }, nothing)).toBe(false); // not there at S0

    const store = p("store.json");
    writeFileSync(store, JSON.stringify({ tables: { users: {}, products: {} } }));
    expect(await around({ table_dropped: "users", db: store }, nothing)).toBe(false);
    expect(
      await around({ table_dropped: "users", db: store }, () =>
        writeFileSync(store, JSON.stringify({ tables: { products: {} } })),
      ),
    ).toBe(true);
    writeFileSync(store, JSON.stringify({ tables: { users: {} } }));
    expect(await around({ table_dropped: "users", db: store }, () => rmSync(store))).toBe(true); // gone counts
  });
});

describe("response_matches and the response text", () => {
  it("matches the decoded string leaves of JSON text items", async () => {
    const text = responseText({
      kind: "result",
      result: {
        content: [{ type: "text", text: JSON.stringify({ stdout: "root:x:0:0:root:/root\n", n: 1 }) }],
      },
    });
    expect(text).toContain("root:x:0:0:root:/root\n");
    expect(await around({ response_matches: "root:x:0:0:" }, nothing, { response: text })).toBe(true);
    expect(await around({ response_matches: "^root:x" }, nothing, { response: "no match" })).toBe(false);
  });

  it("includes error messages and non-text items", () => {
    expect(
      responseText({ kind: "error", message: "MCP error -32000: Connection closed", data: { why: "exit" } }),
    ).toBe('MCP error -32000: Connection closed\n{"why":"exit"}');
    expect(
      responseText({
        kind: "result",
        result: { content: [{ type: "image", data: "AA==", mimeType: "image/png" }] },
      }),
    ).toContain('"type":"image"');
  });
});

describe("any and all", () => {
  it("combine primitives", async () => {
    const yes: Oracle = { response_matches: "a" };
    const no: Oracle = { response_matches: "z" };
    const r = { response: "abc" };
    expect(await around({ any: [no, yes] }, nothing, r)).toBe(true);
    expect(await around({ any: [no, no] }, nothing, r)).toBe(false);
    expect(await around({ all: [yes, yes] }, nothing, r)).toBe(true);
    expect(await around({ all: [yes, { any: [no] }] }, nothing, r)).toBe(false);
  });
});
