/** Reading a JSON file another run or tool wrote, through the schema of what the reader uses of it. */
import { readFileSync } from "node:fs";
import { UsageError } from "@mcpguard/proxy/args";
import type { z } from "zod";

/**
 * The file's JSON checked against `schema`; a file that is not JSON or does not match is one line,
 * `<file>: not a <what> (<field>: <why>)`, never a stack trace.
 */
export function readJsonFile<T extends z.ZodType>(file: string, schema: T, what: string): z.infer<T> {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new UsageError(`${file}: not a ${what} (${(error as Error).message})`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `${issue.path.join(".")}: ` : "";
    throw new UsageError(`${file}: not a ${what} (${where}${issue?.message ?? "invalid"})`);
  }
  return parsed.data;
}
