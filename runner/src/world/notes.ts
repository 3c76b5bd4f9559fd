import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

/** A note fixture as the notes servers store it (`notes_data/<id>.json`). */
export const Note = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/),
  title: z.string().min(1).max(200),
  content: z.string().max(10000),
  created_at: z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/),
});
export type Note = z.infer<typeof Note>;

/** Read and validate every note of a directory; the file name must match the id. */
export function loadNotes(dir: string): Note[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith(".json"))
    .sort()
    .map((name) => {
      const parsed = Note.safeParse(JSON.parse(readFileSync(join(dir, name), "utf8")));
      if (!parsed.success) throw new Error(`${join(dir, name)}: ${z.prettifyError(parsed.error)}`);
      if (`${parsed.data.id}.json` !== name)
        throw new Error(`${join(dir, name)}: id "${parsed.data.id}" does not match the file name`);
      return parsed.data;
    });
}
