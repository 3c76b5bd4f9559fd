/**
 * URL arguments, and URLs a command names: only http and https (and data:, which names no
 * destination), no user information, and no
 * internal destination (server-side request forgery), judged on the host the WHATWG parser
 * resolves, so integer, octal, hexadecimal and full-width spellings of an address count.
 */
import type { Finding, Scope } from "./context.js";
import { internalHost } from "./ip.js";

const WEB = new Set(["http:", "https:"]);
/** Schemes that turn a fetch into a local file read or a raw protocol. */
const LOCAL_SCHEMES = new Set([
  "file:",
  "gopher:",
  "dict:",
  "ldap:",
  "ldaps:",
  "tftp:",
  "jar:",
  "netdoc:",
  "php:",
  "data:",
]);

function parse(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    // Not a URL: the caller reads the text otherwise.
    return undefined;
  }
}

/** Credentials and internal destinations: the checks every URL gets, whatever its scheme. */
function checkDestination(url: URL, scope: Scope): Finding | undefined {
  if (scope.on("l2.url.credentials") && (url.username || url.password)) {
    return scope.finding("l2.url.credentials", "carries user credentials inside a URL");
  }
  const internal = url.hostname ? internalHost(url.hostname) : undefined;
  if (scope.on("l2.url.ssrf") && internal) {
    return scope.finding("l2.url.ssrf", `points at ${url.hostname}, ${internal}`);
  }
  return undefined;
}

export function checkUrl(value: string, scope: Scope): Finding | undefined {
  const url = parse(value.trim());
  // A data: URL carries its content in itself: no destination, no file.
  if (url?.protocol === "data:") return undefined;
  if (!url || !WEB.has(url.protocol)) {
    if (!scope.on("l2.url.scheme")) return undefined;
    const why = url
      ? `uses the ${url.protocol.slice(0, -1)} scheme where only http and https are allowed`
      : "is not an absolute http or https URL";
    return scope.finding("l2.url.scheme", why);
  }
  return checkDestination(url, scope);
}

/**
 * A URL inside a command: a scheme that reads local files or speaks a raw protocol is refused;
 * any other is held to the destination checks. `bare` marks an operand of an HTTP client given
 * without a scheme (`curl 127.0.0.1:8080`), read as http.
 */
export function checkCommandUrl(word: string, bare: boolean, scope: Scope): Finding | undefined {
  const url = parse(bare ? `http://${word}` : word);
  if (!url) return undefined;
  if (scope.on("l2.url.scheme") && LOCAL_SCHEMES.has(url.protocol)) {
    return scope.finding(
      "l2.url.scheme",
      `fetches a ${url.protocol.slice(0, -1)} URL, which reads local files or speaks a raw protocol`,
    );
  }
  return checkDestination(url, scope);
}
