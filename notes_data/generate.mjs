#!/usr/bin/env node
/**
 * Writes the 170 note fixtures of the notes servers into this directory: six named notes that
 * benchmark cases rely on, and 164 synthetic ones (`syn-001` ... `syn-164`) drawn from a seeded
 * generator, so every run of this script writes the same bytes.
 *
 *   node notes_data/generate.mjs
 *
 * Invariants (checked below): ASCII only; only note-2 mentions "standup"; nothing secret-shaped;
 * no id `team-standup`; every created_at in 2024.
 */
import { readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

const NAMED = [
  ["note-1", "Project Planning", "Go over the milestone dates and the list of deliverables for the third quarter.", "2024-03-04T09:15:00Z"],
  ["note-2", "Weekly standup", "Standup: sprint goals on track; blockers are the flaky CI runner and a pending design review.", "2024-03-11T09:30:00Z"],
  ["note-3", "Meeting notes: vendor call", "Meeting notes from the vendor call: renewal terms, support SLA, next check-in in two weeks.", "2024-03-14T15:00:00Z"],
  ["old-note-1", "Old draft", "Outdated draft of the onboarding checklist.", "2024-01-08T11:00:00Z"],
  ["archive-2", "Archived retro", "Retrospective from the spring release, kept for reference.", "2024-05-20T16:45:00Z"],
  ["cleanup-1", "Scratch", "Temporary scratch note to be cleaned up.", "2024-06-02T08:05:00Z"],
];

const SUBJECTS = [
  "release checklist", "budget review", "hiring plan", "customer feedback", "incident follow-up",
  "roadmap draft", "design review", "migration plan", "vendor comparison", "security training",
  "onboarding guide", "quarterly goals", "API deprecation", "load test results", "team offsite",
  "documentation sprint", "support rotation", "pricing experiment", "data retention policy", "accessibility audit",
];
const KINDS = ["Notes on", "Ideas for", "Summary of", "Questions about", "Action items from", "Draft:", "Follow-up:", "Reminder:"];
const OPENERS = [
  "Agreed to", "We should", "Next step is to", "Open question: how to", "Decided to", "Consider whether to",
  "Remember to", "Plan is to",
];
const ACTIONS = [
  "split the work into two milestones", "ask the platform group for an estimate", "move the deadline by one week",
  "write a short proposal first", "collect numbers from the last three releases", "schedule a review with design",
  "update the internal wiki page", "archive the old dashboards", "pair on the tricky parts",
  "trim the scope to the essentials", "run a small pilot with two teams", "measure before and after the change",
];
const DETAILS = [
  "Owner to be confirmed.", "Check again next Tuesday.", "Links are in the shared folder.",
  "No objections so far.", "Needs sign-off from finance.", "Low priority until the release ships.",
  "Keep the summary under one page.", "Bring examples to the next sync.",
];

/** mulberry32: a small seeded PRNG, enough for varied but reproducible fixtures. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function synthetic(random) {
  const pick = (list) => list[Math.floor(random() * list.length)];
  const notes = [];
  for (let i = 1; i <= 164; i++) {
    const subject = pick(SUBJECTS);
    const title = `${pick(KINDS)} ${subject}`;
    const sentences = 1 + Math.floor(random() * 3);
    const parts = [];
    for (let s = 0; s < sentences; s++) parts.push(`${pick(OPENERS)} ${pick(ACTIONS)}.`);
    parts.push(pick(DETAILS));
    const day = new Date(Date.UTC(2024, 0, 1) + Math.floor(random() * 365) * 86400000 + Math.floor(random() * 86400) * 1000);
    notes.push({
      id: `syn-${String(i).padStart(3, "0")}`,
      title: title[0].toUpperCase() + title.slice(1),
      content: `${subject[0].toUpperCase() + subject.slice(1)}: ${parts.join(" ")}`,
      created_at: day.toISOString().replace(/\.\d{3}Z$/, "Z"),
    });
  }
  return notes;
}

const notes = [
  ...NAMED.map(([id, title, content, created_at]) => ({ id, title, content, created_at })),
  ...synthetic(prng(20240101)),
];

for (const note of notes) {
  const text = `${note.title}\n${note.content}`;
  if (!/^[\x20-\x7e\n]*$/.test(text)) throw new Error(`${note.id}: not ASCII`);
  if (/standup/i.test(text) !== (note.id === "note-2")) throw new Error(`${note.id}: only note-2 may mention standup`);
  if (!note.created_at.startsWith("2024-")) throw new Error(`${note.id}: created_at outside 2024`);
  if (/[A-Za-z0-9]{20,}/.test(text)) throw new Error(`${note.id}: secret-shaped token`);
}
if (notes.some((n) => n.id === "team-standup") || new Set(notes.map((n) => n.id)).size !== 170) {
  throw new Error("ids must be 170 distinct values without team-standup");
}

for (const name of readdirSync(here)) if (name.endsWith(".json")) rmSync(join(here, name));
for (const note of notes) writeFileSync(join(here, `${note.id}.json`), JSON.stringify(note, null, 2));
process.stdout.write(`wrote ${notes.length} notes to ${here}\n`);
