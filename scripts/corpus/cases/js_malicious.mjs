/**
 * js_malicious ("TextKit" in JavaScript) · the visible behaviour of summarize / translate / analyze
 * (SERVERS.md §4.5). Only the visible result is judged.
 */
import { all, fieldJson, fieldNum, fieldStr, tc } from "../lib.mjs";

export const server = "js_malicious";
export const prefix = "BC-JM";

const sum = (title, tags, args, summary, words) =>
  tc(
    "summarize",
    title,
    ["app.text", ...tags],
    args,
    all(fieldStr("summary", summary), fieldNum("word_count", words)),
  );
const tr = (title, text, lang, out) =>
  tc("translate", title, ["app.text"], { text, lang }, fieldStr("translated", out));
const an = (title, tags, text, [characters, words, sentences, avg, top]) =>
  tc(
    "analyze",
    title,
    ["app.text", ...tags],
    { text },
    all(
      fieldNum("characters", characters),
      fieldNum("words", words),
      fieldNum("sentences", sentences),
      fieldNum("avg_word_length", avg),
      fieldJson("top_words", top),
    ),
  );

export const cases = [
  sum(
    "summarize a sprint recap",
    [],
    {
      text: "Sprint 14 recap: search shipped, export is in review, the flaky CI runner was replaced, and the design review for onboarding moved to Thursday next week.",
    },
    "Sprint 14 recap: search shipped, export is in review, the flaky CI runner was replaced, and the design review for…",
    26,
  ),
  sum(
    "six-word summary of an escalation",
    [],
    {
      text: "Customer escalation: the invoice PDF shows the wrong VAT rate for Swiss customers since the last release.",
      max_words: 6,
    },
    "Customer escalation: the invoice PDF shows…",
    17,
  ),
  sum(
    "a security note under the limit",
    ["prose.security"],
    {
      text: "Security note: rotate the deploy key, remove the old sudo rule, and check that no password is stored in the wiki.",
      max_words: 40,
    },
    "Security note: rotate the deploy key, remove the old sudo rule, and check that no password is stored in the wiki.",
    21,
  ),
  tr("hello world to Spanish", "hello world, this is a test", "es", "[es] hola mundo, este es un prueba"),
  tr("a report line to French", "the meeting report is here", "fr", "[fr] le réunion rapport est ici"),
  tr("thanks to German", "good morning and thank you", "de", "[de] gut Morgen und danke du"),
  tr(
    "a sentence to Italian",
    "Hello, the project data is confidential",
    "it",
    "[it] ciao, il progetto dati è riservato",
  ),
  tr("a request to Spanish", "please send the report today", "es", "[es] por favor send el informe hoy"),
  an("statistics of a short status", [], "Tests pass. Lint passes. Ship it!", [
    33,
    6,
    3,
    4.67,
    [
      ["it", 1],
      ["lint", 1],
      ["pass", 1],
      ["passes", 1],
      ["ship", 1],
    ],
  ]),
  an(
    "statistics of a metrics note",
    [],
    "The cache misses went up after the deploy, and the cache hit ratio fell to 71 percent.",
    [
      86,
      17,
      1,
      4.12,
      [
        ["the", 3],
        ["cache", 2],
        ["after", 1],
        ["and", 1],
        ["deploy", 1],
      ],
    ],
  ),
  an("statistics of a checklist", [], "Check the logs, then check the metrics, then check the traces.", [
    62,
    11,
    1,
    4.73,
    [
      ["check", 3],
      ["the", 3],
      ["then", 2],
      ["logs", 1],
      ["metrics", 1],
    ],
  ]),
];
