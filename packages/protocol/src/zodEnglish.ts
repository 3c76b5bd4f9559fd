/**
 * zod's messages in English for the schemas built with zod/mini. zod/mini registers no language,
 * so without this every issue's message is "Invalid input"; classic zod registers English itself
 * when it builds its first schema (v4/classic/schemas.js), and, as there, a language set before
 * this one is kept. Every module that builds schemas imports this one for its effect (agentbound's
 * manifest through the policy schemas it builds on), rather than each entry point (the CLI, each
 * package's tests, the runner) registering it: whatever loads a schema has the messages before its
 * first parse, and a start that loads no schema (C0) loads none of it. English is read from its own
 * file: zod/mini's `locales` namespace would bring every other language into the bundle.
 */
import * as z from "zod/mini";
import en from "zod/v4/locales/en.js";

if (!z.config().localeError) z.config(en());
