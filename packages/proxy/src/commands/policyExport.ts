/** `mcpguard policy export`: a policy as another sandbox's profile (see ../export.ts). */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { defineCommand, UsageError } from "../args.js";

const EXPORT = defineCommand({
  name: "mcpguard policy export",
  description:
    "Write the policy as a profile for another sandbox, resolved for the working directory and the " +
    "environment as `mcpguard run` resolves it ({{cwd}}, {{home}} from HOME, {{tmp}} from TMPDIR). The " +
    "server's command is resolved as `mcpguard run` resolves it under the kernel layer (npx, npm exec, " +
    "uvx, uv tool run and a version manager's shim to the interpreter and script they would run; a " +
    "launcher it does not resolve is refused), and adds what its interpreter needs, as the kernel layer " +
    "adds it. The profile's usage line says that command: run it under the profile, not the launcher. " +
    'Each profile says what of the policy the format cannot express (a header comment, or a "notes" field).',
  withCommand: "optional",
  options: {
    format: { type: "string", value: "format", help: "the profile's format (below; required)" },
    policy: { type: "string", value: "file", help: "the server's policy" },
    overrides: {
      type: "string",
      value: "path",
      help: "operator overrides: a file, or a directory of <server>.json",
    },
    cwd: { type: "string", value: "dir", help: "the folder {{cwd}} stands for (default: this one)" },
    out: { type: "string", value: "file", help: "write the profile there (default: standard output)" },
    "pids-max": { type: "string", value: "n", help: "tasks the server's cgroup may hold (cgroup format)" },
    "memory-max": {
      type: "string",
      value: "bytes",
      help: "memory the server's cgroup may use (cgroup format)",
    },
  },
  more: `formats:
  srt        sandbox-runtime settings (srt --settings FILE -c '<command>'); srt must be on PATH
  bwrap      bubblewrap arguments, as JSON ({"notes": [...], "args": [...]})
  firejail   a firejail profile (firejail --profile=FILE <command>)
  landlock   the Landlock ruleset MCPGuard's kernel layer applies, as JSON
  cgroup     the cgroup v2 limits (pids.max, memory.max) from the policy's limits, as JSON
  sbpl       a macOS sandbox-exec profile (paths of this host)`,
});

export async function exportCommand(argv: string[]): Promise<number> {
  const parsed = EXPORT.parse(argv);
  if (!parsed) return 0;
  const { values, command } = parsed;
  const { EXPORT_FORMATS, ExportError } = await import("@mcpguard/kernel/export");
  const format = values.format;
  if (!format) throw new UsageError(`--format is required (${EXPORT_FORMATS.join(", ")})`);
  if (!(EXPORT_FORMATS as readonly string[]).includes(format))
    throw new UsageError(`--format: unknown format "${format}" (${EXPORT_FORMATS.join(", ")})`);
  const { exportPolicy } = await import("../export.js");
  const policyLib = await import("@mcpguard/policy");
  const { LimitsError } = await import("../limits.js");
  let text: string;
  try {
    const { exported } = await exportPolicy({
      format: format as (typeof EXPORT_FORMATS)[number],
      policy: values.policy,
      overrides: values.overrides,
      cwd: resolve(values.cwd ?? process.cwd()),
      env: process.env,
      argv: command,
      limits: { pidsMax: values["pids-max"], memoryMax: values["memory-max"] },
    });
    text = exported.text;
  } catch (error) {
    if (
      error instanceof policyLib.PolicyError ||
      error instanceof ExportError ||
      error instanceof LimitsError ||
      /cannot find the server's program/.test((error as Error).message)
    )
      throw new UsageError((error as Error).message);
    throw error;
  }
  if (values.out) writeFileSync(values.out, text);
  else process.stdout.write(text);
  return 0;
}
