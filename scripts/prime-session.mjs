/**
 * The build's priming session (packages/proxy/bundle.mjs, servers/ts/build.mjs): start a prime.cjs
 * that runs a bundle from scratch, take it through an MCP session on stdin, end stdin once the last
 * request is answered, and resolve when it has exited having written its code cache. It runs in a
 * world of its own: the scratch folder is its HOME, TMPDIR and working directory.
 */
import { spawn } from "node:child_process";

const TIMEOUT_MS = 60_000;

/** The client's side of a session: initialize, initialized, then `requests` (ids from 2). */
export function sessionMessages(requests) {
  return [
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "build", version: "0" },
      },
    },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    ...requests.map((request, i) => ({ jsonrpc: "2.0", id: i + 2, ...request })),
  ];
}

/**
 * Run `node <script> <args...>` through `messages`. `what` names it in the error; the session
 * counts as done when the answer to the last request came and the process exited with status 0.
 */
export function primeSession({ script, args, messages, scratch, what }) {
  const lastId = messages.filter((m) => "id" in m).at(-1)?.id;
  const answered = new RegExp(`"id":${lastId}[,}]`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd: scratch,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: scratch, TMPDIR: scratch },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), TIMEOUT_MS);
    let out = "";
    let err = "";
    child.stderr.on("data", (chunk) => {
      err += chunk;
    });
    child.stdout.on("data", (chunk) => {
      out += chunk;
      // The last answer: ending stdin ends the session, and prime.cjs writes the cache as it exits.
      if (answered.test(out)) child.stdin.end();
    });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0 && answered.test(out)) resolve();
      else reject(new Error(`${what}: priming its code cache failed (${code ?? signal}): ${err || out}`));
    });
    child.stdin.write(messages.map((m) => `${JSON.stringify(m)}\n`).join(""));
  });
}
