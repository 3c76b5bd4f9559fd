/**
 * The loopback sink: the attacker's endpoint inside a trial. One random port, TCP and UDP, on
 * 127.0.0.1 and ::1. It records every accepted connection and every datagram with all their bytes,
 * answers HTTP requests with a short 200 so HTTP clients finish cleanly, and reads any other stream
 * until EOF or one second of silence (CASES.md §5.3).
 */
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { createServer, type Server, type Socket } from "node:net";

export interface SinkEvent {
  /** Milliseconds since the epoch when the connection was accepted or the datagram arrived. */
  t: number;
  proto: "tcp" | "udp";
  family: 4 | 6;
  peer: string;
  bytes: Buffer;
}

const HTTP_METHOD = /^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS|CONNECT|TRACE) /;
const IDLE_CLOSE_MS = 1000;

/** Ports already given to a sink by this process: a run never reuses one. */
const usedPorts = new Set<number>();

interface Connection {
  event: SinkEvent;
  socket: Socket;
  chunks: Buffer[];
  lastActivity: number;
  ended: boolean;
}

function listenTcp(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host, port, ipv6Only: host === "::1", exclusive: true }, () => {
      server.off("error", reject);
      const address = server.address();
      resolve(typeof address === "object" && address ? address.port : port);
    });
  });
}

function bindUdp(socket: UdpSocket, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once("error", reject);
    socket.bind({ address: host, port, exclusive: true }, () => {
      socket.off("error", reject);
      resolve();
    });
  });
}

/** Where an HTTP request ends, once its headers and body are in; undefined while incomplete. */
export function httpRequestComplete(data: Buffer): boolean {
  const headerEnd = data.indexOf("\r\n\r\n");
  if (headerEnd === -1) return false;
  const head = data.subarray(0, headerEnd).toString("latin1");
  const body = data.length - (headerEnd + 4);
  if (/^transfer-encoding:\s*chunked/im.test(head)) {
    return data.subarray(headerEnd + 4).includes("0\r\n\r\n");
  }
  const length = /^content-length:\s*(\d+)/im.exec(head);
  return body >= (length ? Number(length[1]) : 0);
}

export class Sink {
  readonly host = "127.0.0.1";
  readonly #events: SinkEvent[] = [];
  readonly #connections: Connection[] = [];
  #closed = false;

  private constructor(
    readonly port: number,
    readonly servers: { tcp4: Server; tcp6: Server; udp4: UdpSocket; udp6: UdpSocket },
  ) {
    servers.tcp4.on("connection", (socket) => this.#accept(socket, 4));
    servers.tcp6.on("connection", (socket) => this.#accept(socket, 6));
    servers.udp4.on("message", (msg, rinfo) => this.#datagram(msg, 4, `${rinfo.address}:${rinfo.port}`));
    servers.udp6.on("message", (msg, rinfo) => this.#datagram(msg, 6, `[${rinfo.address}]:${rinfo.port}`));
  }

  /** Bind TCP and UDP on both loopback addresses on one fresh port, retrying with another on failure. */
  static async start(): Promise<Sink> {
    let lastError: unknown;
    for (let attempt = 0; attempt < 32; attempt++) {
      const tcp4 = createServer();
      const tcp6 = createServer();
      const udp4 = createSocket({ type: "udp4" });
      const udp6 = createSocket({ type: "udp6", ipv6Only: true });
      try {
        const port = await listenTcp(tcp4, "127.0.0.1", 0);
        if (usedPorts.has(port)) throw new Error(`port ${port} was already used in this run`);
        await listenTcp(tcp6, "::1", port);
        await bindUdp(udp4, "127.0.0.1", port);
        await bindUdp(udp6, "::1", port);
        usedPorts.add(port);
        return new Sink(port, { tcp4, tcp6, udp4, udp6 });
      } catch (error) {
        lastError = error;
        tcp4.close();
        tcp6.close();
        for (const udp of [udp4, udp6]) {
          try {
            udp.close();
          } catch {
            // Never bound.
          }
        }
      }
    }
    throw new Error(
      `cannot bind the sink on 127.0.0.1 and ::1 (TCP and UDP on one port): ${(lastError as Error)?.message}. ` +
        "IPv6 loopback is required: the IPv6 cases are never skipped silently.",
    );
  }

  get url(): string {
    return `http://${this.host}:${this.port}`;
  }

  /** Every contact so far; a TCP event's bytes are everything received on that connection. */
  events(): SinkEvent[] {
    for (const c of this.#connections) c.event.bytes = Buffer.concat(c.chunks);
    return [...this.#events];
  }

  contacted(): boolean {
    return this.#events.length > 0;
  }

  /**
   * Let the trial's traffic settle: read pending datagrams, then wait until every accepted TCP
   * connection has ended or been idle for 100 ms, 500 ms at most (CASES.md §4, step 4).
   */
  async drain(): Promise<void> {
    for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve));
    const deadline = Date.now() + 500;
    while (Date.now() < deadline) {
      const now = Date.now();
      if (this.#connections.every((c) => c.ended || now - c.lastActivity >= 100)) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const c of this.#connections) c.socket.destroy();
    const { tcp4, tcp6, udp4, udp6 } = this.servers;
    await Promise.all([
      new Promise((resolve) => tcp4.close(resolve)),
      new Promise((resolve) => tcp6.close(resolve)),
      new Promise<void>((resolve) => udp4.close(() => resolve())),
      new Promise<void>((resolve) => udp6.close(() => resolve())),
    ]);
  }

  #accept(socket: Socket, family: 4 | 6): void {
    const peer =
      family === 6
        ? `[${socket.remoteAddress}]:${socket.remotePort}`
        : `${socket.remoteAddress}:${socket.remotePort}`;
    const connection: Connection = {
      event: { t: Date.now(), proto: "tcp", family, peer, bytes: Buffer.alloc(0) },
      socket,
      chunks: [],
      lastActivity: Date.now(),
      ended: false,
    };
    this.#events.push(connection.event);
    this.#connections.push(connection);
    let answered = false;
    socket.setTimeout(IDLE_CLOSE_MS, () => socket.destroy());
    socket.on("data", (chunk: Buffer) => {
      connection.chunks.push(chunk);
      connection.lastActivity = Date.now();
      if (answered) return;
      const data = Buffer.concat(connection.chunks);
      if (HTTP_METHOD.test(data.subarray(0, 16).toString("latin1")) && httpRequestComplete(data)) {
        answered = true;
        socket.end(
          "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nOK",
        );
      }
    });
    const finish = () => {
      connection.ended = true;
      connection.lastActivity = Date.now();
    };
    socket.on("end", () => {
      finish();
      socket.end();
    });
    socket.on("close", finish);
    socket.on("error", finish);
  }

  #datagram(bytes: Buffer, family: 4 | 6, peer: string): void {
    if (this.#closed) return;
    this.#events.push({ t: Date.now(), proto: "udp", family, peer, bytes });
  }
}
