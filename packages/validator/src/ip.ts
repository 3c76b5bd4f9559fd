/**
 * Internal destinations for server-side request forgery: loopback, private, link-local (cloud
 * metadata), carrier-grade NAT, unspecified, multicast and reserved addresses, IPv6 forms that
 * embed an IPv4 address, and names that mean this host. Hostnames arrive as the WHATWG URL
 * parser serialises them, which has already turned `2130706433`, `0x7f.1` and `017700000001`
 * into `127.0.0.1` and IPv6 into its compressed hexadecimal form.
 */

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const V6_DOTTED_TAIL = /:(\d{1,3}(?:\.\d{1,3}){3})$/;
const V6_GROUP = /^[0-9a-f]{1,4}$/i;
const TRAILING_DOT = /\.$/;
const ZONE = /%.*$/;
const LOCAL_NAMES = new Set([
  "localhost",
  "localhost.localdomain",
  "ip6-localhost",
  "ip6-loopback",
  "metadata",
  "metadata.google.internal",
]);

/** [network, prefix length, what it is] */
const V4_BLOCKS: readonly [number, number, string][] = [
  [0x00000000, 8, "the unspecified network"],
  [0x7f000000, 8, "a loopback address"],
  [0x0a000000, 8, "a private network address"],
  [0xac100000, 12, "a private network address"],
  [0xc0a80000, 16, "a private network address"],
  [0xa9fe0000, 16, "a link-local address (cloud metadata lives there)"],
  [0x64400000, 10, "a carrier-grade NAT address"],
  [0xc0000000, 24, "an IETF protocol address"],
  [0xc6120000, 15, "a benchmarking network address"],
  [0xe0000000, 4, "a multicast address"],
  [0xf0000000, 4, "a reserved address"],
];

function v4Internal(address: number): string | undefined {
  for (const [network, bits, what] of V4_BLOCKS) {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if ((address & mask) >>> 0 === network) return what;
  }
  return undefined;
}

function parseV4(text: string): number | undefined {
  const m = IPV4.exec(text);
  if (!m) return undefined;
  const octets = m.slice(1).map(Number);
  if (octets.some((o) => o > 255)) return undefined;
  return octets.reduce((acc, o) => acc * 256 + o, 0);
}

/** Eight 16-bit groups, or undefined when the text is not an IPv6 address. */
function parseV6(text: string): number[] | undefined {
  let body = text;
  const tail: number[] = [];
  const dotted = V6_DOTTED_TAIL.exec(body);
  if (dotted) {
    const v4 = parseV4(dotted[1] as string);
    if (v4 === undefined) return undefined;
    tail.push(v4 >>> 16, v4 & 0xffff);
    body = `${body.slice(0, dotted.index)}:`;
    if (body.endsWith("::")) body = body.slice(0, -1);
  }
  const halves = body.split("::");
  if (halves.length > 2) return undefined;
  const groups = (part: string | undefined) => (part ? part.split(":").filter((g) => g !== "") : []);
  const head = groups(halves[0]);
  const rest = groups(halves[1]);
  if (![...head, ...rest].every((g) => V6_GROUP.test(g))) return undefined;
  const parsed = (list: string[]) => list.map((g) => Number.parseInt(g, 16));
  const known = head.length + rest.length + tail.length;
  if (halves.length === 1 && known !== 8) return undefined;
  if (known > 8) return undefined;
  return [...parsed(head), ...new Array<number>(8 - known).fill(0), ...parsed(rest), ...tail];
}

function v6Internal(g: number[]): string | undefined {
  const [g0 = 0, g1 = 0, g2 = 0, , , g5 = 0, g6 = 0, g7 = 0] = g;
  const embedded = () => v4Internal(((g6 << 16) | g7) >>> 0);
  if (g.slice(0, 5).every((x) => x === 0)) {
    if (g5 === 0xffff) return "an IPv4-mapped IPv6 address";
    if (g5 === 0) {
      if (g6 === 0 && g7 === 0) return "the unspecified address";
      if (g6 === 0 && g7 === 1) return "a loopback address";
      return "an IPv4-compatible IPv6 address";
    }
  }
  if (g0 === 0x64 && g1 === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return embedded();
  if (g0 === 0x2002) return v4Internal(((g1 << 16) | g2) >>> 0);
  if ((g0 & 0xfe00) === 0xfc00) return "a unique local IPv6 address";
  if ((g0 & 0xffc0) === 0xfe80 || (g0 & 0xffc0) === 0xfec0) return "a link-local IPv6 address";
  if ((g0 & 0xff00) === 0xff00) return "a multicast address";
  return undefined;
}

/** What makes the host internal, or undefined for a public host. */
export function internalHost(hostname: string): string | undefined {
  const host = hostname.toLowerCase().replace(TRAILING_DOT, "");
  if (LOCAL_NAMES.has(host) || host.endsWith(".localhost")) return "this host";
  if (host.startsWith("[") && host.endsWith("]")) {
    const groups = parseV6(host.slice(1, -1).replace(ZONE, ""));
    return groups ? v6Internal(groups) : undefined;
  }
  const v4 = parseV4(host);
  return v4 === undefined ? undefined : v4Internal(v4);
}
