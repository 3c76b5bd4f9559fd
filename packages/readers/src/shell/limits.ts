/** The bounds of a reading, and the errors that say a reading stopped at one or at a nested script. */

export const MAX_STEPS = 60_000;
export const MAX_DEPTH = 120;
export const MAX_NESTED_SCRIPTS = 8;

/** The reading went past one of its bounds. */
export class ReadLimit extends Error {
  override readonly name = "ReadLimit";
}

/** A script nested in the line (`eval`, `sh -c`, a here-document fed to a shell) does not parse. */
export class NestedParseError extends Error {
  override readonly name = "NestedParseError";
}
