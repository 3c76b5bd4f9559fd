/**
 * A start `mcpguard run` refuses (a bad policy, a guard file in the server's reach, an L3 launcher it
 * cannot resolve) ends the proxy before any server runs. Its client has sent `initialize` by then and
 * would see only a closed connection (`MCP error -32000: Connection closed`): the reason is on
 * stderr, which most clients keep in a log file nobody reads. So the refusal also answers the
 * client's first request, with the same line as an error a client shows.
 */
import { classify, decodeMessage, encodeMessage, type Message } from "@mcpguard/protocol";

/** How long a refused start waits for the client's first request. */
const WAIT_MS = 500;
/** The longest first line read (an initialize request is a few hundred bytes). */
const MAX_LINE = 1 << 20;

/** The first line on stdin, within `waitMs`, or undefined (a terminal, nothing sent, end of input). */
function firstLine(waitMs: number): Promise<Buffer | undefined> {
  const input = process.stdin;
  if (input.isTTY) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    let seen = Buffer.alloc(0);
    const done = (line: Buffer | undefined) => {
      clearTimeout(timer);
      input.off("data", onData);
      input.off("end", onEnd);
      input.off("error", onEnd);
      // The proxy ends now: its input must not keep it waiting.
      input.destroy();
      resolve(line);
    };
    const onData = (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk]);
      const nl = seen.indexOf(10);
      if (nl >= 0) done(seen.subarray(0, nl));
      else if (seen.length > MAX_LINE) done(undefined);
    };
    const onEnd = () => done(undefined);
    const timer = setTimeout(() => done(undefined), waitMs);
    input.on("data", onData);
    input.once("end", onEnd);
    input.once("error", onEnd);
  });
}

/** Answer the client's first request, if it sends one at once, with why the server was not started. */
export async function answerRefusedStart(reason: string, waitMs = WAIT_MS): Promise<void> {
  const line = await firstLine(waitMs);
  if (!line) return;
  const decoded = decodeMessage(line);
  if (!decoded.ok) return;
  const request = classify(decoded.value);
  if (request.kind !== "request") return;
  const answer = {
    jsonrpc: "2.0",
    id: request.id,
    error: { code: -32603, message: `mcpguard did not start the server: ${reason}` },
  } as Message;
  await new Promise<void>((resolve) => process.stdout.write(encodeMessage(answer), () => resolve()));
}
