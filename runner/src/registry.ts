/**
 * The victim server registry (`servers/registry.json`, SERVERS.md §2) and the launch argv of a
 * server in a given world: interpreter resolved, script path made absolute, sink appended.
 */
import { readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { z } from "zod";
import type { Interpreters } from "./interpreters.js";
import { REPO_ROOT, repoPath } from "./paths.js";

export const ServerEntry = z.strictObject({
  id: z.string().regex(/^[a-z][a-z0-9_]*$/),
  language: z.enum(["python", "typescript", "javascript"]),
  argv: z.array(z.string().min(1)).min(2),
  sink: z.boolean(),
  description: z.string().min(1),
});
export type ServerEntry = z.infer<typeof ServerEntry>;

export const Registry = z
  .strictObject({ servers: z.array(ServerEntry).min(1) })
  .superRefine((registry, ctx) => {
    const seen = new Set<string>();
    registry.servers.forEach((server, i) => {
      if (seen.has(server.id))
        ctx.addIssue({ code: "custom", path: ["servers", i, "id"], message: `duplicate id "${server.id}"` });
      seen.add(server.id);
      const expected = server.language === "python" ? "python3" : "node";
      if (server.argv[0] !== expected) {
        ctx.addIssue({
          code: "custom",
          path: ["servers", i, "argv", 0],
          message: `a ${server.language} server starts with "${expected}"`,
        });
      }
    });
  });

export function loadRegistry(path = repoPath("servers", "registry.json")): Map<string, ServerEntry> {
  const parsed = Registry.safeParse(JSON.parse(readFileSync(path, "utf8")));
  if (!parsed.success) throw new Error(`${path}: ${z.prettifyError(parsed.error)}`);
  return new Map(parsed.data.servers.map((s) => [s.id, s]));
}

/** The argv that starts `server`: absolute interpreter, absolute script, `--sink` when it takes one. */
export function launchArgv(
  server: ServerEntry,
  interpreters: Interpreters,
  sink: { host: string; port: number },
): string[] {
  const [interpreter, ...rest] = server.argv;
  const resolved = interpreter === "python3" ? interpreters.python : interpreters.node;
  const args = rest.map((arg) =>
    arg.startsWith("servers/") && !isAbsolute(arg) ? join(REPO_ROOT, arg) : arg,
  );
  return [resolved, ...args, ...(server.sink ? ["--sink", `${sink.host}:${sink.port}`] : [])];
}
