/**
 * Kernel events on their way to the audit log (issue 29): a server that repeats a refused call in a
 * loop, or varies its target, costs a bounded number of records per window, and nothing is lost
 * from the counts.
 */
import type { KernelEvent } from "@mcpguard/kernel";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AuditEvent } from "../src/audit.ts";
import { DEFAULT_KERNEL_MAX_KEYS, KernelEvents } from "../src/kernelEvents.ts";

const WINDOW = 1000;
const sendto = (port = 9, pid = 7): KernelEvent => ({
  type: "deny",
  backend: "cgroup-bpf",
  op: "sendmsg4",
  pid,
  comm: "node",
  family: 4,
  addr: "10.0.0.1",
  port,
  proto: "udp",
});

let records: Record<string, unknown>[];
let events: KernelEvents;
beforeEach(() => {
  vi.useFakeTimers({ now: Date.parse("2026-12-04T12:00:00.000Z") });
  records = [];
  events = new KernelEvents({
    write: (e: AuditEvent) => records.push(e as unknown as Record<string, unknown>),
    server: () => "flood",
    config: "C-full",
  });
});
afterEach(() => {
  events.close();
  vi.useRealTimers();
});

/** `n` events spread evenly over `ms`, the clock moving between them. */
function feed(n: number, ms: number, event: (i: number) => KernelEvent): void {
  const step = ms / n;
  let at = 0;
  for (let i = 0; i < n; i++) {
    events.add(event(i));
    at += step;
    if (at >= 1) {
      vi.advanceTimersByTime(Math.floor(at));
      at -= Math.floor(at);
    }
  }
}

const counted = (list: Record<string, unknown>[]) =>
  list.reduce((n, r) => n + (typeof r.count === "number" ? r.count : 1), 0);

describe("KernelEvents", () => {
  it("writes a key's first event at once and counts the rest in one record a window, at any rate", () => {
    events.add(sendto());
    expect(records).toEqual([
      expect.objectContaining({
        type: "kernel",
        event: "deny",
        decision: "deny",
        backend: "cgroup-bpf",
        op: "sendmsg4",
        addr: "10.0.0.1",
        port: 9,
        server: "flood",
        config: "C-full",
      }),
    ]);
    expect(records[0]).not.toHaveProperty("count");
    // 200,000 more over 10 s, from two processes: the pid is not part of the key.
    feed(200_000, 10 * WINDOW, (i) => sendto(9, 7 + (i % 2)));
    vi.advanceTimersByTime(2 * WINDOW);
    // One record a window, and the first one: the bound depends on the time, never on the rate.
    expect(records.length).toBeLessThanOrEqual(1 + 10 + 1);
    expect(counted(records)).toBe(200_001);
    const aggregate = records[1] as Record<string, unknown>;
    expect(aggregate).toMatchObject({
      type: "kernel",
      event: "deny",
      decision: "deny",
      backend: "cgroup-bpf",
      op: "sendmsg4",
      addr: "10.0.0.1",
      port: 9,
      pid: 7,
      comm: "node",
    });
    expect(Date.parse(aggregate.lastTime as string) - Date.parse(aggregate.firstTime as string)).toBeLessThan(
      WINDOW,
    );
    // The flood over, the key's window closes: its next event is written at once.
    const before = records.length;
    events.add(sendto());
    expect(records.length).toBe(before + 1);
    expect(records.at(-1)).not.toHaveProperty("count");
  });

  it("bounds the keys: past maxKeys a new target is counted in one overflow record per type and op", () => {
    // Every datagram to a new port, 100,000 over 5 s, and a few file refusals among them.
    feed(100_000, 5 * WINDOW, (i) =>
      i % 1000 === 0
        ? {
            type: "denied",
            backend: "landlock",
            syscall: "openat",
            errno: 13,
            pid: 7,
            path: `/etc/f${i}`,
          }
        : sendto(1024 + i),
    );
    vi.advanceTimersByTime(2 * WINDOW);
    // Per window: at most maxKeys written at once, maxKeys counts, and one overflow per kind.
    const windows = 5 + 2;
    expect(records.length).toBeLessThanOrEqual(windows * (2 * DEFAULT_KERNEL_MAX_KEYS + 2));
    expect(counted(records)).toBe(100_000);
    const overflow = records.filter((r) => r.overflow === true);
    expect(overflow.length).toBeGreaterThan(0);
    const sendOverflow = overflow.find((r) => r.op === "sendmsg4") as Record<string, unknown>;
    expect(sendOverflow).toMatchObject({
      type: "kernel",
      event: "deny",
      decision: "deny",
      backend: "cgroup-bpf",
      server: "flood",
      config: "C-full",
    });
    // Every port new: as many targets as events, up to the 10,000 a record counts.
    expect(sendOverflow.count).toBeGreaterThan(10_000);
    expect(sendOverflow).toMatchObject({ targets: 10_000, targetsCapped: true });
    expect(sendOverflow.samples).toEqual([
      expect.objectContaining({ addr: "10.0.0.1", port: expect.any(Number) }),
      expect.anything(),
      expect.anything(),
    ]);
    expect(sendOverflow).not.toHaveProperty("pid");
  });

  it("flush() writes what is counted, so the first refusal after a call is written right after it", () => {
    events.add(sendto());
    events.add(sendto());
    events.add(sendto());
    expect(records).toHaveLength(1);
    events.flush(); // `mcpguard run`: before a decision record
    expect(records).toHaveLength(2);
    expect(records[1]).toMatchObject({ count: 2 });
    events.add(sendto());
    expect(records).toHaveLength(3);
    expect(records[2]).not.toHaveProperty("count");
  });

  it("close() writes what is counted, and every later event at once; its timers keep nothing alive", () => {
    events.add(sendto());
    events.add(sendto());
    expect(vi.getTimerCount()).toBe(1);
    vi.useRealTimers();
    const real = new KernelEvents({ write: () => {}, server: () => "s", config: "C-full" });
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
    const before = timers();
    real.add(sendto());
    expect(timers()).toBe(before); // unref'd
    real.close();
    events.close();
    expect(records).toHaveLength(2);
    events.add(sendto());
    events.add(sendto());
    expect(records).toHaveLength(4);
  });

  it("keys forks by type, exits by code and signal, execs by file, and anything KernelEvent-shaped by its fields", () => {
    for (let pid = 100; pid < 110; pid++) {
      events.add({ type: "fork", pid, child: pid + 1 });
      events.add({ type: "exit", pid, code: 0 });
      events.add({ type: "exec", pid, ppid: 1, filename: "/usr/bin/git" });
    }
    events.add({ type: "exit", pid: 200, code: 1 });
    events.add({ type: "exit", pid: 201, code: 0, signal: 9 });
    events.add({ type: "exec", pid: 202, ppid: 1, filename: "/usr/bin/curl" });
    // The proxy's own resolver (kernelLayer.ts): its refusals by name and qtype.
    events.add({ type: "dns-refused", backend: "proxy-resolver", name: "a.evil.example", qtype: "TXT" });
    events.add({ type: "dns-refused", backend: "proxy-resolver", name: "a.evil.example", qtype: "TXT" });
    events.add({
      type: "dns-refused",
      backend: "proxy-resolver",
      decision: "deny",
      name: "b.evil.example",
      qtype: "TXT",
    });
    const atOnce = records.map((r) => `${r.event}:${r.decision}:${r.code ?? r.filename ?? r.name ?? ""}`);
    expect(atOnce).toEqual([
      "fork:observe:",
      "exit:observe:0",
      "exec:observe:/usr/bin/git",
      "exit:observe:1",
      "exit:observe:0",
      "exec:observe:/usr/bin/curl",
      "dns-refused:observe:a.evil.example",
      "dns-refused:deny:b.evil.example",
    ]);
    events.flush();
    expect(records.slice(8).map((r) => `${r.event}:${r.count}`)).toEqual([
      "fork:9",
      "exit:9",
      "exec:9",
      "dns-refused:1",
    ]);
  });
});
