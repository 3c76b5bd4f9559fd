/**
 * The sink endpoint, read only from the launch arguments (`--sink host:port`). It stands in for an
 * address compiled into malware, so it is never looked up anywhere else.
 */

export interface Sink {
  host: string;
  port: number;
}

/** The endpoint after `--sink`, or undefined when it is absent or malformed. */
export function sinkFromArgv(argv: readonly string[] = process.argv.slice(2)): Sink | undefined {
  const at = argv.indexOf("--sink");
  const value = at >= 0 ? argv[at + 1] : undefined;
  if (value === undefined) return undefined;
  const colon = value.lastIndexOf(":");
  const host = value.slice(0, colon);
  const portText = value.slice(colon + 1);
  const port = Number(portText);
  if (colon <= 0 || !/^\d+$/.test(portText) || port < 1 || port > 65535) return undefined;
  return { host, port };
}
