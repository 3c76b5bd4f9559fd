/**
 * The resolver a guarded server's DNS goes to (src/dns.ts, src/resolver.ts): its reading of
 * queries against arbitrary bytes, and the whole resolver against a real stub resolver (c-ares,
 * Node's dns.Resolver) and an upstream of the test's own that records what reaches it. The kernel
 * side (the redirect of port 53) is tested through the proxy: packages/proxy/test/dns.test.ts.
 */
import { createSocket } from "node:dgram";
import { Resolver } from "node:dns/promises";
import { connect } from "node:net";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import {
  clientAnswer,
  errorAnswer,
  nameGranted,
  RCODE_REFUSED,
  readQuery,
  recordedName,
  upstreamQuery,
} from "../src/dns.ts";
import type { KernelEvent } from "../src/loader.ts";
import { NameResolver, parseUpstream } from "../src/resolver.ts";

/** A query in wire form: `id`, `name`, `type`, and an OPT record with `options` bytes when given. */
function query(id: number, name: string, type: number, opt?: { size: number; options: Buffer }): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(0x0100, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(opt ? 1 : 0, 10);
  const labels = name
    .split(".")
    .filter(Boolean)
    .map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, "latin1")]));
  const question = Buffer.from([0, (type >> 8) & 0xff, type & 0xff, 0, 1]);
  const parts: Buffer[] = [header, ...labels, question];
  if (opt) {
    const rr = Buffer.alloc(11);
    rr.writeUInt16BE(41, 1);
    rr.writeUInt16BE(opt.size, 3);
    rr.writeUInt16BE(opt.options.length, 9);
    parts.push(rr, opt.options);
  }
  return Buffer.concat(parts);
}

/** An upstream's answer to `msg`: `count` A records (192.0.2.x) named by pointer, and an OPT record. */
function upstreamAnswer(msg: Buffer, count = 1): Buffer {
  let end = 12;
  while (msg[end] !== 0) end += 1 + (msg[end] as number);
  end += 5;
  const header = Buffer.from(msg.subarray(0, 12));
  header.writeUInt16BE(0x8180, 2);
  header.writeUInt16BE(count, 6);
  header.writeUInt16BE(0, 8);
  header.writeUInt16BE(1, 10);
  const records = Array.from({ length: count }, (_, i) =>
    Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, i + 1]),
  );
  const opt = Buffer.from([0, 0, 41, 4, 208, 0, 0, 0, 0, 0, 0]);
  return Buffer.concat([header, msg.subarray(12, end), ...records, opt]);
}

describe("reading a query", () => {
  it("never throws on any bytes, and takes only one plain question with at most an OPT record", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), (bytes) => {
        const read = readQuery(Buffer.from(bytes));
        if (read.ok) {
          expect(read.query.wireName.length).toBeGreaterThan(0);
          expect(bytes[2]! >> 7).toBe(0);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("reads what a stub resolver sends, and refuses answers, several questions, compression and trailing bytes", () => {
    const ok = readQuery(
      query(7, "Api.Example.com", 1, { size: 4096, options: Buffer.from([0, 12, 0, 2, 0, 0]) }),
    );
    expect(ok).toMatchObject({
      ok: true,
      query: { id: 7, name: "Api.Example.com", type: 1, edns: true, udpSize: 1232 },
    });
    const answer = query(7, "a.example", 1);
    answer.writeUInt16BE(0x8180, 2);
    expect(readQuery(answer)).toMatchObject({ ok: false, why: "not a DNS query (header)" });
    const two = query(7, "a.example", 1);
    two.writeUInt16BE(2, 4);
    expect(readQuery(two).ok).toBe(false);
    const pointer = Buffer.concat([
      query(7, "a.example", 1).subarray(0, 12),
      Buffer.from([0xc0, 12, 0, 1, 0, 1]),
    ]);
    expect(readQuery(pointer)).toMatchObject({ ok: false, why: "not a DNS query (question)" });
    expect(readQuery(Buffer.concat([query(7, "a.example", 1), Buffer.from("x")]))).toMatchObject({
      ok: false,
      why: "not a DNS query (trailing bytes)",
    });
    expect(readQuery(Buffer.alloc(60_000, 0xab))).toMatchObject({
      ok: false,
      why: "not a DNS query (too long)",
    });
  });

  it("refuses a label that holds a dot: joined, `api.example` + `com` would read as a granted name", () => {
    const header = query(9, "x", 1).subarray(0, 12);
    const dotted = Buffer.concat([
      header,
      Buffer.from([11]),
      Buffer.from("api.example", "latin1"),
      Buffer.from([3]),
      Buffer.from("com", "latin1"),
      Buffer.from([0, 0, 1, 0, 1]),
    ]);
    expect(readQuery(dotted)).toEqual({ ok: false, why: "a label of the name holds a dot" });
    expect(readQuery(query(9, "api.example.com", 1))).toMatchObject({
      ok: true,
      query: { name: "api.example.com" },
    });
  });
});

describe("names", () => {
  it("grants a name exactly or below a wildcard, in any letter case, with or without the root's dot", () => {
    const names = ["api.example.com", "*.cdn.example"];
    expect(nameGranted("API.Example.com.", names)).toBe(true);
    expect(nameGranted("x.y.cdn.example", names)).toBe(true);
    expect(nameGranted("cdn.example", names)).toBe(false);
    expect(nameGranted("api.example.com.evil.example", names)).toBe(false);
    expect(nameGranted("evilcdn.example", names)).toBe(false);
    // RFC 4343: ASCII letters only; the byte 0xC0 is not 0xE0 to a name server.
    expect(nameGranted("\u00c0pi.example.com", ["\u00e0pi.example.com"])).toBe(false);
  });

  it("records a refused name by where it would go, never by what its labels carry", () => {
    expect(recordedName("other.example")).toBe("other.example");
    expect(recordedName("c2VjcmV0.bWFpbA.attacker.example")).toBe("…(2 labels).attacker.example");
    expect(recordedName("a\u0000b.example")).toBe("a?b.example");
  });
});

describe("what goes upstream and what comes back", () => {
  it("the upstream query carries the name in lower case and the type: not the client's id, case, EDNS options or padding", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 0xffff }),
        fc.array(fc.constantFrom(..."aAbBcCxXyYzZ09-"), { minLength: 1, maxLength: 20 }),
        fc.uint8Array({ minLength: 4, maxLength: 40 }),
        (id, letters, options) => {
          const name = `${letters.join("")}.example`;
          const read = readQuery(query(id, name, 28, { size: 4096, options: Buffer.from(options) }));
          if (!read.ok) return;
          const wire = upstreamQuery(read.query, 0x4242);
          expect(wire).toEqual(
            upstreamQuery(readQuery(query(0, name.toLowerCase(), 28)).query as never, 0x4242),
          );
        },
      ),
    );
  });

  it("fits an upstream answer to the client: its id, its letter case, no OPT unless it sent one, truncated for a small UDP size", () => {
    const read = readQuery(query(99, "Api.Example.com", 1));
    if (!read.ok) throw new Error(read.why);
    const upstream = upstreamAnswer(upstreamQuery(read.query, 0x1111));
    const fitted = clientAnswer(upstream, read.query, 0x1111, true) as Buffer;
    expect(fitted.readUInt16BE(0)).toBe(99);
    expect(fitted.subarray(12, 12 + read.query.wireName.length)).toEqual(read.query.wireName);
    expect(fitted.readUInt16BE(10)).toBe(0); // the upstream's OPT is gone
    expect(clientAnswer(upstream, read.query, 0x2222, true)).toBeUndefined(); // another id
    const big = upstreamAnswer(upstreamQuery(read.query, 0x1111), 40);
    const cut = clientAnswer(big, read.query, 0x1111, true) as Buffer;
    expect(cut.readUInt16BE(2) & 0x0200).toBe(0x0200);
    expect(cut.readUInt16BE(6)).toBe(0);
    expect((clientAnswer(big, read.query, 0x1111, false) as Buffer).readUInt16BE(6)).toBe(40);
    const refused = errorAnswer(read.query, RCODE_REFUSED);
    expect(refused.readUInt16BE(2) & 0xf).toBe(RCODE_REFUSED);
  });
});

describe("the resolver, asked by c-ares", () => {
  const closers: (() => void)[] = [];
  afterEach(() => {
    for (const close of closers.splice(0)) close();
  });

  /** An upstream that answers every A query and records every name it is asked. */
  async function upstream() {
    const asked: string[] = [];
    const socket = createSocket("udp4");
    socket.on("message", (msg, from) => {
      const read = readQuery(msg);
      asked.push(read.ok ? read.query.name : "?");
      socket.send(upstreamAnswer(msg, 2), from.port, from.address);
    });
    await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", () => resolve()));
    closers.push(() => socket.close());
    return { address: `127.0.0.1:${socket.address().port}`, asked };
  }

  async function resolverFor(names: string[], upstreamAddress: string) {
    const events: KernelEvent[] = [];
    const resolver = await NameResolver.start({
      names,
      upstream: [parseUpstream(upstreamAddress)],
      onEvent: (e) => events.push(e),
    });
    closers.push(() => resolver.close());
    const client = new Resolver({ timeout: 1000, tries: 1 });
    client.setServers([`127.0.0.1:${resolver.port}`]);
    return { resolver, client, events };
  }

  it("answers the granted names and their wildcards, refuses the rest before they leave", async () => {
    const up = await upstream();
    const { client, events } = await resolverFor(["api.example.com", "*.cdn.example"], up.address);
    expect(await client.resolve4("api.example.com")).toEqual(["192.0.2.1", "192.0.2.2"]);
    expect(await client.resolve4("img.cdn.example")).toEqual(["192.0.2.1", "192.0.2.2"]);
    await expect(client.resolve4("evil.example")).rejects.toMatchObject({ code: "EREFUSED" });
    await expect(client.resolveTxt("api.example.com")).rejects.toMatchObject({ code: "EREFUSED" });
    expect(up.asked).toEqual(["api.example.com", "img.cdn.example"]);
    expect(events.map((e) => [e.type, e.reason, e.name])).toEqual([
      ["dns-refused", "the policy does not grant this name", "evil.example"],
      ["dns-refused", "type 16 is not one a host is reached by", "api.example.com"],
    ]);
  });

  it("answers SERVFAIL when no upstream answers, and drops a flood past its rate", async () => {
    const silent = createSocket("udp4");
    await new Promise<void>((resolve) => silent.bind(0, "127.0.0.1", () => resolve()));
    closers.push(() => silent.close());
    const { resolver, events } = await resolverFor(["api.example.com"], `127.0.0.1:${silent.address().port}`);
    const client = new Resolver({ timeout: 4000, tries: 1 });
    client.setServers([`127.0.0.1:${resolver.port}`]);
    await expect(client.resolve4("api.example.com")).rejects.toMatchObject({ code: "ESERVFAIL" });
    // 400 queries in batches of 10: the burst (200) and what the rate (50 a second) adds meanwhile
    // reach the (silent) upstream; the rest is refused.
    let reached = 0;
    silent.on("message", () => reached++);
    const sender = createSocket("udp4");
    closers.push(() => sender.close());
    const started = Date.now();
    for (let i = 0; i < 400; i++) {
      sender.send(query(i, "api.example.com", 1), resolver.port, "127.0.0.1");
      if (i % 10 === 9) await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    const limited = events.filter((e) => String(e.reason).startsWith("more than")).length;
    const allowance = 200 + 50 * ((Date.now() - started) / 1000) + 2;
    expect(reached).toBeLessThanOrEqual(allowance);
    expect(limited).toBeGreaterThan(0);
    expect(reached + limited).toBeLessThanOrEqual(401);
  });

  it("over TCP: a framed query is answered, a stream of other bytes gets nothing and is closed", async () => {
    const up = await upstream();
    const { resolver, events } = await resolverFor(["api.example.com"], up.address);
    const exchange = (bytes: Buffer) =>
      new Promise<Buffer>((resolve) => {
        const socket = connect(resolver.port, "127.0.0.1", () => socket.write(bytes));
        let got = Buffer.alloc(0);
        socket.on("data", (chunk) => {
          got = Buffer.concat([got, chunk]);
          if (got.length >= 2 && got.length >= 2 + got.readUInt16BE(0)) socket.end();
        });
        socket.on("close", () => resolve(got));
      });
    const q = query(5, "api.example.com", 1);
    const framed = Buffer.concat([Buffer.from([q.length >> 8, q.length & 0xff]), q]);
    const reply = await exchange(framed);
    expect(reply.readUInt16BE(2)).toBe(5); // the client's id
    expect(reply.readUInt16BE(8)).toBe(2); // two answers
    expect((await exchange(Buffer.from("GET / HTTP/1.1\r\n\r\n"))).length).toBe(0);
    expect(events.at(-1)).toMatchObject({ type: "dns-refused", transport: "tcp" });
  });
});
