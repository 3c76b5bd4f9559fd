/**
 * Sensitive locations, whatever a policy allows: files that hold credentials or system secrets,
 * kernel interfaces, and (for writes) the places that run code at the next login, shell start,
 * commit or boot. Paths here are absolute; callers pass each form they resolved (lexical,
 * canonical) so that neither a symlink nor `..` hides the file.
 */
import { basename, dirname } from "node:path";
import { isWithin } from "@mcpguard/policy";
import type { Scope } from "./context.js";
import { publicPemFile } from "./pem.js";

const SYSTEM_SECRETS =
  /^\/etc\/(?:g?shadow|passwd|master\.passwd)(?:-|$)|^\/etc\/sudoers|^\/(?:proc|sys)(?:\/|$)|^\/(?:var\/)?run\/docker\.sock$/;
const ROOT_HOME = /^\/root(?:\/|$)/;
const SECRET_FILE =
  /^\.env(?:\.(?!(?:example|sample|template|dist)$).+)?$|^id_(?:rsa|dsa|ecdsa|ed25519)(?!.*\.pub$)|\.(?:key|p12|pfx)$/;
/**
 * A PEM file may hold a private key, or only certificates, public keys and parameters: it is
 * judged by what it holds (`pem.ts`). The file is read when the call is judged, and the server may
 * change it after; a key it then reads back is still removed from the result (`l2.result.private-key`).
 */
const PEM_FILE = /\.pem$/i;
const HOME_SECRETS =
  /^(?:\.ssh|\.aws|\.gnupg|\.kube|\.docker|\.azure|\.config\/gcloud|\.config\/gh|\.netrc|\.git-credentials|\.pgpass|\.npmrc|\.pypirc|\.vault-token)(?:\/|$)/;
const HOME_STARTUP =
  /^(?:\.bashrc|\.bash_profile|\.bash_login|\.bash_logout|\.profile|\.zshrc|\.zprofile|\.zshenv|\.zlogin|\.gitconfig|\.config\/(?:autostart|systemd|git|fish)|\.local\/bin|\.local\/share\/systemd)(?:\/|$)/;
const SYSTEM_STARTUP =
  /^\/etc\/(?:crontab|anacrontab|cron\.|cron\/|profile|bash\.bashrc|environment|ld\.so\.preload|systemd\/|init\.d\/|rc\.local)|^\/var\/spool\/cron(?:\/|$)|^\/(?:usr\/)?lib\/systemd\//;
const REPO_STARTUP = /\/\.git\/(?:hooks(?:\/|$)|config$)/;
export const SHELL_RC = /^\.(?:bashrc|bash_profile|bash_login|profile|zshrc|zprofile|zshenv|zlogin)$/;
const OTHER_HOME = /^\/(?:home|Users)\/[^/]+\/(.+)$/;
const TRAILING_SLASH = /\/$/;

export type Sensitivity = "secret" | "startup";

/** The path relative to a home directory (the server's, or another user's), if it is in one. */
function inHome(path: string, homes: readonly string[]): string | undefined {
  for (const home of homes) {
    if (path !== home && isWithin(path, home)) return path.slice(home.replace(TRAILING_SLASH, "").length + 1);
  }
  return OTHER_HOME.exec(path)?.[1];
}

export function sensitivity(path: string, write: boolean, scope: Scope): Sensitivity | undefined {
  const rest = inHome(path, scope.homes);
  const name = basename(path);
  if (
    SYSTEM_SECRETS.test(path) ||
    SECRET_FILE.test(name) ||
    (PEM_FILE.test(name) && !publicPemFile(path)) ||
    (rest !== undefined && HOME_SECRETS.test(rest))
  ) {
    return "secret";
  }
  // A workspace may live under /root when the server runs as root: /root counts outside the roots.
  if (ROOT_HOME.test(path) && !scope.withinRoots(path)) return "secret";
  if (!write) return undefined;
  if (
    SYSTEM_STARTUP.test(path) ||
    REPO_STARTUP.test(path) ||
    (rest !== undefined && HOME_STARTUP.test(rest))
  ) {
    return "startup";
  }
  if (SHELL_RC.test(name) && (scope.homes.includes(dirname(path)) || !scope.withinRoots(path))) {
    return "startup";
  }
  return undefined;
}

/** A path as a reason shows it: under HOME as `~/...`. */
export function display(path: string, scope: Scope): string {
  const home = scope.homes.find((h) => isWithin(path, h));
  return home ? `~${path.slice(home.replace(TRAILING_SLASH, "").length)}` : path;
}

export function describeSensitivity(kind: Sensitivity): string {
  return kind === "secret"
    ? "a file that holds secrets or system internals"
    : "a place that runs code at login, start-up or commit";
}
