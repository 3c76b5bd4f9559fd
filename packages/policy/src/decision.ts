/**
 * What an L1 judgement says (`Decision`, with the grant a refusal lacked, `Need`) and how a
 * destination is written and matched: shared by the call judge (decide.ts) and the command judge
 * (command.ts), which calls back into neither.
 */

/**
 * The grant a refusal lacked, where one grant of the tool's would have allowed the call: a file to
 * read or write (canonical, absolute), a program to run, a destination (`host:port`), a class of
 * SQL statements. The audit log keeps it on the decision, for `mcpguard policy learn`.
 */
export interface Need {
  capability: "read" | "write" | "exec" | "network" | "sql";
  value: string;
}

export type Decision = { allow: true } | { allow: false; rule: string; reason: string; need?: Need };

export const ALLOW: Decision = { allow: true };

/** Whether `host:port` is one of the destinations (`host`, `host:port`, `*.domain`, `[v6]:port`). */
export function destinationAllowed(host: string, port: string, destinations: readonly string[]): boolean {
  // A name's absolute form (`api.example.com.`) is the same name: DNS asks for it either way.
  const h = host
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/([^.])\.$/, "$1");
  return destinations.some((d) => {
    const m = /^\[?([^\]]*?)\]?(?::(\d+))?$/.exec(d.toLowerCase());
    if (!m) return false;
    const [, dHost = "", dPort] = m;
    if (dPort && dPort !== port) return false;
    if (dHost.startsWith("*.")) return h.endsWith(dHost.slice(1)) && h.length > dHost.length - 1;
    return dHost === h;
  });
}

/** `host:port` as a policy's network list writes it (`[v6]:port` for an IPv6 address). */
export function destinationOf(host: string, port: string): string {
  const name = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  return port ? `${name}:${port}` : name;
}
