/**
 * The resolver a guarded server's DNS goes to (bpf/net.bpf.c sends every UDP datagram and TCP
 * connection of its cgroup to port 53 here, whatever address it named): it answers only for the
 * names the policy grants, asking the system's resolver with a query of its own, and refuses
 * everything else. A query for another name gets REFUSED and never leaves the host; bytes that are
 * not one plain DNS question (a tunnel's payload, a 60,000-byte datagram) get no answer at all. So
 * a name granted by the policy opens the lookups it needs and no channel: what a server could put
 * in a name reaches no name server.
 *
 * It listens on 127.0.0.1 and, where the host has it, ::1, on one port for UDP and TCP, inside the
 * proxy, which the cgroup hooks do not see. Each refusal is a kernel-layer event for the audit log
 * (`dns-refused`), whose name keeps its last two labels only (dns.ts, recordedName).
 */
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { readFileSync } from "node:fs";
import { createServer, isIP, Socket as NetSocket, type Server, type Socket } from "node:net";
import {
  ASKABLE_TYPES,
  clientAnswer,
  errorAnswer,
  MAX_UDP,
  nameGranted,
  type Query,
  RCODE_REFUSED,
  RCODE_SERVFAIL,
  readQuery,
  recordedName,
  upstreamQuery,
} from "./dns.js";
import type { KernelEvent } from "./loader.js";

export interface Upstream {
  address: string;
  port: number;
}

export interface ResolverOptions {
  /** The names the policy grants: `host`, or `*.suffix`. */
  names: readonly string[];
  /** Where granted queries go; default the name servers of /etc/resolv.conf. */
  upstream?: readonly Upstream[];
  /** A refused query, as a kernel-layer event for the audit log. */
  onEvent: (event: KernelEvent) => void;
  /** How long an upstream may take before the next one is asked (default 2000 ms). */
  timeoutMs?: number;
}

/** Queries a second a server may make, and the burst it may save up. */
const RATE = 50;
const BURST = 200;
/** TCP clients at once, and how long one may stay idle. */
const MAX_TCP = 32;
const TCP_IDLE_MS = 10_000;

/** The name servers of /etc/resolv.conf (the C library's default, the local host, when it lists none). */
export function systemNameServers(): Upstream[] {
  let text = "";
  try {
    text = readFileSync("/etc/resolv.conf", "utf8");
  } catch {
    // None: the C library asks the local host.
  }
  const servers = [...text.matchAll(/^\s*nameserver\s+(\S+)/gm)]
    .map((m) => (m[1] as string).replace(/%.*$/, ""))
    .filter((a) => isIP(a) > 0);
  const unique = servers.length > 0 ? [...new Set(servers)] : ["127.0.0.1", "::1"];
  return unique.map((address) => ({ address, port: 53 }));
}

/** Parse `host:port` or `[v6]:port` (port 53 when left out). */
export function parseUpstream(text: string): Upstream {
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  const [address, port] = v6 ? [v6[1] as string, v6[2]] : (text.split(":") as [string, string?]);
  const n = port === undefined ? 53 : Number(port);
  if (!isIP(address) || !Number.isInteger(n) || n < 1 || n > 65535)
    throw new Error(`a resolver is an address and a port (1.2.3.4:53, [::1]:53), not "${text}"`);
  return { address, port: n };
}

function bindUdp(type: "udp4" | "udp6", address: string, port: number): Promise<UdpSocket> {
  return new Promise((resolve, reject) => {
    const socket = createSocket(type);
    socket.once("error", reject);
    socket.bind(port, address, () => {
      socket.off("error", reject);
      resolve(socket);
    });
  });
}

function listenTcp(address: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen({ host: address, port, exclusive: true }, () => {
      server.off("error", reject);
      resolve(server);
    });
  });
}

export class NameResolver {
  readonly #udp: UdpSocket[] = [];
  readonly #tcp: Server[] = [];
  readonly #clients = new Set<Socket>();
  readonly #upstream: readonly Upstream[];
  #tokens = BURST;
  #refilled = Date.now();
  #closed = false;

  private constructor(
    private readonly options: ResolverOptions,
    /** The port it listens on, on 127.0.0.1 (and ::1 where `ipv6`). */
    readonly port: number,
    readonly ipv6: boolean,
  ) {
    this.#upstream = options.upstream?.length ? options.upstream : systemNameServers();
  }

  /** Listen on one free port for UDP and TCP, on 127.0.0.1 and (where it works) ::1. */
  static async start(options: ResolverOptions): Promise<NameResolver> {
    let lastError: unknown;
    for (let attempt = 0; attempt < 10; attempt++) {
      const udp4 = await bindUdp("udp4", "127.0.0.1", 0);
      const port = udp4.address().port;
      let tcp4: Server;
      try {
        tcp4 = await listenTcp("127.0.0.1", port);
      } catch (error) {
        // The port is taken for TCP: another one.
        lastError = error;
        udp4.close();
        continue;
      }
      const v6: { udp?: UdpSocket; tcp?: Server } = {};
      try {
        v6.udp = await bindUdp("udp6", "::1", port);
        v6.tcp = await listenTcp("::1", port);
      } catch {
        // No IPv6 loopback here, or the port is taken there: IPv4 only.
        v6.udp?.close();
        v6.udp = undefined;
      }
      const resolver = new NameResolver(options, port, v6.tcp !== undefined);
      for (const udp of [udp4, v6.udp]) if (udp) resolver.#serveUdp(udp);
      for (const tcp of [tcp4, v6.tcp]) if (tcp) resolver.#serveTcp(tcp);
      return resolver;
    }
    throw new Error(`cannot listen for the server's DNS: ${(lastError as Error)?.message ?? "no free port"}`);
  }

  #serveUdp(socket: UdpSocket): void {
    // The proxy's own lifetime decides: its sockets never keep it running.
    socket.unref();
    socket.on("message", (msg, rinfo) => void this.#udpQuery(socket, msg, rinfo.address, rinfo.port));
    socket.on("error", () => {});
    this.#udp.push(socket);
  }

  #serveTcp(server: Server): void {
    server.unref();
    server.on("connection", (client) => this.#tcpClient(client));
    server.on("error", () => {});
    this.#tcp.push(server);
  }

  /** Stop answering: every socket closed, every TCP client dropped. */
  close(): void {
    this.#closed = true;
    for (const socket of this.#udp) socket.close();
    for (const server of this.#tcp) server.close();
    for (const client of this.#clients) client.destroy();
    this.#udp.length = 0;
    this.#tcp.length = 0;
  }

  #refuse(
    reason: string,
    transport: "udp" | "tcp",
    query?: Partial<Query>,
    bytes?: number,
    granted = false,
  ): void {
    const name =
      query?.name === undefined ? undefined : granted ? query.name.toLowerCase() : recordedName(query.name);
    this.options.onEvent({
      type: "dns-refused",
      decision: "deny",
      backend: "proxy-resolver",
      transport,
      reason,
      ...(name !== undefined ? { name } : {}),
      ...(query?.type !== undefined ? { qtype: query.type } : {}),
      ...(bytes !== undefined ? { bytes } : {}),
    });
  }

  /** A token for one query (RATE a second, BURST saved up at most). */
  #admit(): boolean {
    const now = Date.now();
    this.#tokens = Math.min(BURST, this.#tokens + ((now - this.#refilled) / 1000) * RATE);
    this.#refilled = now;
    if (this.#tokens < 1) return false;
    this.#tokens--;
    return true;
  }

  /**
   * The answer to one message from a client, or undefined for none: a refusal for a query it may
   * not make, nothing at all for bytes that are not a query.
   */
  async #answer(msg: Buffer, transport: "udp" | "tcp"): Promise<Buffer | undefined> {
    const read = readQuery(msg);
    if (!read.ok) {
      this.#refuse(read.why, transport, read.query, msg.length);
      return read.query?.id !== undefined && read.query.wireName
        ? errorAnswer(read.query as Query, RCODE_REFUSED)
        : undefined;
    }
    const { query } = read;
    if (!nameGranted(query.name, this.options.names)) {
      this.#refuse("the policy does not grant this name", transport, query);
      return errorAnswer(query, RCODE_REFUSED);
    }
    if (!ASKABLE_TYPES.has(query.type)) {
      // A granted name carries nothing: it is recorded whole.
      this.#refuse(`type ${query.type} is not one a host is reached by`, transport, query, undefined, true);
      return errorAnswer(query, RCODE_REFUSED);
    }
    if (!this.#admit()) {
      this.#refuse(`more than ${RATE} queries a second`, transport, query, undefined, true);
      return undefined;
    }
    return (await this.#forward(query, transport)) ?? errorAnswer(query, RCODE_SERVFAIL);
  }

  async #udpQuery(socket: UdpSocket, msg: Buffer, address: string, port: number): Promise<void> {
    const answer = await this.#answer(msg, "udp");
    if (answer && !this.#closed) socket.send(answer, port, address);
  }

  #tcpClient(client: Socket): void {
    if (this.#clients.size >= MAX_TCP) {
      client.destroy();
      return;
    }
    this.#clients.add(client);
    client.setTimeout(TCP_IDLE_MS, () => client.destroy());
    client.on("close", () => this.#clients.delete(client));
    client.on("error", () => {});
    let buffered = Buffer.alloc(0);
    let busy = Promise.resolve();
    client.on("data", (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2) {
        const length = buffered.readUInt16BE(0);
        if (length > MAX_UDP) {
          // Longer than any query: not DNS. Judged once, then the connection goes.
          this.#refuse("not a DNS query (too long)", "tcp", undefined, length);
          client.destroy();
          return;
        }
        if (buffered.length < 2 + length) break;
        const msg = buffered.subarray(2, 2 + length);
        buffered = buffered.subarray(2 + length);
        busy = busy.then(async () => {
          const answer = await this.#answer(msg, "tcp");
          if (!answer) {
            client.destroy();
            return;
          }
          const framed = Buffer.alloc(2 + answer.length);
          framed.writeUInt16BE(answer.length, 0);
          answer.copy(framed, 2);
          if (!client.destroyed) client.write(framed);
        });
      }
      if (buffered.length > 2 + MAX_UDP) client.destroy();
    });
  }

  /** Ask each upstream in turn: the first answer to the question, fitted to the client, or undefined. */
  async #forward(query: Query, transport: "udp" | "tcp"): Promise<Buffer | undefined> {
    const timeoutMs = this.options.timeoutMs ?? 2000;
    for (const upstream of this.#upstream) {
      // node:crypto on first use: a kernel-layer start that forwards no query never loads it.
      const id = process.getBuiltinModule("node:crypto").randomInt(0x10000);
      const wire = upstreamQuery(query, id);
      const answers = (reply: Buffer) => clientAnswer(reply, query, id, false) !== undefined;
      let reply = await exchangeUdp(upstream, wire, answers, timeoutMs);
      // Truncated for UDP: a TCP client gets the whole answer over TCP.
      if (reply && transport === "tcp" && (reply.readUInt16BE(2) & 0x0200) !== 0)
        reply = await exchangeTcp(upstream, wire, answers, timeoutMs);
      if (reply) return clientAnswer(reply, query, id, transport === "udp");
    }
    return undefined;
  }
}

/** One UDP exchange: the first reply that `answers` (others are ignored), or undefined at the timeout. */
function exchangeUdp(
  upstream: Upstream,
  wire: Buffer,
  answers: (reply: Buffer) => boolean,
  timeoutMs: number,
): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const socket = createSocket(isIP(upstream.address) === 6 ? "udp6" : "udp4");
    const done = (answer: Buffer | undefined) => {
      clearTimeout(timer);
      socket.close();
      resolve(answer);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    socket.on("error", () => done(undefined));
    socket.on("message", (reply) => {
      if (answers(reply)) done(reply);
    });
    socket.connect(upstream.port, upstream.address, () => socket.send(wire));
  });
}

/** One TCP exchange (RFC 7766 framing), or undefined on any failure or at the timeout. */
function exchangeTcp(
  upstream: Upstream,
  wire: Buffer,
  answers: (reply: Buffer) => boolean,
  timeoutMs: number,
): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const framed = Buffer.alloc(2 + wire.length);
    framed.writeUInt16BE(wire.length, 0);
    wire.copy(framed, 2);
    let buffered = Buffer.alloc(0);
    const socket = new NetSocket();
    const done = (answer: Buffer | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    socket.on("error", () => done(undefined));
    socket.on("data", (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (buffered.length < 2 || buffered.length < 2 + buffered.readUInt16BE(0)) return;
      const reply = buffered.subarray(2, 2 + buffered.readUInt16BE(0));
      done(answers(reply) ? reply : undefined);
    });
    socket.connect(upstream.port, upstream.address, () => socket.write(framed));
  });
}
