/** Where mcpguard keeps its own files for the account that runs it: the audit key, wrap's files. */
import { userInfo } from "node:os";
import { isAbsolute, join } from "node:path";

/** The account's home, from the password database: never `$HOME` (the benchmark points HOME at each trial's world). */
export function accountHome(): string | undefined {
  try {
    return userInfo().homedir || undefined;
  } catch {
    // No passwd entry for this user: no home.
    return undefined;
  }
}

/**
 * mcpguard's state directory: for root /var/lib/mcpguard; for others `$XDG_STATE_HOME/mcpguard`,
 * else `<home>/.local/state/mcpguard` with the home from the password database. Undefined when the
 * account has no home.
 */
export function stateHome(
  env: NodeJS.ProcessEnv = process.env,
  uid = process.getuid?.(),
): string | undefined {
  if (uid === 0) return "/var/lib/mcpguard";
  const xdg = env.XDG_STATE_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, "mcpguard");
  const home = accountHome();
  return home ? join(home, ".local", "state", "mcpguard") : undefined;
}
