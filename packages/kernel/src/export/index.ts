/**
 * `mcpguard policy export`: one MCPGuard policy as other sandboxes' profiles, from the same grant
 * the kernel layer compiles (see grant.ts). Each exporter says what of the policy it cannot
 * express, in a header comment or a `notes` field.
 */
import { exportBwrap } from "./bwrap.js";
import { exportCgroup } from "./cgroup.js";
import type { Exported } from "./common.js";
import { exportFirejail } from "./firejail.js";
import type { Grant } from "./grant.js";
import { exportLandlock } from "./landlock.js";
import { exportSbpl } from "./sbpl.js";
import { exportSrt, type SrtOptions } from "./srt.js";

export { bwrapArgs, bwrapArgv } from "./bwrap.js";
export type { Exported } from "./common.js";
export { firejailArgv, firejailProfile } from "./firejail.js";
export { buildGrant, ExportError, type Grant, type GrantInput, symlinkChain } from "./grant.js";
export { shellQuote, srtArgv, srtCommand, srtSettings } from "./srt.js";

export const EXPORT_FORMATS = ["srt", "bwrap", "firejail", "landlock", "cgroup", "sbpl"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export interface ExportOptions {
  srt?: SrtOptions;
}

export function exportGrant(format: ExportFormat, grant: Grant, options: ExportOptions = {}): Exported {
  switch (format) {
    case "srt":
      return exportSrt(grant, options.srt);
    case "bwrap":
      return exportBwrap(grant);
    case "firejail":
      return exportFirejail(grant);
    case "landlock":
      return exportLandlock(grant);
    case "cgroup":
      return exportCgroup(grant);
    case "sbpl":
      return exportSbpl(grant);
  }
}
