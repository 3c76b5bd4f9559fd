/**
 * Where curl connects, read as curl reads its command line (curl 7.88's URL parser and options):
 * every word that is neither an option nor an option's value is a URL, a bare host included
 * (`curl evil.example` fetches http://evil.example/); the host is what follows the scheme's `//`
 * up to the first `/`, `?` or `#`, after the last `@` (a backslash is no separator to curl:
 * `http://a.example\@b.example/` goes to b.example, where a WHATWG parser reads a.example); `{a,b}`
 * and `[1-3]` are globs curl expands unless `-g`; a proxy (`-x`, `--preproxy`, `--socks5`, ...) is
 * where it connects, and `--resolve`/`--connect-to` send a host's connection to another address.
 * curl.test.ts holds the parser to the host and port the real curl tries, over a corpus.
 */
import { type Field, programWords } from "@mcpguard/readers";

/** The ports curl uses for a scheme without one. */
const DEFAULT_PORTS: Readonly<Record<string, string>> = {
  http: "80",
  https: "443",
  ftp: "21",
  ftps: "990",
  ws: "80",
  wss: "443",
  gopher: "70",
  gophers: "70",
  dict: "2628",
  ldap: "389",
  ldaps: "636",
  imap: "143",
  imaps: "993",
  pop3: "110",
  pop3s: "995",
  smtp: "25",
  smtps: "465",
  rtsp: "554",
  scp: "22",
  sftp: "22",
  smb: "445",
  smbs: "445",
  telnet: "23",
  tftp: "69",
  mqtt: "1883",
};

/** The schemes curl guesses from a bare host's first label (`ftp.example` is ftp://). */
const GUESSED = ["ftp", "dict", "ldap", "imap", "smtp", "pop3"];

/** Options whose value is a proxy curl connects to first. */
const PROXIES = new Set([
  "-x",
  "--proxy",
  "--proxy1.0",
  "--preproxy",
  "--socks4",
  "--socks4a",
  "--socks5",
  "--socks5-hostname",
]);

/**
 * Options that make curl connect where no URL of the line says: a settings file (its lines are
 * options), an alt-svc cache (its entries move a host's connection elsewhere), a unix socket
 * (no network grant names one). Refused: their effect is read from files or sockets at run time.
 */
const ELSEWHERE: Readonly<Record<string, string>> = {
  "-K": "reads more options from a file",
  "--config": "reads more options from a file",
  "--alt-svc": "reads an alt-svc cache, whose entries move a host's connection elsewhere",
  "--unix-socket": "connects through a unix socket, which no network grant names",
  "--abstract-unix-socket": "connects through a unix socket, which no network grant names",
};

interface CurlDestination {
  host: string;
  port: string;
  /** What the command names it as: "the URL x", "the proxy y", ... */
  what: string;
}

export type CurlReading =
  | {
      ok: true;
      destinations: CurlDestination[];
      /** Where the URLs and the options' values stand among the words read (no file is a URL). */
      urls: Set<number>;
      values: Set<number>;
    }
  | { ok: false; reason: string; unknown: boolean };

/**
 * The host and port curl connects to for `url` (scheme `defaultScheme` when it names none), or a
 * reason it cannot be told.
 */
export function curlHost(url: string, defaultScheme = "http"): { host: string; port: string } | string {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url);
  let rest = m ? url.slice(m[0].length) : url;
  let scheme = m ? (m[1] as string).toLowerCase() : defaultScheme;
  if (!m) {
    const label = /^([a-z0-9]+)\./i.exec(rest)?.[1]?.toLowerCase();
    if (label && GUESSED.includes(label)) scheme = label;
  }
  const end = rest.search(/[/?#]/);
  rest = end === -1 ? rest : rest.slice(0, end);
  const at = rest.lastIndexOf("@");
  const hostPort = at === -1 ? rest : rest.slice(at + 1);
  let host: string;
  let port: string | undefined;
  if (hostPort.startsWith("[")) {
    const close = hostPort.indexOf("]");
    if (close === -1) return `${url} has an unclosed [ in its host`;
    host = hostPort.slice(1, close);
    const after = hostPort.slice(close + 1);
    if (after !== "" && !/^:\d*$/.test(after)) return `${url} has text after its IPv6 address`;
    port = after.slice(1) || undefined;
  } else {
    const colon = hostPort.lastIndexOf(":");
    host = colon === -1 ? hostPort : hostPort.slice(0, colon);
    port = colon === -1 ? undefined : hostPort.slice(colon + 1) || undefined;
  }
  // A trailing dot names the same host; a port is a number (`0443` is 443).
  host = host.replace(/\.$/, "");
  if (host === "") return `${url} names no host`;
  if (port !== undefined && !/^\d{1,5}$/.test(port)) return `${url} has a port that is not a number`;
  const fallback = DEFAULT_PORTS[scheme];
  return { host: host.toLowerCase(), port: port !== undefined ? String(Number(port)) : (fallback ?? "") };
}

/** A proxy's host and port: curl's default proxy port is 1080 (443 for an https:// proxy). */
export function proxyDestination(value: string): { host: string; port: string } | string {
  const to = curlHost(value);
  if (typeof to === "string") return to;
  // A port is the authority's own: what follows a `/` is not one.
  const authority = value.replace(/^[a-z0-9+.-]*:\/\//i, "").split(/[/?#]/)[0] ?? "";
  if (/:\d+$/.test(authority.replace(/^.*@/, ""))) return to;
  return { host: to.host, port: /^https:\/\//i.test(value) ? "443" : "1080" };
}

/** Whether curl expands `text` as a glob: braces, or brackets that are not an IPv6 address. */
function globbed(text: string): boolean {
  if (/[{}]/.test(text)) return true;
  const withoutV6 = text.replace(/\[[0-9A-Fa-f:.%]+\]/g, "");
  return /[[\]]/.test(withoutV6);
}

/** `host:port:address` (--resolve) or `host:port:host2:port2` (--connect-to): where it really goes. */
function redirected(option: string, value: string): { host: string; port: string } | string {
  const parts = value.replace(/^\+/, "").split(":");
  if (option === "--resolve") {
    const address = parts.slice(2).join(":").split(",")[0] ?? "";
    const port = parts[1] ?? "";
    return address
      ? { host: address.replace(/^\[|\]$/g, "").toLowerCase(), port }
      : `${value} names no address`;
  }
  // --connect-to HOST1:PORT1:HOST2:PORT2, HOST2 possibly an [IPv6].
  const m = /^[^:]*:[^:]*:(\[[^\]]*\]|[^:]*):(\d*)$/.exec(value);
  if (!m) return `${value} is not HOST1:PORT1:HOST2:PORT2`;
  const host = (m[1] as string).replace(/^\[|\]$/g, "").toLowerCase();
  return host ? { host, port: m[2] as string } : `${value} leaves the host as asked`;
}

/** Every destination curl's command line names, or why one cannot be told before it runs. */
export function readCurl(given: readonly Field[]): CurlReading {
  // curl matches a long option's name whatever its letter case (`--PROXY`).
  const args = given.map((f) =>
    !f.unknown && /^--[^=]/.test(f.text)
      ? { ...f, text: f.text.replace(/^--[^=]+/, (n) => n.toLowerCase()) }
      : f,
  );
  const words = programWords("curl", args);
  if (!words) return { ok: false, reason: "curl's options are not known", unknown: false };
  const destinations: CurlDestination[] = [];
  const urls: Field[] = [...words.operands];
  const globoff = words.options.some((o) => o.option === "-g" || o.option === "--globoff");
  const protoDefault = words.options.find((o) => o.option === "--proto-default")?.value;
  if (protoDefault?.unknown)
    return { ok: false, reason: "its --proto-default is known only at run time", unknown: true };
  const scheme = protoDefault?.text.toLowerCase() ?? "http";
  for (const { option, value } of words.options) {
    const elsewhere = ELSEWHERE[option];
    if (elsewhere)
      return {
        ok: false,
        reason: `${option} ${elsewhere}`,
        unknown: option === "-K" || option === "--config",
      };
    if (!value) continue;
    if (option === "--url") urls.push(value);
    if (option === "--doh-url") {
      if (value.unknown)
        return { ok: false, reason: "its --doh-url is known only at run time", unknown: true };
      const doh = curlHost(value.text);
      if (typeof doh === "string") return { ok: false, reason: doh, unknown: false };
      destinations.push({ ...doh, what: "the DNS-over-HTTPS server --doh-url names" });
      continue;
    }
    if (!PROXIES.has(option) && option !== "--resolve" && option !== "--connect-to") continue;
    if (value.unknown)
      return { ok: false, reason: `the value of ${option} is known only at run time`, unknown: true };
    const to = PROXIES.has(option) ? proxyDestination(value.text) : redirected(option, value.text);
    if (typeof to === "string") return { ok: false, reason: to, unknown: false };
    if (to.host === "" && option === "--connect-to") continue;
    destinations.push({ ...to, what: `the ${PROXIES.has(option) ? "proxy" : "address"} ${option} names` });
  }
  for (const url of urls) {
    if (url.unknown)
      return { ok: false, reason: "a URL curl fetches is known only at run time", unknown: true };
    if (!globoff && globbed(url.text))
      return {
        ok: false,
        reason: `curl expands ${url.text} as a glob ({a,b}, [1-3]); give -g or each URL`,
        unknown: false,
      };
    const to = curlHost(url.text, scheme);
    if (typeof to === "string") return { ok: false, reason: to, unknown: false };
    destinations.push({ ...to, what: `the URL ${url.text}` });
  }
  // Every option value (a referer, a header, data) is no destination of curl's: judged as files only.
  const values = words.options.flatMap((o) => (o.value ? [o.value] : []));
  return { ok: true, destinations, urls: positions(args, urls), values: positions(args, values) };
}

/**
 * Where `fields` stand in `args`, by identity (the same text may be a value and a URL: `-o x x`).
 * A value attached to its option (`-ofile`) is no word of its own, and stands nowhere.
 */
function positions(args: readonly Field[], fields: readonly Field[]): Set<number> {
  const at = new Map(args.map((f, i) => [f, i]));
  return new Set(fields.flatMap((f) => (at.has(f) ? [at.get(f) as number] : [])));
}

/** wget's options that fetch where no URL of the line says, or read settings or URLs that may. */
const WGET_ELSEWHERE: Readonly<Record<string, { why: string; unknown: boolean }>> = {
  "-e": { why: "runs a .wgetrc command (a proxy or a URL list among them)", unknown: true },
  "--execute": { why: "runs a .wgetrc command (a proxy or a URL list among them)", unknown: true },
  "--config": { why: "reads its settings from a file", unknown: true },
  "-i": { why: "reads the URLs it fetches from a file", unknown: true },
  "--input-file": { why: "reads the URLs it fetches from a file", unknown: true },
  "-H": { why: "follows links to any host", unknown: false },
  "--span-hosts": { why: "follows links to any host", unknown: false },
};

/**
 * A URL in the one form whose host wget (1.21's own parser) and curl read alike, held to both in
 * curl.test.ts: a scheme wget fetches, `//`, a host, a port, and a path that starts with `/` and
 * holds no `@` or backslash (for ftp:// wget reads a `?` right after the host as part of it).
 */
export const WGET_PLAIN =
  /^(?:https?|ftps?):\/\/(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?(?:\/[^@\\]*)?$/i;

/**
 * Every destination of wget's command line. wget reads a URL by rules of its own (a word without
 * a scheme may be FTP, `u:p@host` may go to `u`): only the plain form both parsers agree on is
 * judged; another is refused, with the form to give.
 */
export function readWget(args: readonly Field[]): CurlReading {
  const words = programWords("wget", args);
  if (!words) return { ok: false, reason: "wget's options are not known", unknown: false };
  for (const { option } of words.options) {
    const elsewhere = WGET_ELSEWHERE[option];
    if (elsewhere) return { ok: false, reason: `${option} ${elsewhere.why}`, unknown: elsewhere.unknown };
  }
  const destinations: CurlDestination[] = [];
  for (const url of words.operands) {
    if (url.unknown)
      return { ok: false, reason: "a URL wget fetches is known only at run time", unknown: true };
    if (!WGET_PLAIN.test(url.text))
      return {
        ok: false,
        reason: `wget reads ${url.text} by rules of its own; give it as scheme://host[:port]/path`,
        unknown: false,
      };
    const to = curlHost(url.text);
    if (typeof to === "string") return { ok: false, reason: to, unknown: false };
    destinations.push({ ...to, what: `the URL ${url.text}` });
  }
  const values = words.options.flatMap((o) => (o.value ? [o.value] : []));
  return { ok: true, destinations, urls: positions(args, words.operands), values: positions(args, values) };
}
