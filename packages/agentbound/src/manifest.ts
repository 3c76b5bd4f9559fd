/**
 * The AgentBound manifest format: one per server, the permissions it is granted and the operator
 * scopes that narrow them. Loaded only to validate a manifest (see loadManifest).
 */
// zod's English messages come with @mcpguard/policy/schema (its zodEnglish import), whose schemas
// these are built on.
import { Destination, EnvName, Limits, PathPattern } from "@mcpguard/policy/schema";
import * as z from "zod/mini";

export const PERMISSIONS = [
  "mcp.ac.filesystem.read",
  "mcp.ac.filesystem.write",
  "mcp.ac.filesystem.delete",
  "mcp.ac.network.client",
  "mcp.ac.network.server",
  "mcp.ac.system.exec",
  "mcp.ac.system.env.read",
] as const;
export type Permission = (typeof PERMISSIONS)[number];

const PathScope = z.array(PathPattern);

export const Manifest = z
  .strictObject({
    version: z.literal(1),
    server: z.string().check(z.minLength(1)),
    description: z.optional(z.string()),
    permissions: z.array(z.enum(PERMISSIONS)),
    /** Operator scopes: what each granted permission is narrowed to. A permission with no scope is unrestricted. */
    scopes: z._default(
      z.strictObject({
        "mcp.ac.filesystem.read": z.optional(PathScope),
        "mcp.ac.filesystem.write": z.optional(PathScope),
        "mcp.ac.filesystem.delete": z.optional(PathScope),
        "mcp.ac.network.client": z.optional(z.array(Destination)),
        "mcp.ac.network.server": z.optional(
          z.array(z.string().check(z.regex(/^\d{1,5}$/, "expected a port number"))),
        ),
        "mcp.ac.system.exec": z.optional(
          z.array(z.string().check(z.regex(/^\S+$/, "expected a program name"))),
        ),
        "mcp.ac.system.env.read": z.optional(z.array(EnvName)),
      }),
      {},
    ),
    /** Resource limits of the server's cgroup, as in a policy. */
    limits: z.optional(Limits),
  })
  .check(
    z.superRefine((m, ctx) => {
      for (const scope of Object.keys(m.scopes)) {
        if (!m.permissions.includes(scope as Permission)) {
          ctx.addIssue({
            code: "custom",
            path: ["scopes", scope],
            message: `a scope for "${scope}", which the manifest does not grant`,
          });
        }
      }
    }),
  );
export type Manifest = z.infer<typeof Manifest>;
