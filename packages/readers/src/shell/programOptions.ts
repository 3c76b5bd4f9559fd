/**
 * What programs' options make them run, read and write: a table of facts, ours, written from
 * GTFOBins (https://github.com/GTFOBins/GTFOBins.github.io, `_gtfobins/*.md` at commit 7382261,
 * 2026-04-20; the catalogue is GPL-3.0, and no text of it is copied here) and from each program's
 * manual (GNU tar 1.34, coreutils 9.1, findutils 4.9, util-linux 2.38, man-db 2.11, OpenSSH 9.2,
 * rsync 3.2, zip 3.0, less 590, procps 4), checked by running those on Debian 12 where they are
 * installed. It covers every program a policy of ours lets a command run and the common ones
 * beyond. How the shell reader uses it: options.ts and wrappers.ts.
 *
 * An option's value is one of:
 * - `command`: a shell command line the program runs with `sh -c` (tar `--to-command`) or splits
 *   into a program and its arguments itself (rsync `-e`): read as a command line, like `sh -c`.
 * - `program`: one program, run by name without a shell (sort `--compress-program`).
 * - `script`: a file whose contents the program runs as commands or code (`awk -f`, `less -k`,
 *   `man -C`, `ssh -F`, `bash --rcfile`): code that is not part of the call.
 * - `code`: code in the program's own language, which can run commands (`vim -c`, `gdb -ex`).
 * - `read` / `write`: a file (or a directory) it reads / writes (`sort -o`, `date -f`).
 * - `anywhere` (a flag): it writes the files its input names, wherever they are (`tar -P`).
 */

export type Effect = "command" | "program" | "script" | "code" | "read" | "write" | "anywhere";

export interface OptionFact {
  does: Effect;
  /** The value counts only when it starts with this (`exec=` of tar's `--checkpoint-action`). */
  prefix?: string;
  /** What it runs reads the program's data on its standard input (sort's compressor). */
  data?: boolean;
  /**
   * Words the program adds after the value (rsync's remote command); `<name>` stands for a word
   * known only at run time (zip's archive, rsync's host).
   */
  appends?: readonly string[];
  /** A `Key=value` option (ssh `-o`): what each key's value is; other keys do nothing of note. */
  keys?: Readonly<Record<string, Effect>>;
}

export interface ProgramFacts {
  /** Short options that take a value (getopt's `x:`), besides those in `options`. */
  short?: string;
  /** Short options whose value is optional and only attached (getopt's `x::`: `man -Hfirefox`). */
  optional?: string;
  /** Long options that take a value, besides those in `options`. */
  long?: readonly string[];
  /** Long options whose value is optional (`--html[=browser]`). */
  optionalLong?: readonly string[];
  /** Other long options, so that an abbreviation (`--compress-prog`) resolves as getopt does. */
  flags?: readonly string[];
  /** Options are whole words after one dash (find's `-fprint`, gdb's `-ex`). */
  words?: boolean;
  /** Options end at the first operand (getopt's `+`): what follows is a command or its operands. */
  stopAtOperand?: boolean;
  /** The first word may be a cluster of option letters without a dash (`tar xIf sh a.tgz`). */
  oldStyle?: boolean;
  /** Each option with an effect: `-I`, `--use-compress-program`, `+` for a `+word`. */
  options: Readonly<Record<string, OptionFact>>;
  /** It reads commands from its standard input, and a line matching `runs` runs one. */
  input?: { what: string; runs: RegExp };
  /** Options that make it read commands from its input (`sdiff -o`); without them it does not. */
  inputWith?: readonly string[];
}

const COMMAND: OptionFact = { does: "command" };
const DATA_COMMAND: OptionFact = { does: "command", data: true };
const PROGRAM: OptionFact = { does: "program" };
const SCRIPT: OptionFact = { does: "script" };
const CODE: OptionFact = { does: "code" };
const READ: OptionFact = { does: "read" };
const WRITE: OptionFact = { does: "write" };

/** ssh's settings (`-o Key=value`, and lines of an `-F` file) whose value runs something. */
const SSH_KEYS: Readonly<Record<string, Effect>> = {
  proxycommand: "command",
  localcommand: "command",
  knownhostscommand: "command",
  pkcs11provider: "script",
  securitykeyprovider: "script",
  include: "script",
  identityfile: "read",
  userknownhostsfile: "read",
  controlpath: "write",
};

const SSH_OPTION: OptionFact = { does: "code", keys: SSH_KEYS };

/** Programs that read their code as a file of this language are read by their own readers. */
export const PROGRAM_FACTS: Readonly<Record<string, ProgramFacts>> = {
  tar: {
    short: "bCfHKLNTVX",
    long: [
      "blocking-factor",
      "directory",
      "file",
      "format",
      "starting-file",
      "tape-length",
      "newer",
      "after-date",
      "files-from",
      "label",
      "exclude-from",
      "exclude",
      "transform",
      "xform",
      "owner",
      "group",
      "mode",
      "mtime",
      "record-size",
      "suffix",
      "strip-components",
      "quoting-style",
      "volno-file",
      "owner-map",
      "group-map",
      "exclude-tag",
      "exclude-tag-all",
      "exclude-tag-under",
      "exclude-ignore",
      "exclude-ignore-recursive",
      "newer-mtime",
      "pax-option",
      "sort",
      "warning",
      "hole-detection",
      "sparse-version",
      "add-file",
      "level",
    ],
    optionalLong: ["checkpoint", "occurrence", "backup", "atime-preserve"],
    flags: [
      "clamp-mtime",
      "create",
      "extract",
      "get",
      "list",
      "append",
      "update",
      "catenate",
      "concatenate",
      "delete",
      "diff",
      "compare",
      "to-stdout",
      "gzip",
      "gunzip",
      "bzip2",
      "xz",
      "lzip",
      "lzma",
      "lzop",
      "zstd",
      "compress",
      "uncompress",
      "auto-compress",
      "verbose",
      "keep-old-files",
      "keep-newer-files",
      "overwrite",
      "totals",
      "checkpoint",
      "no-recursion",
      "recursion",
      "preserve-permissions",
      "same-permissions",
      "numeric-owner",
      "dereference",
      "ignore-zeros",
      "verify",
      "wildcards",
      "null",
      "show-transformed-names",
    ],
    oldStyle: true,
    options: {
      "-I": DATA_COMMAND,
      "--use-compress-program": DATA_COMMAND,
      "--to-command": DATA_COMMAND,
      "-F": COMMAND,
      "--info-script": COMMAND,
      "--new-volume-script": COMMAND,
      "--checkpoint-action": { does: "command", prefix: "exec=" },
      "--rsh-command": { does: "program", appends: ["<host>", "/etc/rmt"] },
      "--rmt-command": PROGRAM,
      "-g": WRITE,
      "--listed-incremental": WRITE,
      "--index-file": WRITE,
      "-P": { does: "anywhere" },
      "--absolute-names": { does: "anywhere" },
    },
  },
  sort: {
    short: "kStT",
    long: ["key", "buffer-size", "field-separator", "batch-size", "parallel", "sort"],
    flags: [
      "check",
      "merge",
      "numeric-sort",
      "reverse",
      "unique",
      "stable",
      "zero-terminated",
      "debug",
      "general-numeric-sort",
      "human-numeric-sort",
      "month-sort",
      "random-sort",
      "version-sort",
      "ignore-case",
      "ignore-leading-blanks",
      "dictionary-order",
      "ignore-nonprinting",
    ],
    options: {
      "--compress-program": { does: "program", data: true, appends: [] },
      "-o": WRITE,
      "--output": WRITE,
      "-T": WRITE,
      "--temporary-directory": WRITE,
      "--files0-from": READ,
      "--random-source": READ,
    },
  },
  shuf: {
    short: "in",
    long: ["input-range", "head-count"],
    flags: ["echo", "repeat", "zero-terminated"],
    options: { "-o": WRITE, "--output": WRITE, "--random-source": READ },
  },
  split: {
    short: "abClnt",
    long: ["suffix-length", "bytes", "line-bytes", "lines", "number", "separator", "additional-suffix"],
    optionalLong: ["numeric-suffixes", "hex-suffixes"],
    flags: ["elide-empty-files", "unbuffered", "verbose"],
    options: { "--filter": DATA_COMMAND },
  },
  csplit: {
    short: "bn",
    long: ["suffix-format", "digits"],
    flags: ["keep-files", "suppress-matched", "quiet", "silent", "elide-empty-files"],
    options: { "-f": WRITE, "--prefix": WRITE },
  },
  iconv: {
    short: "ft",
    long: ["from-code", "to-code"],
    options: { "-o": WRITE, "--output": WRITE },
  },
  date: {
    short: "dIs",
    long: ["date", "set", "iso-8601", "rfc-3339"],
    optionalLong: ["iso-8601"],
    options: { "-f": READ, "--file": READ, "-r": READ, "--reference": READ },
  },
  touch: {
    short: "dt",
    long: ["date", "time"],
    options: { "-r": READ, "--reference": READ },
  },
  file: {
    short: "eFP",
    long: ["exclude", "separator", "parameter"],
    options: { "-m": READ, "--magic-file": READ, "-f": READ, "--files-from": READ },
  },
  du: {
    short: "BdtX",
    long: ["block-size", "max-depth", "threshold", "time-style", "exclude"],
    options: { "-X": READ, "--exclude-from": READ, "--files0-from": READ },
  },
  wc: { options: { "--files0-from": READ } },
  hexdump: {
    short: "nse",
    long: ["length", "skip", "format"],
    options: { "-f": READ, "--format-file": READ },
  },
  cp: {
    short: "S",
    long: ["suffix", "sparse", "reflink", "preserve", "no-preserve", "backup"],
    options: { "-t": WRITE, "--target-directory": WRITE },
  },
  mv: {
    short: "S",
    long: ["suffix", "backup"],
    options: { "-t": WRITE, "--target-directory": WRITE },
  },
  ln: {
    short: "S",
    long: ["suffix", "backup"],
    options: { "-t": WRITE, "--target-directory": WRITE },
  },
  mktemp: { options: { "-p": WRITE, "--tmpdir": WRITE } },
  truncate: { short: "s", long: ["size"], options: { "-r": READ, "--reference": READ } },
  grep: {
    short: "eABCmdD",
    long: [
      "regexp",
      "after-context",
      "before-context",
      "context",
      "max-count",
      "directories",
      "devices",
      "label",
      "binary-files",
      "include",
      "exclude",
      "exclude-dir",
    ],
    optionalLong: ["color", "colour"],
    options: { "-f": READ, "--file": READ, "--exclude-from": READ },
  },
  jq: {
    short: "L",
    long: ["arg", "argjson", "indent", "tab"],
    options: { "-f": READ, "--from-file": READ },
  },
  diff: {
    short: "xXIFLSCUWD",
    long: [
      "exclude",
      "ignore-matching-lines",
      "show-function-line",
      "label",
      "starting-file",
      "width",
      "ifdef",
      "horizon-lines",
      "palette",
      "tabsize",
      "line-format",
      "old-line-format",
      "new-line-format",
      "unchanged-line-format",
      "old-group-format",
      "new-group-format",
      "changed-group-format",
      "unchanged-group-format",
    ],
    optionalLong: ["context", "unified", "color"],
    options: { "-X": READ, "--exclude-from": READ, "--from-file": READ, "--to-file": READ },
  },
  sdiff: {
    short: "IwW",
    long: ["ignore-matching-lines", "width", "tabsize"],
    options: { "--diff-program": PROGRAM, "-o": WRITE, "--output": WRITE },
    // With an output file sdiff asks, line by line, what to keep: `e` runs an editor.
    input: { what: "sdiff -o's merge commands, where `e` runs an editor", runs: /^\s*e/m },
    inputWith: ["-o", "--output"],
  },
  diff3: {
    short: "L",
    long: ["label"],
    options: { "--diff-program": PROGRAM },
  },
  find: {
    words: true,
    long: [
      "name",
      "iname",
      "path",
      "ipath",
      "wholename",
      "iwholename",
      "regex",
      "iregex",
      "regextype",
      "lname",
      "ilname",
      "type",
      "xtype",
      "user",
      "group",
      "uid",
      "gid",
      "perm",
      "size",
      "mtime",
      "mmin",
      "atime",
      "amin",
      "ctime",
      "cmin",
      "maxdepth",
      "mindepth",
      "newer",
      "anewer",
      "cnewer",
      "samefile",
      "links",
      "inum",
      "used",
      "fstype",
      "context",
      "printf",
      "D",
    ],
    options: {
      "-fprint": WRITE,
      "-fprint0": WRITE,
      "-fls": WRITE,
      "-fprintf": WRITE,
      "-files0-from": READ,
    },
  },
  xargs: {
    short: "adEILnPs",
    optional: "eil",
    long: ["delimiter", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var"],
    optionalLong: ["eof", "replace"],
    stopAtOperand: true,
    options: { "-a": READ, "--arg-file": READ },
  },
  zip: {
    words: true,
    long: ["-b", "-n", "-P", "-t", "-tt", "-x", "-i", "-s", "-sp", "-sv", "-Z", "-ll"],
    options: {
      // zip runs the test command with `sh -c`, the archive's temporary name added ({} puts it elsewhere).
      "-TT": { does: "command", appends: ["<archive>"] },
      "--unzip-command": { does: "command", appends: ["<archive>"] },
      "-O": WRITE,
      "--output-file": WRITE,
      "-la": WRITE,
      "-lf": WRITE,
      "--logfile-path": WRITE,
    },
  },
  unzip: {
    short: "dxIO",
    options: {
      // unzip keeps `../` in member names with -: (and absolute ones with -:), writing anywhere.
      "-:": { does: "anywhere" },
    },
  },
  cpio: {
    short: "CEHIMORV",
    long: ["block-size", "pattern-file", "format", "message", "owner", "rename-batch-file"],
    options: {
      "--rsh-command": { does: "program", appends: ["<host>", "/etc/rmt"] },
      "-F": WRITE,
      "--file": WRITE,
      "-E": READ,
      "--pattern-file": READ,
    },
  },
  rsync: {
    short: "BfMT",
    long: [
      "block-size",
      "filter",
      "remote-option",
      "exclude",
      "include",
      "chmod",
      "timeout",
      "contimeout",
      "bwlimit",
      "port",
      "max-size",
      "min-size",
      "max-delete",
      "modify-window",
      "compress-level",
      "compress-choice",
      "checksum-choice",
      "skip-compress",
      "suffix",
      "out-format",
      "log-file-format",
      "info",
      "debug",
      "usermap",
      "groupmap",
      "chown",
      "iconv",
      "sockopts",
      "address",
      "protocol",
      "outbuf",
      "partial-dir",
      "stop-after",
      "stop-at",
    ],
    options: {
      // rsync starts `CMD host rsync --server ...`; --rsync-path is that remote command.
      "-e": { does: "command", appends: ["<host>", "rsync", "--server"] },
      "--rsh": { does: "command", appends: ["<host>", "rsync", "--server"] },
      "--rsync-path": COMMAND,
      "--config": SCRIPT,
      "--files-from": READ,
      "--exclude-from": READ,
      "--include-from": READ,
      "--password-file": READ,
      "--read-batch": READ,
      "--early-input": READ,
      "--log-file": WRITE,
      "--write-batch": WRITE,
      "--only-write-batch": WRITE,
      "--temp-dir": WRITE,
      "--backup-dir": WRITE,
    },
  },
  ssh: {
    short: "BbcDEeIiJLlmOpQRSWw",
    options: {
      "-o": SSH_OPTION,
      "-F": SCRIPT,
      "-E": WRITE,
      "-I": SCRIPT,
      "-i": READ,
    },
  },
  scp: {
    short: "cJlMPX",
    options: { "-o": SSH_OPTION, "-S": PROGRAM, "-D": PROGRAM, "-F": SCRIPT, "-i": READ },
  },
  sftp: {
    short: "BcJlPRsX",
    options: {
      "-o": SSH_OPTION,
      "-S": PROGRAM,
      "-D": PROGRAM,
      "-F": SCRIPT,
      // Its batch file's `!command` lines run in a local shell.
      "-b": SCRIPT,
      "-i": READ,
    },
  },
  less: {
    short: "bhjpPtTxyz#D",
    long: [
      "buffers",
      "max-back-scroll",
      "jump-target",
      "pattern",
      "prompt",
      "tag",
      "tag-file",
      "tabs",
      "window",
      "max-forw-scroll",
      "shift",
      "line-num-width",
      "status-col-width",
      "color",
      "header",
      "rscroll",
    ],
    options: {
      // A lesskey file's #env section sets LESSOPEN, VISUAL, ...: commands less runs.
      "-k": SCRIPT,
      "--lesskey-file": SCRIPT,
      "--lesskey-src": SCRIPT,
      "--lesskey-content": CODE,
      "-o": WRITE,
      "--log-file": WRITE,
      "-O": WRITE,
      "--LOG-FILE": WRITE,
    },
  },
  man: {
    short: "eELmMprRsS",
    optional: "TXH",
    long: [
      "extension",
      "encoding",
      "locale",
      "systems",
      "manpath",
      "preprocessor",
      "prompt",
      "recode",
      "sections",
    ],
    optionalLong: ["troff-device", "gxditview", "html"],
    options: {
      "-P": COMMAND,
      "--pager": COMMAND,
      "-H": COMMAND,
      "--html": COMMAND,
      // man-db's configuration names the pager, browser and formatters it runs (DEFINE).
      "-C": SCRIPT,
      "--config-file": SCRIPT,
    },
  },
  watch: {
    short: "nq",
    optional: "d",
    long: ["interval", "equexit"],
    optionalLong: ["differences"],
    stopAtOperand: true,
    options: { "-s": WRITE, "--shotsdir": WRITE },
  },
  script: {
    short: "Em",
    long: ["echo", "logging-format", "output-limit"],
    options: {
      "-c": COMMAND,
      "--command": COMMAND,
      "-I": WRITE,
      "--log-in": WRITE,
      "-O": WRITE,
      "--log-out": WRITE,
      "-B": WRITE,
      "--log-io": WRITE,
      "-T": WRITE,
      "--log-timing": WRITE,
    },
  },
  su: {
    short: "gGw",
    long: ["group", "supp-group", "whitelist-environment"],
    stopAtOperand: true,
    options: {
      "-c": COMMAND,
      "--command": COMMAND,
      "--session-command": COMMAND,
      "-s": PROGRAM,
      "--shell": PROGRAM,
    },
  },
  strace: {
    short: "abeIpPsuEXU",
    options: { "-o": { does: "write" }, "--output": WRITE },
    stopAtOperand: true,
  },
  ltrace: { short: "aeEnpsuxlF", options: { "-o": WRITE, "--output": WRITE }, stopAtOperand: true },
  time: { short: "f", long: ["format"], options: { "-o": WRITE, "--output": WRITE }, stopAtOperand: true },
  gdb: {
    words: true,
    long: [
      "-p",
      "-pid",
      "-cd",
      "-d",
      "-directory",
      "-s",
      "-symbols",
      "-e",
      "-exec",
      "-se",
      "-c",
      "-core",
      "-tty",
    ],
    options: {
      "-ex": CODE,
      "-eval-command": CODE,
      "--eval-command": CODE,
      "-iex": CODE,
      "-init-eval-command": CODE,
      "-x": SCRIPT,
      "-command": SCRIPT,
      "--command": SCRIPT,
      "-ix": SCRIPT,
      "-init-command": SCRIPT,
    },
  },
  vim: {
    short: "iorTuUVw",
    options: {
      "-c": CODE,
      "--cmd": CODE,
      "+": CODE,
      "-S": SCRIPT,
      "-u": SCRIPT,
      "-s": SCRIPT,
      "-w": WRITE,
      "-W": WRITE,
      "--startuptime": WRITE,
    },
  },
  ed: {
    short: "p",
    long: ["prompt"],
    options: {},
    input: { what: "ed commands, where `!` runs a shell command", runs: /!/ },
  },
  openssl: {
    words: true,
    options: { "-engine": SCRIPT, "-provider-path": SCRIPT, "-out": WRITE, "-in": READ },
  },
  aria2c: {
    options: {
      "--on-download-complete": PROGRAM,
      "--on-download-error": PROGRAM,
      "--on-download-start": PROGRAM,
      "--on-download-pause": PROGRAM,
      "--on-download-stop": PROGRAM,
      "--on-bt-download-complete": PROGRAM,
      "--conf-path": SCRIPT,
    },
  },
  wget: {
    short: "eoaOPtTwQUYiB",
    options: { "--use-askpass": PROGRAM, "-i": READ, "--input-file": READ, "--config": SCRIPT },
  },
  curl: {
    options: { "-K": SCRIPT, "--config": SCRIPT },
  },
  make: {
    short: "CIjlWo",
    options: { "-f": SCRIPT, "--file": SCRIPT, "--makefile": SCRIPT, "--eval": CODE },
  },
  bash: {
    short: "oO",
    stopAtOperand: true,
    options: { "--rcfile": SCRIPT, "--init-file": SCRIPT },
  },
  pip: { options: { "--editor": COMMAND } },
  "apt-get": {
    short: "ct",
    options: { "-o": CODE, "--option": CODE, "-c": SCRIPT, "--config-file": SCRIPT },
  },
  awk: { short: "Fv", options: { "-f": SCRIPT, "--file": SCRIPT } },
  mawk: { short: "FvW", options: { "-f": SCRIPT } },
  nawk: { short: "Fv", options: { "-f": SCRIPT } },
  gawk: {
    short: "Fv",
    long: ["field-separator", "assign"],
    options: {
      "-f": SCRIPT,
      "--file": SCRIPT,
      "-i": SCRIPT,
      "--include": SCRIPT,
      "-l": SCRIPT,
      "--load": SCRIPT,
      "-E": SCRIPT,
      "--exec": SCRIPT,
    },
  },
  sed: {
    short: "el",
    optional: "i",
    long: ["expression", "line-length"],
    optionalLong: ["in-place"],
    options: { "-f": SCRIPT, "--file": SCRIPT },
  },
  tmux: { short: "LSTf", options: { "-c": COMMAND, "-f": SCRIPT } },
};

/**
 * Environment variables that hand a program a command, a program, a file of code, or options
 * (`TAR_OPTIONS`): setting one is running code the call does not show.
 */
export const VARIABLE_FACTS: Readonly<Record<string, { does: Effect | "options"; of: string }>> = {
  LESSOPEN: { does: "command", of: "less" },
  LESSCLOSE: { does: "command", of: "less" },
  LESSKEY: { does: "script", of: "less" },
  LESSKEYIN: { does: "script", of: "less" },
  LESSKEY_SYSTEM: { does: "script", of: "less" },
  LESSKEYIN_SYSTEM: { does: "script", of: "less" },
  LESSKEY_CONTENT: { does: "code", of: "less" },
  LESS: { does: "options", of: "less" },
  LESSEDIT: { does: "command", of: "less" },
  VISUAL: { does: "command", of: "less, git, crontab, sdiff" },
  EDITOR: { does: "command", of: "less, git, crontab, sdiff" },
  PAGER: { does: "command", of: "man, git, systemctl" },
  MANPAGER: { does: "command", of: "man" },
  BROWSER: { does: "command", of: "man -H, git help -w" },
  MANOPT: { does: "options", of: "man" },
  MANROFFOPT: { does: "options", of: "man" },
  SYSTEMD_PAGER: { does: "command", of: "systemctl, journalctl" },
  SYSTEMD_EDITOR: { does: "command", of: "systemctl edit" },
  TAR_OPTIONS: { does: "options", of: "tar" },
  ZIPOPT: { does: "options", of: "zip" },
  UNZIP: { does: "options", of: "unzip" },
  UNZIPOPT: { does: "options", of: "unzip" },
  RSYNC_RSH: { does: "command", of: "rsync" },
  RSYNC_CONNECT_PROG: { does: "command", of: "rsync" },
  GIT_SSH: { does: "program", of: "git" },
  GIT_SSH_COMMAND: { does: "command", of: "git" },
  GIT_PAGER: { does: "command", of: "git" },
  GIT_EDITOR: { does: "command", of: "git" },
  GIT_SEQUENCE_EDITOR: { does: "command", of: "git" },
  GIT_EXTERNAL_DIFF: { does: "command", of: "git" },
  GIT_ASKPASS: { does: "program", of: "git" },
  SSH_ASKPASS: { does: "program", of: "ssh" },
  SUDO_ASKPASS: { does: "program", of: "sudo" },
  GIT_PROXY_COMMAND: { does: "command", of: "git" },
  CRASHPAGER: { does: "command", of: "crash" },
  PERL5DB: { does: "code", of: "perl -d" },
  PYTHONBREAKPOINT: { does: "code", of: "python3" },
  PYTHONINSPECT: { does: "code", of: "python3" },
  AUTOM4TE: { does: "program", of: "autoconf" },
  GROFF_BIN_PATH: { does: "program", of: "groff, man" },
  RESTIC_PASSWORD_COMMAND: { does: "command", of: "restic" },
  FCEDIT: { does: "command", of: "fc" },
  TERMINAL: { does: "program", of: "xdg-open" },
};
