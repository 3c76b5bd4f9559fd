/**
 * A server that never starts under L3: the client and the proxy's stderr learn why, in one line,
 * from the kernel's refusals seen before it answered `initialize`.
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { Relay } from "../src/relay.ts";
import { describeDenial, StartupDenials } from "../src/startupDenials.ts";

const INITIALIZE = `${JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
})}\n`;

function relayFor(
  script: string,
  startFailure: (status: number | undefined) => string | undefined,
  startWatchMs: number,
) {
  const input = new PassThrough();
  const output = new PassThrough();
  const lines: Record<string, unknown>[] = [];
  let buffered = "";
  output.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split("\n");
    buffered = parts.pop() ?? "";
    for (const part of parts) if (part) lines.push(JSON.parse(part));
  });
  const logs: string[] = [];
  const relay = new Relay({
    argv: [process.execPath, "-e", script],
    config: "C-ebpf",
    input,
    output,
    log: (line) => logs.push(line),
    startFailure,
    startWatchMs,
    closeGraceMs: 100,
    termGraceMs: 100,
  });
  const status = relay.run();
  input.write(INITIALIZE);
  return { input, lines, logs, status };
}

describe("start-up refusals", () => {
  it("name the refusals that explain a failed start first, each once", () => {
    const startup = new StartupDenials();
    const denied = (fields: Record<string, unknown>) =>
      startup.note({ type: "denied", backend: "landlock", ...fields });
    denied({ syscall: "openat", errno: 13, path: "/proc/self/cgroup" });
    denied({ syscall: "openat", errno: 13, path: "/etc/resolv.conf" });
    denied({ syscall: "openat", errno: 13, path: "/etc/resolv.conf" });
    denied({ syscall: "execve", errno: 13, path: "/usr/bin/npx" });
    startup.note({ type: "exec", pid: 1, filename: "/usr/bin/node" });
    expect(startup.summary(126)).toBe(
      "under L3 the server's start was denied: exec /usr/bin/npx, open /etc/resolv.conf, open /proc/self/cgroup",
    );
    expect(startup.summary(undefined)).toMatch(
      /^the server has not answered initialize; under L3 its start was denied: exec/,
    );
    expect(new StartupDenials().summary(1)).toBeUndefined();
    // Its own exit, or the proxy's SIGTERM, is not the kernel's doing; SIGSYS (seccomp's) is.
    expect(startup.summary(0)).toBeUndefined();
    expect(startup.summary(143)).toBeUndefined();
    expect(startup.summary(159)).toMatch(/^under L3 the server's start was denied: exec/);
    // A runtime that aborts on a refusal (Python's fatal error: SIGABRT).
    expect(startup.summary(134)).toMatch(/^under L3 the server's start was denied: exec/);
    // A runtime's locale probes explain nothing, and are left out of the line.
    const probes = new StartupDenials();
    probes.note({
      type: "denied",
      backend: "landlock",
      syscall: "openat",
      errno: 13,
      path: "/usr/share/locale/locale.alias",
    });
    probes.note({
      type: "denied",
      backend: "landlock",
      syscall: "openat",
      errno: 13,
      path: "/usr/lib/x86_64-linux-gnu/gconv/gconv-modules.cache",
    });
    expect(probes.summary(3)).toBeUndefined();
    probes.note({ type: "denied", backend: "landlock", syscall: "openat", errno: 13, path: "/etc/app.conf" });
    expect(probes.summary(3)).toBe("under L3 the server's start was denied: open /etc/app.conf");
    expect(new StartupDenials().summary(126)).toMatch(/see the launcher's line above/);
    // Only what Node.js and Python read at start and do without: not named as the cause.
    const runtime = new StartupDenials();
    for (const path of ["/proc/self/cgroup", "/proc/meminfo", "/sys/fs/cgroup/memory.max"])
      runtime.note({ type: "denied", backend: "landlock", syscall: "openat", errno: 13, path });
    expect(runtime.summary(1)).toBe(
      "the server exited (status 1); under L3 the kernel refused only what runtimes read at start and usually do without (open /proc/self/cgroup, open /proc/meminfo, open /sys/fs/cgroup/memory.max), so its own output may say why",
    );
    expect(runtime.summary(undefined)).toMatch(
      /^the server has not answered initialize; under L3 its start was denied: open \/proc/,
    );
    expect(
      describeDenial({ type: "denied", syscall: "renameat2", errno: 18, path: "/w/a", to: "/x/a" }),
    ).toBe("rename /w/a to /x/a");
    expect(
      describeDenial({ type: "deny", backend: "cgroup-bpf", op: "connect4", addr: "1.2.3.4", port: 443 }),
    ).toBe("connect 1.2.3.4:443");
    expect(describeDenial({ type: "deny", backend: "cgroup-bpf", op: "bind6", addr: "::", port: 8000 })).toBe(
      "bind :::8000",
    );
    // The proxy's resolver: a name it does not answer, and bytes that are no query.
    expect(
      describeDenial({
        type: "dns-refused",
        backend: "proxy-resolver",
        name: "…(1 labels).attacker.example",
        qtype: 1,
        reason: "the policy does not grant this name",
      }),
    ).toBe("DNS A query for …(1 labels).attacker.example: the policy does not grant this name");
    expect(
      describeDenial({ type: "dns-refused", transport: "tcp", bytes: 18, reason: "not a DNS query" }),
    ).toBe("a payload to port 53 over tcp that is no DNS query (18 bytes)");
    expect(
      describeDenial({
        type: "denied",
        backend: "landlock",
        syscall: "bind",
        errno: 13,
        addr: "0.0.0.0",
        port: 80,
      }),
    ).toBe("bind 0.0.0.0:80");
  });

  it("reach the client with the error for initialize when the server exits, and stderr", async () => {
    const run = relayFor(
      "process.exit(126)",
      (status) => `under L3 the server's start was denied (status ${status})`,
      60_000,
    );
    expect(await run.status).toBe(126);
    expect(run.lines).toEqual([
      {
        jsonrpc: "2.0",
        id: 1,
        error: {
          code: -32000,
          message:
            'Connection closed: the MCP server exited with status 126 before answering "initialize": under L3 the server\'s start was denied (status 126)',
        },
      },
    ]);
    expect(run.logs).toContain("under L3 the server's start was denied (status 126)");
  });

  it("reach the client as a log message when the server does not answer in time", async () => {
    const run = relayFor(
      "setInterval(() => {}, 1000)",
      (status) =>
        status === undefined
          ? "the server has not answered initialize; under L3 its start was denied: open /etc/hosts"
          : undefined,
      200,
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(run.lines).toContainEqual({
      jsonrpc: "2.0",
      method: "notifications/message",
      params: {
        level: "error",
        logger: "mcpguard",
        data: "mcpguard: the server has not answered initialize; under L3 its start was denied: open /etc/hosts",
      },
    });
    expect(run.logs).toEqual([
      "the server has not answered initialize; under L3 its start was denied: open /etc/hosts",
    ]);
    run.input.end();
    await run.status;
  });
});
