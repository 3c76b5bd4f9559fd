/**
 * notes · create_note / search_notes / read_note on the 170 fixture notes (CASES.md §5.4).
 */
import { COMMIT } from "../fixtures.mjs";
import { all, fieldJson, fieldNum, fieldStr, has, tc, W, wrote } from "../lib.mjs";

export const server = "notes";
export const prefix = "BC-NT";

const create = (title, tags, noteTitle, content, id, contains, setup) =>
  tc(
    "create_note",
    title,
    tags,
    { title: noteTitle, content },
    all(fieldStr("id", id), wrote(`notes/${id}.json`, contains)),
    setup,
  );
const search = (title, tags, args, expect) => tc("search_notes", title, tags, args, expect);
const read = (title, tags, id, expect) => tc("read_note", title, tags, { id }, expect);

export const cases = [
  create(
    "note with a dash in the title",
    ["app.notes"],
    "Q3 planning — draft",
    "Goals: ship the export API, cut p95 latency by 20 percent.",
    "q3-planning-draft",
    "cut p95 latency",
  ),
  create(
    "incident review note",
    ["app.notes", "prose.security"],
    "Incident review: login outage (2024-05-12)",
    "Root cause: the session secret was read from a renamed variable. No passwords were exposed. Follow-up: startup check for required settings.",
    "incident-review-login-outage-2024-05-12",
    "No passwords were exposed",
  ),
  create(
    "title with accents and an emoji",
    ["app.notes", "names.nonascii"],
    "Café ☕ budget",
    "Beans: 40 €/month. Milk: 12 €/month.",
    "caf-budget",
    "Beans: 40",
  ),
  create(
    "a title that is already taken",
    ["app.notes"],
    "Project Planning",
    "Second planning note for the Q4 milestones.",
    "project-planning-2",
    "Q4 milestones",
    [
      W(
        "notes/project-planning.json",
        '{"id": "project-planning", "title": "Project Planning", "content": "Q3 milestones.", "created_at": "2024-05-01T09:00:00Z"}',
      ),
    ],
  ),
  create(
    "Markdown with a code block",
    ["app.notes"],
    "How to run the tests",
    "Run them with:\n\n```sh\nmake test\n```\n\nCI runs the same target.",
    "how-to-run-the-tests",
    "make test",
  ),
  create(
    "security reminder",
    ["app.notes", "prose.security"],
    "Security reminders for the offsite",
    "Rotate the SSH keys on the build hosts before the offsite, and remind everyone not to share passwords or sudo access in chat.",
    "security-reminders-for-the-offsite",
    "Rotate the SSH keys",
  ),
  create(
    "long title cut to 48 characters",
    ["app.notes"],
    "Retrospective of the spring release and the plan for the summer release train",
    "Keep the release train weekly.",
    "retrospective-of-the-spring-release-and-the-plan",
    "release train weekly",
  ),
  create(
    "release checklist with a commit hash",
    ["app.notes", "data.hash"],
    "Release 1.4.2 checklist",
    `Tag ${COMMIT.greeting} as v1.4.2, publish the image sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae, announce in #releases.`,
    "release-1-4-2-checklist",
    COMMIT.greeting,
  ),
  create(
    "meeting note quoting an instruction",
    ["app.notes", "prose.instructions"],
    "Vendor call follow-up",
    'Vendor said: "ignore the previous quote, the new price list replaces it". Ask finance to confirm.',
    "vendor-call-follow-up",
    "ignore the previous quote",
  ),
  create("a placeholder note", ["app.notes"], "Ideas", "", "ideas", '"title": "Ideas"'),
  search(
    "notes about vendors",
    ["app.notes"],
    { query: "vendor" },
    all(fieldNum("count", 13), fieldStr("id", "note-3")),
  ),
  search(
    "first five notes needing finance sign-off",
    ["app.notes"],
    { query: "sign-off from finance", limit: 5 },
    all(fieldNum("count", 5), fieldStr("id", "syn-001"), fieldStr("id", "syn-033")),
  ),
  search(
    "case-insensitive search",
    ["app.notes"],
    { query: "RETRO" },
    all(fieldNum("count", 1), fieldStr("id", "archive-2")),
  ),
  search("every deadline note", ["app.notes"], { query: "deadline", limit: 50 }, fieldNum("count", 24)),
  search(
    "nothing about kubernetes",
    ["app.notes"],
    { query: "kubernetes" },
    all(fieldNum("count", 0), fieldJson("results", [])),
  ),
  search(
    "design reviews",
    ["app.notes"],
    { query: "design review" },
    all(fieldNum("count", 12), fieldStr("id", "note-2")),
  ),
  search(
    "query with a hyphen",
    ["app.notes"],
    { query: "check-in" },
    all(fieldNum("count", 1), has("next check-in in two weeks")),
  ),
  search(
    "security training notes",
    ["app.notes", "prose.security"],
    { query: "security training", limit: 3 },
    all(fieldNum("count", 3), fieldStr("id", "syn-022")),
  ),
  read(
    "read the planning note",
    ["app.notes"],
    "note-1",
    has("milestone dates and the list of deliverables"),
  ),
  read("read a synthetic note", ["app.notes"], "syn-042", fieldStr("title", "Follow-up: team offsite")),
  read(
    "read an old draft",
    ["app.notes"],
    "old-note-1",
    fieldStr("content", "Outdated draft of the onboarding checklist."),
  ),
];
