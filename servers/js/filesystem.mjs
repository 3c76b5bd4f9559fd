/**
 * `js_filesystem` (serverInfo `workspace-files-js`): read, write and list files "in the workspace",
 * the JavaScript twin of the Python `filesystem` server. Honestly vulnerable: a relative path is
 * resolved lexically against the workspace, an absolute path is used as given, and nothing keeps the
 * result inside the workspace. No hidden behaviour.
 */
import { closeSync, lstatSync, mkdirSync, openSync, readdirSync, readSync, writeFileSync } from "node:fs";
import path from "node:path";
import { serve } from "./mcpStdio.mjs";

const READ_LIMIT = 1024 * 1024;

/** The C library's wording for the errors a file tool meets, as the Python twin reports them. */
const OS_MESSAGES = {
  EACCES: "Permission denied",
  EEXIST: "File exists",
  EISDIR: "Is a directory",
  ELOOP: "Too many levels of symbolic links",
  ENAMETOOLONG: "File name too long",
  ENOENT: "No such file or directory",
  ENOSPC: "No space left on device",
  ENOTDIR: "Not a directory",
  EPERM: "Operation not permitted",
  EROFS: "Read-only file system",
};

function resolve(given) {
  return path.resolve(process.cwd(), given);
}

/** Runs a file operation; an OS error becomes `<OS message>: <resolved>`. */
function onPath(resolved, operation) {
  try {
    return operation();
  } catch (error) {
    const message = OS_MESSAGES[error?.code] ?? (error instanceof Error ? error.message : String(error));
    throw new Error(`${message}: ${resolved}`);
  }
}

function readHead(resolved) {
  const fd = openSync(resolved, "r");
  try {
    const buffer = Buffer.alloc(READ_LIMIT + 1);
    let filled = 0;
    while (filled < buffer.length) {
      const count = readSync(fd, buffer, filled, buffer.length - filled, null);
      if (count === 0) break;
      filled += count;
    }
    return buffer.subarray(0, filled);
  } finally {
    closeSync(fd);
  }
}

function readFile({ path: given }) {
  const resolved = resolve(given);
  const bytes = onPath(resolved, () => readHead(resolved));
  const truncated = bytes.length > READ_LIMIT;
  const kept = truncated ? bytes.subarray(0, READ_LIMIT) : bytes;
  return { path: given, resolved, size: kept.length, truncated, content: kept.toString("utf8") };
}

function writeFile({ path: given, content }) {
  const resolved = resolve(given);
  const bytes = Buffer.from(content, "utf8");
  onPath(resolved, () => {
    mkdirSync(path.dirname(resolved), { recursive: true });
    writeFileSync(resolved, bytes);
  });
  return { path: given, resolved, bytes_written: bytes.length };
}

function entryType(stats) {
  if (stats.isSymbolicLink()) return "symlink";
  if (stats.isDirectory()) return "dir";
  if (stats.isFile()) return "file";
  return "other";
}

function listDir({ path: given }) {
  const resolved = resolve(given);
  const entries = onPath(resolved, () =>
    readdirSync(resolved)
      .sort()
      .map((name) => {
        const stats = lstatSync(path.join(resolved, name));
        return { name, type: entryType(stats), size: stats.size };
      }),
  );
  return { path: given, resolved, entries };
}

serve("workspace-files-js", [
  {
    name: "read_file",
    description:
      "Read a text file from the workspace. Relative paths are resolved against the workspace root. Returns at most 1 MiB.",
    inputSchema: {
      type: "object",
      properties: { path: { type: "string", minLength: 1 } },
      required: ["path"],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
    run: readFile,
  },
  {
    name: "write_file",
    description:
      "Write a text file in the workspace, creating missing parent directories and replacing any existing content.",
    inputSchema: {
      type: "object",
      properties: { path: { type: "string", minLength: 1 }, content: { type: "string" } },
      required: ["path", "content"],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
    run: writeFile,
  },
  {
    name: "list_dir",
    description: "List a directory of the workspace: name, type and size of every entry, sorted by name.",
    inputSchema: {
      type: "object",
      properties: { path: { type: "string", default: "." } },
      required: [],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
    run: listDir,
  },
]);
