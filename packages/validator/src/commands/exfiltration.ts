/**
 * `l2.command.exfiltration`: ways to send data off the host. Raw network and file-transfer
 * clients always; bash's `/dev/tcp` and `/dev/udp`; HTTP clients only when they upload or post
 * (a download is ordinary); `scp` and `rsync` only towards a remote destination.
 */
import type { CommandRule } from "./view.js";

const RAW_CLIENTS = new Set([
  "nc",
  "ncat",
  "netcat",
  "nc.openbsd",
  "nc.traditional",
  "socat",
  "telnet",
  "ftp",
  "sftp",
  "tftp",
  "lftp",
]);
const DEV_NET = /\/dev\/(?:tcp|udp)\//;
const WRITE_METHOD = /^(?:POST|PUT|PATCH)$/i;
const CURL_UPLOAD = /^--(?:data(?:-[a-z]+)?|form(?:-string)?|upload-file|json)(?:=|$)/;
/** curl's short options that take a value: the rest of their word (or the next word) is that value. */
const CURL_VALUED = "AbcCdDeEFHKmoPQrtTuUwxXyYz";
const WGET_UPLOAD = /^--(?:post-data|post-file|body-data|body-file)(?:=|$)/;
const REMOTE = /^(?:[^@/\s]+@)?(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(?!\/\/)|^rsync:\/\//;

function methodWrites(args: readonly string[], i: number, inline: string): boolean {
  return WRITE_METHOD.test(inline || (args[i + 1] ?? ""));
}

function curlUploads(args: readonly string[]): boolean {
  return args.some((word, i) => {
    if (word.startsWith("@")) return true;
    if (word.startsWith("--")) {
      if (CURL_UPLOAD.test(word)) return true;
      if (word === "--request" || word.startsWith("--request=")) return methodWrites(args, i, word.slice(10));
      return false;
    }
    if (!word.startsWith("-")) return false;
    for (let j = 1; j < word.length; j++) {
      const letter = word[j] as string;
      if (letter === "d" || letter === "F" || letter === "T") return true;
      if (letter === "X") return methodWrites(args, i, word.slice(j + 1));
      if (CURL_VALUED.includes(letter)) return false;
    }
    return false;
  });
}

function wgetUploads(args: readonly string[]): boolean {
  return args.some(
    (word, i) =>
      WGET_UPLOAD.test(word) ||
      ((word === "--method" || word.startsWith("--method=")) && methodWrites(args, i, word.slice(9))),
  );
}

function uploads(name: string, args: readonly string[]): boolean {
  if (name === "curl") return curlUploads(args);
  if (name === "wget") return wgetUploads(args);
  if (name === "scp" || name === "rsync") {
    const destination = args.at(-1);
    return destination !== undefined && REMOTE.test(destination);
  }
  return false;
}

export const exfiltration: CommandRule = ({ text, invocations }) => {
  if (DEV_NET.test(text)) return "opens a network connection through /dev/tcp or /dev/udp";
  for (const { name, args } of invocations) {
    if (RAW_CLIENTS.has(name)) return `runs ${name}, a raw network or file-transfer client`;
    if (uploads(name, args)) return `uses ${name} to upload or post data`;
  }
  return undefined;
};
