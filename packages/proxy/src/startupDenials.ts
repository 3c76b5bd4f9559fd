/**
 * What the kernel refused while an L3 server started: a server that exits with 126 or 127, or
 * never answers `initialize`, usually tried something its grant does not hold (exec a launcher,
 * read /etc/resolv.conf, connect to a registry). The refusals seen before its first answer are
 * summed up in one line, for the proxy's stderr and the client.
 */
import type { KernelEvent } from "@mcpguard/kernel";

/** Refusals named in the line, and kept to choose them from. */
const MAX_SHOWN = 6;
const MAX_KEPT = 64;

/** Locale data and character-set modules: read at every C library or Python start, optional. */
const I18N_PROBE = / \/usr\/(?:share|lib)\/(?:locale|i18n)\/| \/usr\/lib\/[^/ ]+\/gconv\//;
/** Reads of /proc and /sys: every Node.js and Python start makes some, and goes on without them. */
const RUNTIME_PROBE = /^open \/(?:proc|sys)\//;
/** SIGHUP, SIGINT, SIGKILL, SIGTERM: what the proxy sends or passes on when it stops a server. */
const PROXY_SIGNALS = new Set([1, 2, 9, 15]);

const OPEN = new Set(["open", "openat", "openat2", "creat"]);
const EXEC = new Set(["execve", "execveat"]);
const NET = new Set(["connect", "sendto", "sendmsg"]);
const MOVE = new Set(["rename", "renameat", "renameat2", "link", "linkat"]);

/**
 * One refusal as a few words: "exec /usr/bin/npx", "open /etc/resolv.conf", "connect 1.2.3.4:443",
 * "sendto 10.0.0.1:9", "connect unix socket /run/docker.sock".
 */
export function describeDenial(event: KernelEvent): string | undefined {
  const path = typeof event.path === "string" ? event.path : undefined;
  const where = typeof event.addr === "string" ? `${event.addr}:${event.port}` : undefined;
  if (event.type === "denied") {
    const call = String(event.syscall);
    if (EXEC.has(call)) return path && `exec ${path}`;
    if (OPEN.has(call)) return path && `open ${path}`;
    if (call === "bind" && where) return `bind ${where}`;
    if (NET.has(call)) return where ? `connect ${where}` : "an abstract unix socket";
    if (MOVE.has(call)) return path && `${call.replace(/at2?$/, "")} ${path} to ${event.to ?? "?"}`;
    return path && `${call.replace(/at$/, "")} ${path}`;
  }
  if (event.type === "dns-refused") return describeDns(event);
  if (event.type === "deny") {
    const op = String(event.op);
    // A datagram refused is a sendto (sendmsg4/6, socket_sendmsg), not a connection.
    if (where) return `${/^bind/.test(op) ? "bind" : /sendmsg/.test(op) ? "sendto" : "connect"} ${where}`;
    if (/_unix$/.test(op) && path) return `${/sendmsg/.test(op) ? "sendto" : "connect"} unix socket ${path}`;
    if (path) return `${String(event.op).replace(/^(file_|path_|inode_)/, "")} ${path}`;
    return `${String(event.op)}`;
  }
  return undefined;
}

/** DNS record types by number, as people name them. */
const QTYPES: Readonly<Record<number, string>> = {
  1: "A",
  2: "NS",
  5: "CNAME",
  6: "SOA",
  12: "PTR",
  15: "MX",
  16: "TXT",
  28: "AAAA",
  33: "SRV",
  64: "SVCB",
  65: "HTTPS",
  255: "ANY",
};

/** A refusal of the proxy's resolver (packages/kernel/src/resolver.ts) as a few words. */
function describeDns(event: KernelEvent): string {
  if (typeof event.name !== "string") {
    const bytes = typeof event.bytes === "number" ? ` (${event.bytes} bytes)` : "";
    return `a payload to port 53 over ${String(event.transport ?? "udp")} that is no DNS query${bytes}`;
  }
  const qtype = typeof event.qtype === "number" ? ` ${QTYPES[event.qtype] ?? `type ${event.qtype}`}` : "";
  return `DNS${qtype} query for ${event.name}: ${String(event.reason ?? "refused")}`;
}

export class StartupDenials {
  readonly #seen: string[] = [];
  #more = 0;

  /** A kernel event of the server: kept when it is a refusal (the first few, each once). */
  note(event: KernelEvent): void {
    const text = describeDenial(event);
    if (!text || this.#seen.includes(text)) return;
    if (this.#seen.length < MAX_KEPT) this.#seen.push(text);
    else this.#more++;
  }

  /**
   * The refusals seen, those most likely to explain a failed start first: an exec or a connection,
   * then files, and last what every runtime probes and does without (/proc, /sys).
   */
  #ranked(): string[] {
    const rank = (text: string) =>
      /^(exec|connect|sendto|bind|DNS) /.test(text) ? 0 : / \/(proc|sys)(\/|$)/.test(text) ? 2 : 1;
    return [...this.#seen].sort((a, b) => rank(a) - rank(b));
  }

  /**
   * The line for a server that exited with `status` (or has not answered yet), or undefined when no
   * refusal can explain it: a server that exited 0 or was ended by a signal the proxy sends when it
   * stops one (SIGTERM, SIGKILL, SIGINT, SIGHUP; an abort or SIGSYS still counts), or whose only refusals are
   * of the locale and character-set files every runtime probes and does without.
   */
  summary(status: number | undefined): string | undefined {
    if (status === 0 || (status !== undefined && PROXY_SIGNALS.has(status - 128))) return undefined;
    const state =
      status === undefined
        ? "the server has not answered initialize; under L3 its start was denied"
        : `under L3 the server's start was denied`;
    if (this.#seen.some((text) => !I18N_PROBE.test(text))) {
      const ranked = this.#ranked().filter((text) => !I18N_PROBE.test(text));
      const hidden = this.#more + Math.max(0, ranked.length - MAX_SHOWN);
      const more = hidden ? ` and ${hidden} more (see the audit log)` : "";
      const shown = `${ranked.slice(0, MAX_SHOWN).join(", ")}${more}`;
      // Node.js and Python read /proc and /sys at every start and go on without them: a server that
      // failed with only those refused most likely failed for a reason of its own (its own output).
      if (ranked.every((text) => RUNTIME_PROBE.test(text)) && status !== undefined)
        return `the server exited (status ${status}); under L3 the kernel refused only what runtimes read at start and usually do without (${shown}), so its own output may say why`;
      return `${state}: ${shown}`;
    }
    if (status === 126 || status === 127) {
      return `under L3 the server could not be started (status ${status}); the kernel reported no refusal, so see the launcher's line above`;
    }
    return undefined;
  }
}
