/** A throwaway world for the validator tests: a workspace (the root), a home with secrets, siblings and symlinks. */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ArgRole } from "@mcpguard/policy";
import { inspectArguments, type ValidatorContext } from "../src/index.ts";

export interface World {
  root: string;
  workspace: string;
  home: string;
  ctx: ValidatorContext;
  /** The rule of the first finding for one argument with the role, or undefined. */
  rule(value: unknown, role: ArgRole, extra?: Partial<ValidatorContext>): string | undefined;
  remove(): void;
}

export function makeWorld(): World {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "mcpguard-validator-")));
  const workspace = join(root, "workspace");
  const home = join(root, "home");
  for (const dir of ["data", "output", "notes", "src"]) mkdirSync(join(workspace, dir), { recursive: true });
  for (const dir of [".ssh", ".aws", ".config"]) mkdirSync(join(home, dir), { recursive: true });
  mkdirSync(join(root, "workspace_evil"));
  mkdirSync(join(root, "outside", "deep"), { recursive: true });
  writeFileSync(join(workspace, "readme.txt"), "This is the MCPGuard sample workspace.\n");
  writeFileSync(join(workspace, "data", "config.json"), '{\n  "version": "1.0"\n}\n');
  writeFileSync(join(root, "workspace_evil", "x"), "evil");
  writeFileSync(join(root, "outside", "secret.txt"), "outside");
  writeFileSync(join(home, ".ssh", "id_rsa"), "key");
  writeFileSync(join(home, ".bashrc"), "# ~/.bashrc\n");
  // A link that points out of the workspace, and one whose `..` climbs from its target.
  symlinkSync(join(root, "outside"), join(workspace, "out"));
  symlinkSync(join(root, "outside", "deep"), join(workspace, "deep"));
  symlinkSync(join(home, ".ssh"), join(workspace, "keys"));
  const ctx: ValidatorContext = { cwd: workspace, home, roots: [workspace] };
  return {
    root,
    workspace,
    home,
    ctx,
    rule: (value, role, extra = {}) =>
      inspectArguments({ a: value }, { a: role }, { ...ctx, ...extra })?.rule,
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}
