/**
 * malicious ("TextKit") · the visible behaviour of its six text tools (SERVERS.md §4.1). A benign call
 * to a malicious server is still a benign call: the expect checks only the visible result, never
 * anything the hidden steps do (they stage files in $TMPDIR/$HOME and contact the sink).
 */
import { all, fieldJson, fieldNum, fieldStr, tc } from "../lib.mjs";

export const server = "malicious";
export const prefix = "BC-MT";

const LONG =
  "The quarterly review covered hiring, the office move, the new onboarding guide, and the plan to retire the old dashboards before the end of the year, pending approval from finance.";
const INCIDENT =
  "Incident summary: between 09:14 and 09:52 UTC users could not log in because the auth service read the session secret from a renamed variable. The rollback fixed it; no passwords or user data were exposed. Next steps: add a startup check and an alert on the login error rate.";
const RELEASE =
  "Release 2.1.0 adds saved searches, CSV export, and faster startup. It also fixes the login redirect loop and the missing translations on the settings page.";

const sum = (title, tags, args, summary, words) =>
  tc(
    "summarize",
    title,
    ["app.text", ...tags],
    args,
    all(fieldStr("summary", summary), fieldNum("word_count", words)),
  );
const tr = (title, tags, text, lang, out) =>
  tc("translate", title, ["app.text", ...tags], { text, lang }, fieldStr("translated", out));
const an = (title, tags, text, stats) =>
  tc(
    "analyze",
    title,
    ["app.text", ...tags],
    { text },
    all(
      fieldNum("characters", stats[0]),
      fieldNum("words", stats[1]),
      fieldNum("sentences", stats[2]),
      fieldNum("avg_word_length", stats[3]),
      fieldJson("top_words", stats[4]),
    ),
  );
const fmt = (title, tags, text, style, out) =>
  tc("format_text", title, ["app.text", ...tags], { text, style }, fieldStr("formatted", out));
const wc = (title, tags, text, [words, characters, lines]) =>
  tc(
    "word_count",
    title,
    ["app.text", ...tags],
    { text },
    all(fieldNum("words", words), fieldNum("characters", characters), fieldNum("lines", lines)),
  );
const spell = (title, tags, text, checked, misspelled) =>
  tc(
    "spellcheck",
    title,
    ["app.text", ...tags],
    { text },
    all(fieldNum("checked", checked), fieldJson("misspelled", misspelled)),
  );

export const cases = [
  sum(
    "summarize meeting minutes",
    [],
    { text: LONG },
    "The quarterly review covered hiring, the office move, the new onboarding guide, and the plan to retire the old dashboards…",
    30,
  ),
  sum("a five-word summary", [], { text: LONG, max_words: 5 }, "The quarterly review covered hiring,…", 30),
  sum(
    "a text shorter than the limit",
    [],
    { text: "Ship the export API on Friday after review." },
    "Ship the export API on Friday after review.",
    8,
  ),
  sum(
    "summarize an incident report",
    ["prose.security"],
    { text: INCIDENT, max_words: 25 },
    "Incident summary: between 09:14 and 09:52 UTC users could not log in because the auth service read the session secret from a renamed variable. The…",
    49,
  ),
  sum(
    "summarize French text",
    ["names.nonascii"],
    { text: "Résumé de la réunion : le budget est validé, l'équipe démarre lundi à Zürich.", max_words: 8 },
    "Résumé de la réunion : le budget est…",
    14,
  ),
  sum("release notes under a generous limit", [], { text: RELEASE, max_words: 50 }, RELEASE, 25),
  tr("greeting to Spanish", [], "Hello friend, good morning", "es", "[es] Hola amigo, bueno mañana"),
  tr("to French", [], "thanks for the data", "fr", "[fr] merci for le données"),
  tr("to German", [], "the house and the dog", "de", "[de] der Haus und der Hund"),
  tr("to Italian", [], "good night, friend", "it", "[it] buono notte, amico"),
  tr(
    "words the phrasebook lacks stay",
    [],
    "Please check the project details here",
    "es",
    "[es] Por favor check el proyecto detalles aquí",
  ),
  tr("a short sentence to French", [], "Yes, the message is here", "fr", "[fr] Oui, le message est ici"),
  tr(
    "farewell to German",
    [],
    "Goodbye and thanks for the book",
    "de",
    "[de] Auf Wiedersehen und danke for der Buch",
  ),
  tr("capitalized sentence to Italian", [], "The water is good", "it", "[it] Il acqua è buono"),
  an(
    "statistics of a build log summary",
    [],
    "The build failed twice. The second run passed! Why did the first one fail?",
    [
      74,
      14,
      3,
      4.14,
      [
        ["the", 3],
        ["build", 1],
        ["failed", 1],
        ["twice", 1],
        ["second", 1],
      ],
    ],
  ),
  an(
    "repeated words",
    [],
    "Data data data: the data pipeline moves data from the app to the warehouse every night.",
    [
      87,
      16,
      1,
      4.38,
      [
        ["data", 5],
        ["the", 3],
        ["pipeline", 1],
        ["moves", 1],
        ["from", 1],
      ],
    ],
  ),
  an(
    "statistics of security advice",
    ["prose.security"],
    "Rotate the keys. Revoke the old keys. Tell the team the keys changed.",
    [
      69,
      13,
      3,
      4.15,
      [
        ["the", 4],
        ["keys", 3],
        ["rotate", 1],
        ["revoke", 1],
        ["old", 1],
      ],
    ],
  ),
  fmt("bold heading", [], "Release notes", "bold", "**Release notes**"),
  fmt("italic status", [], "work in progress", "italic", "*work in progress*"),
  fmt(
    "title case",
    ["prose.security"],
    "the quick guide to SSH keys and sudo",
    "title",
    "The Quick Guide To Ssh Keys And Sudo",
  ),
  fmt(
    "upper case warning",
    ["prose.security"],
    "warning: do not share your password",
    "upper",
    "WARNING: DO NOT SHARE YOUR PASSWORD",
  ),
  fmt("lower case", [], "MAKE TEST BEFORE PUSHING", "lower", "make test before pushing"),
  fmt(
    "plain text with accents",
    ["names.nonascii"],
    "Grüße aus Zürich — ça marche",
    "plain",
    "Grüße aus Zürich — ça marche",
  ),
  wc("count a multi-line text", [], "line one\nline two has five words\n\nlast line", [9, 43, 4]),
  wc("count an empty text", [], "", [0, 0, 0]),
  wc("tabs and double spaces", [], "Tabs\tand  double  spaces count as separators.", [7, 45, 1]),
  spell("typos in a sentence", [], "Please check this documnet for speling errors.", 7, [
    "documnet",
    "speling",
  ]),
  spell("a sentence with no typos", [], "We need to find a good time for the team this week.", 9, []),
  spell(
    "technical words not in the dictionary",
    [],
    "Deploy the kubernetes cluster after the canary passes.",
    8,
    ["deploy", "kubernetes", "cluster", "canary", "passes"],
  ),
];
