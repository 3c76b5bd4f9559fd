/**
 * What L1 knows of programs beyond their names: the ones whose operands are never files, the
 * builtins that reach beyond the shell, the variables that change what code a program loads, and
 * git's subcommands that contact another host.
 */
import { VARIABLE_FACTS } from "@mcpguard/readers";

/**
 * Programs that open no file named by an operand or an option, whatever their words: a word
 * known only at run time cannot make them read or write a file. (`date` is not one: `date -f
 * FILE` reads a file, and prints its lines in its errors.)
 */
export const NO_FILE_OPERANDS = new Set([
  "echo",
  "printf",
  "test",
  "[",
  "true",
  "false",
  ":",
  "seq",
  "expr",
  "basename",
  "dirname",
  "sleep",
  "tr",
  "yes",
  "factor",
  "nproc",
  "uname",
  "pwd",
  "whoami",
  "id",
  "numfmt",
]);

/** Builtins with an effect outside the shell: the policy must list them like programs. */
export const CAPABILITY_BUILTINS = new Map([
  ["kill", "signals other processes"],
  ["enable", "loads builtins from shared libraries"],
]);

/**
 * Variables that change which program a name runs or what code a program loads. Setting one is
 * running code the layers cannot see, unless the kernel confines what may run. The readers' table
 * of programs' options adds the variables that hand a program a command or options
 * (`VARIABLE_FACTS`: `LESSOPEN`, `TAR_OPTIONS`, `MANOPT`, `RSYNC_RSH`, ...).
 */
const CODE_VARIABLES = new Set([
  "PATH",
  "LD_PRELOAD",
  "LD_LIBRARY_PATH",
  "LD_AUDIT",
  // glibc's own loaders: iconv's modules (any program that converts a charset), the tunables of
  // its allocator and loader, locales and message catalogs read as code-adjacent data, and the
  // hosts file of the resolver.
  "GCONV_PATH",
  "GLIBC_TUNABLES",
  "LOCPATH",
  "NLSPATH",
  "HOSTALIASES",
  "BASH_ENV",
  "ENV",
  "SHELLOPTS",
  "BASHOPTS",
  "PROMPT_COMMAND",
  "PYTHONPATH",
  "PYTHONSTARTUP",
  "PYTHONHOME",
  "PYTHONUSERBASE",
  "NODE_OPTIONS",
  "NODE_PATH",
  "PERL5LIB",
  "PERL5OPT",
  "PERLLIB",
  "RUBYOPT",
  "RUBYLIB",
  "GIT_EXEC_PATH",
  "GIT_PAGER",
  "GIT_EDITOR",
  "GIT_SEQUENCE_EDITOR",
  "GIT_SSH",
  "GIT_SSH_COMMAND",
  "GIT_EXTERNAL_DIFF",
  "GIT_ASKPASS",
  "SSH_ASKPASS",
  "GIT_CONFIG_PARAMETERS",
  "GIT_CONFIG_COUNT",
  "GIT_CONFIG_GLOBAL",
  "GIT_CONFIG_SYSTEM",
  "GIT_TEMPLATE_DIR",
  "PAGER",
  "EDITOR",
  "VISUAL",
  "MANPAGER",
  "LESSOPEN",
  "LESSCLOSE",
  // git and others read their settings (and the commands in them) from HOME and XDG_CONFIG_HOME.
  "HOME",
  "XDG_CONFIG_HOME",
  // bash expands prompts (PS4 under `set -x`) with command substitution.
  "PS1",
  "PS2",
  "PS3",
  "PS4",
]);

/** Variables that name files or directories a program opens: their values are paths like operands. */
export const PATH_VARIABLES = new Set([
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_INDEX_FILE",
  "GIT_OBJECT_DIRECTORY",
  "GIT_ALTERNATE_OBJECT_DIRECTORIES",
  "GIT_COMMON_DIR",
  "GIT_CONFIG",
  "TMPDIR",
]);

export function codeVariable(name: string): boolean {
  return (
    CODE_VARIABLES.has(name) ||
    Object.hasOwn(VARIABLE_FACTS, name) ||
    /^GIT_CONFIG_(?:KEY|VALUE)_\d+$/.test(name)
  );
}

/**
 * git subcommands that contact another host (or serve one). A bare `git` entry of a policy does
 * not allow them: the policy must name each (`"git fetch"`), as it names a destination.
 */
export const GIT_NETWORK = new Set([
  "clone",
  "fetch",
  "pull",
  "push",
  "ls-remote",
  "send-email",
  "request-pull",
  "daemon",
  "instaweb",
  "http-backend",
  "http-fetch",
  "http-push",
  "upload-pack",
  "receive-pack",
  "upload-archive",
  "fetch-pack",
  "send-pack",
  "svn",
  "p4",
  "cvsimport",
  "cvsexportcommit",
  "cvsserver",
  "archimport",
  "quiltimport",
  "imap-send",
  "credential",
  "credential-cache",
  "credential-store",
  "credential-cache--daemon",
  "maintenance",
  "shell",
]);

/** `git remote <verb>` and `git submodule <verb>` that fetch. */
export const GIT_NETWORK_VERBS: Record<string, Set<string>> = {
  remote: new Set(["update", "prune", "show", "set-head"]),
  submodule: new Set(["update", "add"]),
};
