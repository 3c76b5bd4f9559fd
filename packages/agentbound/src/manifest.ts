/**
 * The AgentBound manifest format: one per server, the permissions it is granted and the operator
 * scopes that narrow them. Loaded only to validate a manifest (see loadManifest).
 */
import { Destination, EnvName, Limits, PathPattern } from "@mcpguard/policy/schema";
import { z } from "zod";

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
    server: z.string().min(1),
    description: z.string().optional(),
    permissions: z.array(z.enum(PERMISSIONS)),
    /** Operator scopes: what each granted permission is narrowed to. A permission with no scope is unrestricted. */
    scopes: z
      .strictObject({
        "mcp.ac.filesystem.read": PathScope.optional(),
        "mcp.ac.filesystem.write": PathScope.optional(),
        "mcp.ac.filesystem.delete": PathScope.optional(),
        "mcp.ac.network.client": z.array(Destination).optional(),
        "mcp.ac.network.server": z.array(z.string().regex(/^\d{1,5}$/, "expected a port number")).optional(),
        "mcp.ac.system.exec": z.array(z.string().regex(/^\S+$/, "expected a program name")).optional(),
        "mcp.ac.system.env.read": z.array(EnvName).optional(),
      })
      .default({}),
    /** Resource limits of the server's cgroup, as in a policy. */
    limits: Limits.optional(),
  })
  .superRefine((m, ctx) => {
    for (const scope of Object.keys(m.scopes)) {
      if (!m.permissions.includes(scope as Permission)) {
        ctx.addIssue({
          code: "custom",
          path: ["scopes", scope],
          message: `a scope for "${scope}", which the manifest does not grant`,
        });
      }
    }
  });
export type Manifest = z.infer<typeof Manifest>;
