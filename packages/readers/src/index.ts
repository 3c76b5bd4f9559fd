/**
 * The languages a tool call may carry, each read on its own grammar: shell command lines
 * (mvdan-sh, with dash's and bash's readings), SQL (SQLite's dialect), and the code a command hands
 * an interpreter (Python, JavaScript on acorn, awk, sed, the sqlite3 shell). A reading says what a
 * text runs, opens, writes and reaches, and what only the run can know; the layers decide on it
 * (L1 in @mcpguard/policy, L2 in @mcpguard/validator).
 */
export { analyzeCode, type CodeUse } from "./code/index.js";
export { configurePythonReader, type HelperLauncher, warmPythonReader } from "./code/pyhelper.js";
export { type Confinement, UNCONFINED } from "./confinement.js";
export { globFiles, globMatcher } from "./glob.js";
export {
  enterableDirectory,
  envPrefixCommand,
  type Field,
  type FullReading,
  GIT_CONFIG_VALUED,
  gitKeyKind,
  gitSubcommand,
  type Invocation,
  optionUses,
  PROGRAM_FACTS,
  programWords,
  readShell,
  type ShellContext,
  UNKNOWN_MARK,
  VARIABLE_FACTS,
  warmShellGrammar,
} from "./shell/index.js";
export { parseCommand, type Redirect } from "./shell.js";
export { readSql, type SqlStatement, type StatementClass } from "./sql.js";
