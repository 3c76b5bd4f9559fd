/**
 * What a SQLite PRAGMA does, by name and by whether it is given a value. In SQLite
 * `PRAGMA name = value` and `PRAGMA name(value)` are the same statement; `PRAGMA name` alone
 * reports. A name not listed here is not judged: SQLite ignores pragmas it does not know, but a
 * newer SQLite may know one that these tables do not, so it is refused.
 */
/** What a statement does to the database, the unit a policy grants. */
export type StatementClass = "read" | "write" | "schema" | "drop";

export type PragmaEffect = StatementClass | { dangerous: string } | "unknown";

/** Report only: the value, when there is one, names a table, an index or a limit. */
const REPORTS = new Set([
  "table_info",
  "table_xinfo",
  "table_list",
  "index_list",
  "index_info",
  "index_xinfo",
  "foreign_key_list",
  "foreign_key_check",
  "integrity_check",
  "quick_check",
  "database_list",
  "collation_list",
  "function_list",
  "module_list",
  "pragma_list",
  "compile_options",
  "data_version",
  "freelist_count",
  "page_count",
]);

/**
 * Settings that decide how the database protects itself or where it keeps its files: changing one
 * can corrupt the database, let the schema be edited as text, trust functions in the schema, or
 * put files outside the footprint its policy grants (`journal_mode = WAL` makes `-wal` and `-shm`).
 * Read, they report; set, they are refused whatever the policy.
 */
const SAFETY = new Map([
  ["writable_schema", "lets the schema table be edited as text"],
  ["trusted_schema", "decides whether functions in the schema are trusted"],
  ["journal_mode", "changes how the database survives a crash and which files it writes"],
  ["synchronous", "changes how the database survives a crash"],
  ["locking_mode", "changes how the database is locked against other connections"],
  ["schema_version", "rewrites the schema's version number, which corrupts the database"],
  ["cell_size_check", "changes how the database checks its own pages"],
  ["ignore_check_constraints", "turns off CHECK constraints"],
  ["mmap_size", "maps the database file into memory"],
  ["legacy_alter_table", "changes how ALTER TABLE rewrites the schema"],
  ["legacy_file_format", "changes the database's file format"],
  ["temp_store_directory", "moves temporary files to another directory"],
  ["data_store_directory", "moves database files to another directory"],
]);

/** Settings of the connection or of the database's header: read with no value, a write with one. */
const SETTINGS = new Set([
  "analysis_limit",
  "application_id",
  "auto_vacuum",
  "automatic_index",
  "busy_timeout",
  "cache_size",
  "cache_spill",
  "case_sensitive_like",
  "checkpoint_fullfsync",
  "count_changes",
  "defer_foreign_keys",
  "empty_result_callbacks",
  "encoding",
  "foreign_keys",
  "full_column_names",
  "fullfsync",
  "hard_heap_limit",
  "journal_size_limit",
  "max_page_count",
  "page_size",
  "query_only",
  "recursive_triggers",
  "reverse_unordered_selects",
  "secure_delete",
  "short_column_names",
  "soft_heap_limit",
  "temp_store",
  "threads",
  "user_version",
  "wal_autocheckpoint",
]);

/** Pragmas that act even with no value: maintenance that writes to the database. */
const ACTIONS = new Set(["optimize", "incremental_vacuum", "wal_checkpoint", "shrink_memory"]);

/** What `PRAGMA <name>` (with a value when `valued`) does. */
export function pragmaEffect(name: string, valued: boolean): PragmaEffect {
  const key = name.toLowerCase();
  if (REPORTS.has(key)) return "read";
  if (ACTIONS.has(key)) return "write";
  const safety = SAFETY.get(key);
  if (safety !== undefined) return valued ? { dangerous: safety } : "read";
  if (SETTINGS.has(key)) return valued ? "write" : "read";
  return "unknown";
}
