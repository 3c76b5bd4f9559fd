/**
 * The languages a tool call may carry, each read on its own grammar: shell command lines
 * (mvdan-sh, with dash's and bash's readings), SQL (SQLite's dialect), and the code a command hands
 * an interpreter (Python, JavaScript on acorn, awk, sed, the sqlite3 shell). A reading says what a
 * text runs, opens, writes and reaches, and what only the run can know; the layers decide on it
 * (L1 in @mcpguard/policy, L2 in @mcpguard/validator).
 */
export { analyzeCode, type CodeUse, hasUnknownText } from "./code/index.js";
export {
  configurePythonReader,
  type HelperLauncher,
  helperArgv,
  MAX_PYTHON_LENGTH,
  type PythonReaderOptions,
  pythonInterpreter,
  pythonReaderPids,
  stopPythonReader,
  warmPythonReader,
} from "./code/pyhelper.js";
export { type Confinement, UNCONFINED } from "./confinement.js";
export { globFiles, globMatcher } from "./glob.js";
export {
  type Dialect,
  type Dynamic,
  type Effect,
  type EnvSetting,
  envPrefixCommand,
  type Field,
  type FileRedirect,
  type FullReading,
  gitKeyKind,
  gitSubcommand,
  type Invocation,
  known,
  type OptionFact,
  type OptionUse,
  optionUses,
  PROGRAM_FACTS,
  type ProgramFacts,
  programName,
  type ReadResult,
  type RedirectAt,
  type RedirectOp,
  readShell,
  type ShellContext,
  type ShellReading,
  type Stdin,
  shellGrammar,
  UNKNOWN_MARK,
  type Unknown,
  unknownField,
  VARIABLE_FACTS,
  warmShellGrammar,
} from "./shell/index.js";
export { type ParsedCommand, parseCommand, type Redirect, type SimpleCommand } from "./shell.js";
export { MAX_SQL_LENGTH, readSql, type SqlReading, type SqlStatement, type StatementClass } from "./sql.js";
