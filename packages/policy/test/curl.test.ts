/**
 * curl's command line as curl reads it (src/curl.ts): the host of each URL as the real curl tries
 * it, and L1's verdicts on the words a WHATWG URL parser and a file check read otherwise.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UNCONFINED } from "@mcpguard/readers";
import { afterAll, describe, expect, it } from "vitest";
import { curlHost, readCurl, WGET_PLAIN } from "../src/curl.ts";
import { decide } from "../src/decide.ts";
import { resolvePolicy } from "../src/load.ts";
import { Policy } from "../src/schema.ts";

const curl = spawnSync("curl", ["--version"], { encoding: "utf8" }).status === 0;
if (!curl) console.warn("curl differential test skipped: no curl on PATH");

/**
 * URLs of every shape that moves a host: with and without a scheme, userinfo (a backslash before
 * the `@` included), IP and IPv6 hosts, ports, and `?@`, `#@`, `\` after the host. A sample of
 * 1,800 combinations (all of which agreed with curl when this was written), so the test stays short.
 */
function corpus(step = 13): string[] {
  const urls: string[] = [];
  for (const scheme of ["", "http://", "https://", "ftp://", "HTTP://"])
    for (const user of ["", "u@", "u:p@", "a.example\\@", "x@y@"])
      for (const host of ["h.example", "127.0.0.1", "[::1]", "ftp.example"])
        for (const port of ["", ":9", ":8080"])
          for (const tail of ["", "/", "/p?q#f", "?@e.example", "#@e.example", "\\e.example/"])
            urls.push(`${scheme}${user}${host}${port}${tail}`);
  return urls.filter((_, i) => i % step === 0);
}

/**
 * Where the real `program` (run with `args` before each URL) tries to connect for each of `urls`,
 * as `tried` finds it in its stderr (host, and port when it says one), against curlHost: the
 * URLs on which they differ. A URL the program refuses connects nowhere, and is passed over.
 */
function differences(
  program: string,
  args: string[],
  tried: RegExp,
  urls: readonly string[],
): { compared: number; differ: string[] } {
  // No proxy from the environment: the host the URL names is the one tried.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/proxy/i.test(k)));
  const differ: string[] = [];
  let compared = 0;
  for (const url of urls) {
    const run = spawnSync(program, [...args, url], { encoding: "utf8", env });
    const m = tried.exec(run.stderr);
    if (!m) continue;
    compared++;
    const ours = curlHost(url);
    const host = (m[1] ?? m[2] ?? "").toLowerCase();
    const agrees =
      typeof ours !== "string" && ours.host === host && (m[3] === undefined || ours.port === m[3]);
    if (!agrees) differ.push(`${url}: ${program} ${host}:${m[3] ?? "?"}, ours ${JSON.stringify(ours)}`);
  }
  return { compared, differ };
}

describe.skipIf(!curl)("curl's hosts, against the real curl", () => {
  it("names the host (and port) curl tries for every URL curl accepts", () => {
    // -q: no .curlrc.
    const tried = /Could not resolve host: (\S+)|Trying \[?([^\]\s]+?)\]?:(\d+)\.\.\./;
    const urls = corpus();
    const { compared, differ } = differences("curl", ["-q", "-sv", "--max-time", "5"], tried, urls);
    expect(differ).toEqual([]);
    // Most URLs reach curl's resolver: a change of its messages must not leave nothing compared.
    expect(compared).toBeGreaterThan(urls.length / 2);
  });
});

const wget = spawnSync("wget", ["--version"], { encoding: "utf8" }).status === 0;
if (!wget) console.warn("wget differential test skipped: no wget on PATH");

describe.skipIf(!wget)("wget's hosts for the one URL form L1 judges, against the real wget", () => {
  it("names the host (and port) wget tries for every plain scheme://host URL", () => {
    const urls = corpus(1)
      .filter((u) => WGET_PLAIN.test(u))
      .filter((_, i) => i % 3 === 0);
    expect(urls.length).toBeGreaterThan(20);
    const tried = /Resolving ([^ ]+) \(|Connecting to \[?([^\]\s]+?)\]?:(\d+)\.\.\./;
    const args = ["--no-config", "-O", "/dev/null", "-t", "1", "-T", "2"];
    const { compared, differ } = differences("wget", args, tried, urls);
    expect(differ).toEqual([]);
    expect(compared).toBeGreaterThan(urls.length / 2);
  });
});

describe("L1 on curl's command line", () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "mcpguard-curl-")));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const policy = resolvePolicy(
    Policy.parse({
      version: 1,
      server: "fetcher",
      tools: {
        fetch: {
          args: { command: "command" },
          exec: ["curl", "wget"],
          network: ["api.example:443", "api.example:80"],
          read: ["{{cwd}}/**"],
          write: ["{{cwd}}/**"],
        },
      },
    }),
    undefined,
    { cwd: join(root, "work"), home: join(root, "home"), tmp: join(root, "tmp") },
  );
  const run = (command: string) => decide(policy, "fetch", { command }, undefined, { confined: UNCONFINED });

  it.each([
    "curl -sS https://api.example/v1/items -o items.json",
    "curl -H 'Accept: application/json' -H 'X-Id: 7' https://api.example/v1",
    "curl api.example/v1",
    "curl -d @body.json -X POST https://api.example/v1",
    "curl --url https://api.example/ --max-time 5",
    "curl -g 'https://api.example/q?[x]=1'",
    "curl 'https://user:pw@api.example/'",
    "curl -e https://www.example.org/ -A 'agent/1.0' https://api.example./",
    "curl https://api.example:0443/",
    "curl --HEAD https://api.example/",
  ])("allows %s", (command) => {
    expect(run(command)).toEqual({ allow: true });
  });

  it.each([
    // A bare host is a URL to curl, not a file.
    ["curl evil.example", "evil.example:80"],
    // curl reads the authority to the last @: a backslash does not end it.
    ["curl 'http://api.example\\@evil.example/'", "evil.example:80"],
    ["curl -x evil.example:8080 https://api.example/", "evil.example:8080"],
    ["curl --preproxy socks5://evil.example https://api.example/", "evil.example:1080"],
    ["curl -x https://evil.example https://api.example/", "evil.example:443"],
    ["curl --resolve api.example:443:203.0.113.7 https://api.example/", "203.0.113.7:443"],
    ["curl --connect-to api.example:443:evil.example:443 https://api.example/", "evil.example:443"],
    ["curl --url evil.example", "evil.example:80"],
    ["https_proxy=http://evil.example:3128 curl https://api.example/", "evil.example:3128"],
    ["export ALL_PROXY=evil.example; curl https://api.example/", "evil.example:1080"],
    // A review's: a flag taken for an abbreviation, DoH, upper case, a scheme's own proxy variable.
    ["curl --head evil.example", "evil.example:80"],
    ["curl --netrc evil.example", "evil.example:80"],
    [
      "curl --doh-url 'https://api.example\\@evil.example/dns-query' https://api.example/",
      "evil.example:443",
    ],
    ["curl --PROXY evil.example https://api.example/", "evil.example:1080"],
    ["curl --proxy1.0 api.example http://api.example/", "api.example:1080"],
    ["curl -x 'api.example/:80' http://api.example/", "api.example:1080"],
    ["curl --proto-default ftp api.example", "api.example:21"],
    ["gopher_proxy=evil.example:1 curl gopher://api.example:80/", "evil.example:1"],
  ])("refuses %s", (command, value) => {
    expect(run(command)).toMatchObject({
      allow: false,
      rule: "l1.network",
      need: { capability: "network", value },
    });
  });

  it.each([
    "curl --alt-svc alt.txt https://api.example/",
    "curl --abstract-unix-socket foo http://api.example/",
    "curl --unix-socket ./docker.sock http://api.example/",
    "curl --CONFIG api.example https://api.example/",
    "CURL_HOME=. curl https://api.example/",
  ])("refuses what moves curl's connection at run time: %s", (command) => {
    expect(run(command)).toMatchObject({ allow: false });
  });

  it("reads wget's URLs in the plain form only, and refuses what moves its fetches", () => {
    expect(run("wget -q -O items.json https://api.example/v1/items")).toEqual({ allow: true });
    expect(run("wget --header='Accept: x' http://api.example/")).toEqual({ allow: true });
    for (const command of [
      "wget evil.example",
      "wget 'http://api.example\\@evil.example/'",
      "wget https://evil.example/",
      "wget -e use_proxy=yes -e http_proxy=evil.example:1 http://api.example/",
      "wget -i urls.txt",
      "wget -r -H https://api.example/",
      "WGETRC=./rc wget https://api.example/",
    ])
      expect(run(command), command).toMatchObject({ allow: false });
  });

  it("tells a file an option names from a URL of the line spelled alike (`-o x x`)", () => {
    const read = readCurl(["-o", "api.example", "api.example"].map((text) => ({ text })));
    expect(read).toMatchObject({ ok: true, urls: new Set([2]), values: new Set([1]) });
  });

  it("refuses a URL curl expands as a glob, and one only the run knows", () => {
    expect(run("curl 'https://{api,evil}.example/'")).toMatchObject({ allow: false, rule: "l1.network" });
    expect(run('read -r u < url.txt; curl "$u"')).toMatchObject({ allow: false, rule: "l1.command.dynamic" });
  });
});
