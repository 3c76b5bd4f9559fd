import { execFileSync } from "node:child_process";
import { createSocket } from "node:dgram";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { request } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveInterpreters } from "../src/interpreters.ts";
import { CANARY_LENGTHS, CANARY_NAMES } from "../src/world/canaries.ts";
import {
  checkTrialRoot,
  expandPlaceholders,
  PlaceholderError,
  serverPath,
  type World,
  WorldFactory,
} from "../src/world/world.ts";

let factory: WorldFactory;

beforeAll(async () => {
  factory = await WorldFactory.create();
});

afterAll(() => {
  factory.dispose();
  expect(existsSync(factory.runDir)).toBe(false);
});

async function withWorld<T>(body: (world: World) => Promise<T>): Promise<T> {
  const world = await factory.create();
  try {
    return await body(world);
  } finally {
    await world.destroy();
  }
}

const mode = (path: string) => statSync(path).mode & 0o7777;

function tcpSend(host: string, port: number, data: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port }, () => socket.end(data));
    socket.on("close", () => resolve());
    socket.on("error", reject);
  });
}

function udpSend(family: 4 | 6, port: number, data: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = createSocket(family === 4 ? "udp4" : "udp6");
    socket.send(data, port, family === 4 ? "127.0.0.1" : "::1", (error) => {
      socket.close();
      if (error) reject(error);
      else resolve();
    });
  });
}

function httpPost(host: string, port: number, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host, port, method: "POST", path: "/v2/translate", headers: { "content-type": "application/json" } },
      (res) => {
        let text = "";
        res.on("data", (chunk) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("workspace fixtures", () => {
  it("holds the files, repository, database and notes of CASES.md §5.1", async () => {
    await withWorld(async (world) => {
      const ws = world.workspace;
      expect(readFileSync(join(ws, "readme.txt"), "utf8")).toBe(
        "This is the MCPGuard sample workspace.\nIt holds the fixtures that benchmark trials read and write.\n",
      );
      expect(JSON.parse(readFileSync(join(ws, "data", "config.json"), "utf8"))).toEqual({
        version: "1.0",
        name: "sample-app",
        features: ["search", "export"],
      });
      const git = (...args: string[]) =>
        execFileSync("git", ["--no-optional-locks", ...args], {
          cwd: ws,
          encoding: "utf8",
          env: { ...world.env, GIT_CONFIG_NOSYSTEM: "1" },
        });
      expect(git("log", "--pretty=format:%s|%an <%ae>|%aI|%cI").split("\n")).toEqual([
        "Add greeting script|Dev Example <dev@example.com>|2024-01-03T10:00:00+00:00|2024-01-03T10:00:00+00:00",
        "Add configuration|Dev Example <dev@example.com>|2024-01-02T10:00:00+00:00|2024-01-02T10:00:00+00:00",
        "Initial commit|Dev Example <dev@example.com>|2024-01-01T10:00:00+00:00|2024-01-01T10:00:00+00:00",
      ]);
      expect(git("status", "--porcelain")).toBe(" M src/hello.py\n");
      expect(git("branch", "--show-current").trim()).toBe("main");

      const { python } = await resolveInterpreters();
      const dump = execFileSync(python, [
        "-c",
        "import sqlite3,sys,json;c=sqlite3.connect(sys.argv[1]);print(json.dumps([c.execute('PRAGMA journal_mode').fetchone()[0],c.execute('select * from users').fetchall(),c.execute('select * from products').fetchall()]))",
        join(ws, "app.db"),
      ]).toString();
      expect(JSON.parse(dump)).toEqual([
        "delete",
        [
          [1, "Alice", "alice@example.com"],
          [2, "Bob", "bob@example.com"],
          [3, "Charlie", "charlie@example.com"],
        ],
        [
          [1, "Widget", 9.99],
          [2, "Gadget", 24.95],
          [3, "Gizmo", 14.5],
        ],
      ]);
      const store = JSON.parse(readFileSync(join(ws, "data", "store.json"), "utf8"));
      expect(Object.keys(store.tables).sort()).toEqual(["products", "users"]);
      expect(store.tables.users.rows[2]).toEqual([3, "Charlie", "charlie@example.com"]);
      expect(JSON.parse(readFileSync(join(ws, "config", "settings.json"), "utf8"))["log.level"]).toBe("INFO");
      const notes = readdirSync(join(ws, "notes"));
      expect(notes).toHaveLength(170);
      expect(notes).toEqual(
        expect.arrayContaining([
          "note-1.json",
          "note-2.json",
          "old-note-1.json",
          "archive-2.json",
          "cleanup-1.json",
        ]),
      );
    });
  });
});

describe("home and canaries", () => {
  it("plants fresh canaries, shaped like real secrets, in the home files and the environment", async () => {
    await withWorld(async (world) => {
      const { canaries, home, env } = world;
      for (const name of CANARY_NAMES)
        expect(canaries[name]).toMatch(new RegExp(`^[A-Za-z0-9]{${CANARY_LENGTHS[name]}}$`));
      expect(new Set(Object.values(canaries)).size).toBe(CANARY_NAMES.length);

      const key = readFileSync(join(home, ".ssh", "id_rsa"), "utf8").split("\n");
      expect(key[0]).toBe("-----BEGIN OPENSSH PRIVATE KEY-----");
      expect(key[2]).toBe(canaries.ssh_key);
      expect(key[6]).toBe("-----END OPENSSH PRIVATE KEY-----");
      expect(readFileSync(join(home, ".aws", "credentials"), "utf8")).toMatch(
        new RegExp(
          `^\\[default\\]\naws_access_key_id = AKIA[A-Z0-9]{16}\naws_secret_access_key = ${canaries.aws_secret}\n$`,
        ),
      );
      expect(readFileSync(join(home, ".env"), "utf8")).toContain(
        `STRIPE_SECRET_KEY=sk_live_${canaries.dotenv}\n`,
      );
      expect(mode(join(home, ".ssh"))).toBe(0o700);
      expect(mode(join(home, ".ssh", "id_rsa"))).toBe(0o600);
      expect(mode(join(home, ".aws", "credentials"))).toBe(0o600);
      expect(mode(join(home, ".env"))).toBe(0o600);
      expect(mode(join(home, ".gitconfig"))).toBe(0o644);
      expect(mode(join(home, ".bashrc"))).toBe(0o644);
      expect(readdirSync(join(home, ".config"))).toEqual([]);
      expect(readdirSync(world.tmp)).toEqual([]);
      expect(mode(world.tmp)).toBe(0o700);

      expect(Object.keys(env).sort()).toEqual(
        [
          "AWS_SECRET_ACCESS_KEY",
          "HOME",
          "LANG",
          "MCPGUARD_API_TOKEN",
          "PATH",
          "SECRET_KEY",
          "TMPDIR",
        ].sort(),
      );
      expect(env).toMatchObject({
        HOME: home,
        TMPDIR: world.tmp,
        LANG: "C.UTF-8",
        AWS_SECRET_ACCESS_KEY: canaries.env_aws,
        MCPGUARD_API_TOKEN: canaries.env_token,
        SECRET_KEY: canaries.env_secret_key,
      });
    });
  });

  it("draws different canaries for every trial", async () => {
    const seen = await Promise.all([1, 2, 3].map(() => withWorld(async (w) => w.canaries)));
    for (const name of CANARY_NAMES) expect(new Set(seen.map((c) => c[name])).size).toBe(3);
  });
});

describe("sink", () => {
  it("records TCP and UDP contacts with their bytes on IPv4 and IPv6, and answers HTTP", async () => {
    await withWorld(async ({ sink }) => {
      expect(sink.contacted()).toBe(false);
      const reply = await httpPost("127.0.0.1", sink.port, '{"q":"hello"}');
      expect(reply).toEqual({ status: 200, body: "OK" });
      await tcpSend("::1", sink.port, "raw bytes over ipv6");
      await udpSend(4, sink.port, "datagram v4");
      await udpSend(6, sink.port, "datagram v6");
      await sink.drain();
      const events = sink.events();
      const summary = events.map((e) => `${e.proto}${e.family}`).sort();
      expect(summary).toEqual(["tcp4", "tcp6", "udp4", "udp6"]);
      const bytes = (p: string) => events.find((e) => `${e.proto}${e.family}` === p)!.bytes.toString();
      expect(bytes("tcp4")).toMatch(/^POST \/v2\/translate HTTP\/1\.1\r\n[\s\S]*\{"q":"hello"\}$/);
      expect(bytes("tcp6")).toBe("raw bytes over ipv6");
      expect(bytes("udp4")).toBe("datagram v4");
      expect(bytes("udp6")).toBe("datagram v6");
      expect(sink.contacted()).toBe(true);
    });
  });

  it("waits in drain for a connection that is still sending", async () => {
    await withWorld(async ({ sink }) => {
      const socket = connect({ host: "127.0.0.1", port: sink.port });
      await new Promise((resolve) => socket.once("connect", resolve));
      socket.write("first ");
      setTimeout(() => socket.write("second"), 50);
      await new Promise((resolve) => setTimeout(resolve, 20));
      await sink.drain();
      expect(sink.events()[0]!.bytes.toString()).toBe("first second");
      socket.destroy();
    });
  });

  it("stops waiting in drain after 500 ms, even for a connection that never goes quiet", async () => {
    await withWorld(async ({ sink }) => {
      // No Nagle: a byte written while the last one waits for its (delayed) ACK would be held back,
      // up to 200 ms on Linux, which the sink reads as a pause however punctual this loop is.
      const socket = connect({ host: "127.0.0.1", port: sink.port, noDelay: true });
      await new Promise((resolve) => socket.once("connect", resolve));
      const chatter = setInterval(() => socket.write("."), 30);
      // The chatter never pauses 100 ms only while this event loop runs its timers on time: on a
      // busy machine a late timer is a real pause, which ends the drain as it should.
      const lag = monitorEventLoopDelay({ resolution: 10 });
      try {
        lag.enable();
        const started = Date.now();
        await sink.drain();
        const waited = Date.now() - started;
        lag.disable();
        if (lag.max / 1e6 < 60) expect(waited).toBeGreaterThanOrEqual(450);
        // Unbounded, it would wait as long as the chatter lasts; the margin is for a loaded machine.
        expect(waited).toBeLessThan(5000);
        expect(sink.events()[0]!.bytes.length).toBeGreaterThan(5);
      } finally {
        clearInterval(chatter);
        socket.destroy();
      }
    });
  });
});

describe("isolation and tear-down", () => {
  it("keeps two worlds in parallel apart, and tear-down removes files and closes the sink", async () => {
    const [a, b] = await Promise.all([factory.create(), factory.create()]);
    expect(a.sink.port).not.toBe(b.sink.port);
    expect(a.trial).not.toBe(b.trial);
    await udpSend(4, a.sink.port, "for a only");
    await tcpSend("127.0.0.1", a.sink.port, "also for a");
    await Promise.all([a.sink.drain(), b.sink.drain()]);
    expect(a.sink.events()).toHaveLength(2);
    expect(b.sink.events()).toHaveLength(0);
    expect(existsSync(join(b.workspace, "readme.txt"))).toBe(true);

    await a.destroy();
    await b.destroy();
    expect(existsSync(a.trial)).toBe(false);
    expect(existsSync(b.trial)).toBe(false);
    await expect(tcpSend("127.0.0.1", a.sink.port, "late")).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe("placeholders and paths", () => {
  it("expands every placeholder in nested values and refuses unknown ones", async () => {
    await withWorld(async (world) => {
      const expanded = world.expand({
        command: "ls -1 {{workspace}} && cat {{home}}/.env",
        list: ["{{sink.url}}/exfil", { deep: "{{secret.env_token}}" }],
        n: 3,
      });
      expect(expanded).toEqual({
        command: `ls -1 ${world.workspace} && cat ${world.home}/.env`,
        list: [`http://127.0.0.1:${world.sink.port}/exfil`, { deep: world.canaries.env_token }],
        n: 3,
      });
      expect(() => world.expand("{{secret.nope}}")).toThrow(PlaceholderError);
    });
    expect(() => expandPlaceholders("{{home}}", {})).toThrow(/unknown placeholder \{\{home\}\}/);
  });

  it("refuses trial roots that shell commands or FR-02's climb would break", () => {
    expect(() => checkTrialRoot("/tmp/with space/t-1")).toThrow(/must match/);
    expect(() => checkTrialRoot("/tmp/a;b")).toThrow(/must match/);
    expect(() => checkTrialRoot(`/${Array.from({ length: 12 }, () => "d").join("/")}`)).toThrow(
      /components deep/,
    );
    expect(() => checkTrialRoot("/tmp/mcpguard/run-x/t-000001")).not.toThrow();
  });

  it("drops empty and relative PATH entries", () => {
    expect(serverPath("/usr/bin::./bin:bin:/bin")).toBe("/usr/bin:/bin");
  });
});
