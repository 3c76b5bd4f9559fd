/**
 * The review of a server's launch that `mcpguard wrap` prints before it starts anything: what a
 * careful operator looks for in a client config before letting it run.
 *
 *  high    code the config itself carries or fetches (inline evaluation, a shell with
 *          metacharacters, `curl | sh`), a container with the host's powers, a program that
 *          others can rewrite, sudo. wrap refuses these without --yes: a person says yes.
 *  medium  something that changes under you or leaks: a package runner without a pinned version
 *          (each start may install another release than the one reviewed), a literal secret in
 *          the file or on the command line, a shell between the client and the server, a
 *          program not found here, a launcher L3 cannot resolve.
 *  low     worth knowing: which file a bare command name resolves to through PATH here.
 *
 * Secret values are never printed: a finding names the variable or the argument's position and
 * the kind of key it looks like.
 */
import { accessSync, constants, existsSync, realpathSync, statSync } from "node:fs";
import { basename, delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { secretName } from "@mcpguard/policy";

export type Severity = "high" | "medium" | "low";

export interface Finding {
  severity: Severity;
  rule: string;
  reason: string;
}

export interface LaunchToScan {
  command: string;
  args: readonly string[];
  env?: Readonly<Record<string, string | number | null>>;
  /** Where the server starts (for relative scripts), and the PATH it is looked up on. */
  cwd: string;
  path: string | undefined;
  /** The config the wrapped entry runs: L3 cannot start some launchers. */
  kernel: boolean;
}

export const SEVERITIES: readonly Severity[] = ["high", "medium", "low"];

/** Known key formats, by what they look like. */
const KEY_FORMATS: [RegExp, string][] = [
  [/^gh[pousr]_[A-Za-z0-9]{30,}$/, "GitHub token"],
  [/^github_pat_[A-Za-z0-9_]{40,}$/, "GitHub fine-grained token"],
  [/^glpat-[A-Za-z0-9_-]{20,}$/, "GitLab token"],
  [/^sk-ant-[A-Za-z0-9_-]{20,}$/, "Anthropic API key"],
  [/^sk-(proj-)?[A-Za-z0-9_-]{20,}$/, "OpenAI-style API key"],
  [/^(AKIA|ASIA)[0-9A-Z]{16}$/, "AWS access key id"],
  [/^xox[abposr]-[A-Za-z0-9-]{10,}$/, "Slack token"],
  [/^AIza[0-9A-Za-z_-]{35}$/, "Google API key"],
  [/^npm_[A-Za-z0-9]{36}$/, "npm token"],
  [/^(sk|rk)_live_[A-Za-z0-9]{20,}$/, "Stripe live key"],
  [/^-----BEGIN [A-Z ]*PRIVATE KEY-----/, "private key"],
  [/^eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]+$/, "JSON web token"],
  [/^[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:[^/\s@]+@/, "URL with a password"],
];

function keyKind(value: string): string | undefined {
  return KEY_FORMATS.find(([re]) => re.test(value))?.[1];
}

/** An option whose value is a secret: `--api-key`, `--token`, `--password`, `-p` is not one. */
const SECRET_OPTION = /^--?[\w-]*(token|api-?key|secret|passw(or)?d|credential|auth)[\w-]*$/i;

/** The positions of the arguments that hold a secret (by their option, or their shape), with what they are. */
export function secretArgs(args: readonly string[]): Map<number, string> {
  const found = new Map<number, string>();
  args.forEach((arg, i) => {
    const eq = arg.indexOf("=");
    const kind = keyKind(arg) ?? (eq > 0 ? keyKind(arg.slice(eq + 1)) : undefined);
    if (kind) found.set(i, kind);
    else if (eq > 0 && SECRET_OPTION.test(arg.slice(0, eq)) && !REFERENCE.test(arg.slice(eq + 1)))
      found.set(i, `value of ${arg.slice(0, eq)}`);
    else if (
      i > 0 &&
      SECRET_OPTION.test(args[i - 1] as string) &&
      !arg.startsWith("-") &&
      !REFERENCE.test(arg)
    )
      found.set(i, `value of ${args[i - 1]}`);
  });
  return found;
}

/** A value the client fills in at start (`${input:x}`, `${env:X}`, `${X}`): no literal secret. */
const REFERENCE = /^\$\{[^}]+\}$/;

const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "ash", "fish", "mksh", "busybox"]);
const SHELL_META = /[;&|`$<>(){}*?!\n\\]/;
const PYTHON = /^(python(\d(\.\d+)?)?|pypy\d?)$/;
const NODE = new Set(["node", "nodejs", "bun"]);

/** Leading `env [-i] [NAME=value]...` and `exec` stripped: the program that really runs. */
function unwrapPrefix(argv: readonly string[]): readonly string[] {
  let rest = argv;
  for (;;) {
    const name = basename(rest[0] ?? "");
    if (name === "env") {
      let i = 1;
      while (i < rest.length && (/^-/.test(rest[i] as string) || /^[A-Za-z_]\w*=/.test(rest[i] as string)))
        i++;
      rest = rest.slice(i);
    } else if (name === "exec" || name === "nohup") rest = rest.slice(1);
    else return rest;
  }
}

/** Whether `word` is a short-option cluster containing `letter` (`-pe`, `-Bc`), or the option itself. */
function shortHas(word: string, letters: string): boolean {
  return /^-[A-Za-z]+$/.test(word) && [...letters].some((l) => word.slice(1).includes(l));
}

function inlineEval(argv: readonly string[]): Finding[] {
  const [program = "", ...rest] = argv;
  const name = basename(program)
    .toLowerCase()
    .replace(/\.exe$/, "");
  const found = (how: string, code: string | undefined, severity: Severity = "high"): Finding[] => [
    {
      severity,
      rule: "inline-eval",
      reason: `${how} runs code written in the config (${code === undefined ? "no code given" : `${code.length} characters`}): no file to review, pin or confine by its path`,
    },
  ];
  if (NODE.has(name)) {
    for (let i = 0; i < rest.length; i++) {
      const word = rest[i] as string;
      if (!word.startsWith("-")) break;
      if (/^--(eval|print)(=|$)/.test(word) || shortHas(word, "ep"))
        return found(`${name} ${word}`, word.includes("=") ? word.split("=")[1] : rest[i + 1]);
    }
  }
  if (name === "deno" && rest[0] === "eval") return found("deno eval", rest.at(-1));
  if (PYTHON.test(name)) {
    for (let i = 0; i < rest.length; i++) {
      const word = rest[i] as string;
      if (!word.startsWith("-")) break;
      if (shortHas(word, "c")) return found(`${name} -c`, rest[i + 1]);
      if (word === "-m" || word === "-X" || word === "-W") i++;
    }
  }
  if (name === "perl" || name === "ruby") {
    const at = rest.findIndex((w) => shortHas(w, "eE"));
    if (at !== -1) return found(`${name} ${rest[at]}`, rest[at + 1]);
  }
  if (name === "php" && rest.includes("-r")) return found("php -r", rest[rest.indexOf("-r") + 1]);
  if (SHELLS.has(name)) {
    const at = rest.findIndex((w) => shortHas(w, "c") && !w.startsWith("--"));
    if (at !== -1) {
      const code = rest[at + 1] ?? "";
      return SHELL_META.test(code)
        ? found(`${name} ${rest[at]} with shell metacharacters`, code)
        : [
            {
              severity: "medium",
              rule: "shell",
              reason: `${name} ${rest[at]} puts a shell between the client and the server: its words are read as shell, not as arguments`,
            },
          ];
    }
  }
  if (name === "pwsh" || name === "powershell") {
    const at = rest.findIndex((w) => /^-(c|command|e|ec|encodedcommand)$/i.test(w));
    if (at !== -1) return found(`${name} ${rest[at]}`, rest[at + 1]);
  }
  if (name === "cmd" && rest.some((w) => /^\/[ck]$/i.test(w))) return found("cmd /c", rest.at(-1));
  return [];
}

/** `curl ... | sh`, `sh -c "$(curl ...)"`, `bash <(wget ...)` anywhere on the command line. */
function pipeToShell(argv: readonly string[]): Finding[] {
  const text = argv.join(" ");
  const fetch = String.raw`(curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod)\b`;
  const piped = new RegExp(
    `${fetch}[^|]*\\|\\s*(sudo\\s+)?(ba|z|da|k|fi)?sh\\b|${fetch}[^|]*\\|\\s*(python\\d?|node|perl|ruby|iex)\\b|\\$\\(\\s*${fetch}|<\\(\\s*${fetch}`,
    "i",
  );
  return piped.test(text)
    ? [
        {
          severity: "high",
          rule: "pipe-to-shell",
          reason: "downloads code and runs it at every start: what runs is whatever the URL serves that day",
        },
      ]
    : [];
}

const EXACT_VERSION = /^v?\d+\.\d+\.\d+(?:[-+][\w.-]+)?$/;

/** Whether a package spec names one release: `pkg@1.2.3`, `@scope/pkg@1.2.3`, `pkg==1.2.3`. */
function pinned(spec: string): "pinned" | "unpinned" | "source" {
  if (/^(\.{0,2}\/|file:|~\/)/.test(spec)) return "pinned"; // a local path: no registry involved
  if (/^(git\+|github:|gitlab:|bitbucket:|https?:)/.test(spec) || /^[\w-]+\/[\w.-]+(#.*)?$/.test(spec)) {
    return /#[0-9a-f]{40}$/.test(spec) || /@sha256:/.test(spec) ? "pinned" : "source";
  }
  const pep = /^[A-Za-z0-9_.[\],-]+===?\s*([^,;<>!~*]+)$/.exec(spec);
  if (pep) return EXACT_VERSION.test((pep[1] as string).trim()) ? "pinned" : "unpinned";
  const at = spec.lastIndexOf("@");
  if (at <= 0) return "unpinned";
  return EXACT_VERSION.test(spec.slice(at + 1)) ? "pinned" : "unpinned";
}

interface Runner {
  name: string;
  /** Options whose value is the package spec. */
  specOptions: Set<string>;
  /** Options that take a value that is not the spec. */
  valued: Set<string>;
  autoInstall?: (words: readonly string[]) => boolean;
}

function runnerOf(argv: readonly string[]): { runner: Runner; words: readonly string[] } | undefined {
  const [program = "", ...rest] = argv;
  const name = basename(program).replace(/\.(cmd|exe)$/i, "");
  const npm: Runner = {
    name: "npx",
    specOptions: new Set(["-p", "--package"]),
    valued: new Set(["--registry", "--cache", "--userconfig", "--loglevel", "-c", "--call"]),
    autoInstall: (words) => words.some((w) => w === "-y" || w === "--yes"),
  };
  if (name === "npx") return { runner: npm, words: rest };
  if (name === "npm" && (rest[0] === "exec" || rest[0] === "x"))
    return { runner: { ...npm, name: `npm ${rest[0]}` }, words: rest.slice(1) };
  const uv: Runner = {
    name: "uvx",
    specOptions: new Set(["--from"]),
    valued: new Set([
      "--with",
      "--python",
      "-p",
      "--index",
      "--index-url",
      "--extra-index-url",
      "--directory",
    ]),
  };
  if (name === "uvx") return { runner: uv, words: rest };
  if (name === "uv" && rest[0] === "tool" && rest[1] === "run")
    return { runner: { ...uv, name: "uv tool run" }, words: rest.slice(2) };
  if (name === "pipx" && rest[0] === "run")
    return {
      runner: {
        name: "pipx run",
        specOptions: new Set(["--spec"]),
        valued: new Set(["--python", "--index-url"]),
      },
      words: rest.slice(1),
    };
  const bun: Runner = { name: "bunx", specOptions: new Set(["-p", "--package"]), valued: new Set() };
  if (name === "bunx") return { runner: bun, words: rest };
  if (name === "bun" && rest[0] === "x") return { runner: { ...bun, name: "bun x" }, words: rest.slice(1) };
  const dlx: Runner = { name: "pnpm dlx", specOptions: new Set(["--package"]), valued: new Set() };
  if (name === "pnpx") return { runner: { ...dlx, name: "pnpx" }, words: rest };
  if ((name === "pnpm" || name === "yarn") && rest[0] === "dlx")
    return { runner: { ...dlx, name: `${name} dlx` }, words: rest.slice(1) };
  return undefined;
}

function packageRunner(argv: readonly string[], kernel: boolean): Finding[] {
  const found = runnerOf(argv);
  if (!found) return [];
  const { runner, words } = found;
  const specs: string[] = [];
  let positional: string | undefined;
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    if (word === "--") {
      positional = words[i + 1];
      break;
    }
    const [option = "", inline] = word.startsWith("--") ? word.split(/=(.*)/s) : [word];
    if (runner.specOptions.has(option)) {
      const value = inline ?? words[++i];
      if (value !== undefined) specs.push(value);
    } else if (runner.valued.has(option)) {
      if (inline === undefined) i++;
    } else if (!word.startsWith("-")) {
      positional = word;
      break;
    }
  }
  if (specs.length === 0 && positional !== undefined) specs.push(positional);
  const findings: Finding[] = [];
  const auto = runner.autoInstall?.(words) ? ", installed without asking (-y)," : "";
  for (const spec of specs) {
    const state = pinned(spec);
    if (state === "unpinned")
      findings.push({
        severity: "medium",
        rule: "unpinned-package",
        reason: `${runner.name} ${spec}${auto} has no exact version: each start may install another release than the one reviewed and pinned (write ${spec.replace(/@[^@/]*$/, "")}@<version>)`,
      });
    else if (state === "source")
      findings.push({
        severity: "medium",
        rule: "unpinned-package",
        reason: `${runner.name} ${spec} installs from a repository or URL, not a registry release: pin a commit or use a released version`,
      });
  }
  if (kernel && !["npx", "npm exec", "npm x", "uvx", "uv tool run"].includes(runner.name))
    findings.push({
      severity: "medium",
      rule: "l3-launcher",
      reason: `mcpguard run with L3 (C-full) does not resolve ${runner.name} before confinement and refuses to start it: start the installed program, or wrap this server with --config C-app`,
    });
  return findings;
}

/** Options of `docker run` that take a value (so their value is not the image). */
const DOCKER_VALUED =
  /^(-[evpwuhlm]|--(env|env-file|volume|mount|publish|workdir|user|hostname|label|memory|name|network|net|pid|ipc|userns|cap-add|cap-drop|security-opt|device|entrypoint|platform|add-host|cpus|dns|tmpfs|ulimit|restart|runtime|gpus|group-add|log-driver|log-opt|shm-size|uts|cgroupns|stop-signal|health-cmd|init-path))$/;
const HOST_PATHS = [
  "/",
  "/etc",
  "/root",
  "/home",
  "/var/run/docker.sock",
  "/run/docker.sock",
  "/proc",
  "/sys",
  "/dev",
  "/boot",
  "/usr",
  "/var",
];

function container(argv: readonly string[]): Finding[] {
  const name = basename(argv[0] ?? "");
  if (!["docker", "podman", "nerdctl"].includes(name) || argv[1] !== "run") return [];
  const findings: Finding[] = [];
  const add = (severity: Severity, reason: string) => findings.push({ severity, rule: "container", reason });
  const home = process.env.HOME;
  let image: string | undefined;
  const words = argv.slice(2);
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    const [option = "", inline] = word.startsWith("--") ? word.split(/=(.*)/s) : [word];
    const value = (): string => (inline ?? words[++i] ?? "") as string;
    if (option === "--privileged")
      add("high", `${name} run --privileged gives the container the host's devices and every capability`);
    else if (["--pid", "--ipc", "--userns", "--uts", "--network", "--net"].includes(option)) {
      const v = value();
      if (v === "host")
        add(
          option.startsWith("--net") ? "medium" : "high",
          `${name} run ${option}=host shares the host's ${option.replace(/^--/, "")} namespace`,
        );
    } else if (option === "--cap-add") {
      const v = value();
      add(
        /^(ALL|SYS_ADMIN|SYS_PTRACE|SYS_MODULE|DAC_READ_SEARCH|NET_ADMIN)$/i.test(v) ? "high" : "medium",
        `${name} run --cap-add ${v}`,
      );
    } else if (option === "--security-opt") {
      const v = value();
      if (/unconfined/.test(v))
        add("high", `${name} run --security-opt ${v} turns off the container's confinement`);
    } else if (option === "--device") add("medium", `${name} run --device ${value()} gives a host device`);
    else if (option === "-v" || option === "--volume" || option === "--mount") {
      const v = value();
      const source = option === "--mount" ? /(?:^|,)(?:source|src)=([^,]+)/.exec(v)?.[1] : v.split(":")[0];
      if (!source || !isAbsolute(source.replace(/^\$HOME|^~/, "/home"))) continue;
      const path = resolve(
        source.replace(/^~(?=\/|$)/, home ?? "~").replace(/^\$HOME(?=\/|$)/, home ?? "$HOME"),
      );
      const writable = !/:ro(,|$)|(^|,)(readonly|ro)(=true)?(,|$)/.test(v);
      if (HOST_PATHS.includes(path) || path === home)
        add("high", `${name} run mounts the host's ${path}${writable ? " writable" : " read-only"}`);
      else add("low", `${name} run mounts ${path}${writable ? " writable" : " read-only"}`);
    } else if (DOCKER_VALUED.test(option) && inline === undefined) i++;
    else if (!word.startsWith("-")) {
      image = word;
      break;
    }
  }
  if (image && !image.includes("@sha256:")) {
    const tag = /:([^/:]+)$/.exec(image)?.[1];
    if (!tag || tag === "latest")
      add(
        "medium",
        `image ${image} has no version tag or digest: each pull may run another image (write ${image.replace(/:latest$/, "")}:<tag>@sha256:<digest>)`,
      );
  }
  return findings;
}

function secrets(launch: LaunchToScan): Finding[] {
  const findings: Finding[] = [];
  for (const [name, raw] of Object.entries(launch.env ?? {})) {
    if (raw === null || raw === undefined) continue;
    const value = String(raw);
    if (REFERENCE.test(value) || value === "") continue;
    const kind = keyKind(value);
    if (kind || secretName(name))
      findings.push({
        severity: "medium",
        rule: "secret-in-config",
        reason: `env ${name} holds a literal ${kind ?? "secret"} in the config file: anything that reads the file has it (use the client's input or env references, or a file only you can read)`,
      });
  }
  for (const [i, kind] of secretArgs(launch.args))
    findings.push({
      severity: "medium",
      rule: "secret-in-args",
      reason: `argument ${i + 1} is ${/^value of/.test(kind) ? "the" : "a"} ${kind}: a command line is visible to every process of the machine (ps), and to anyone who reads the config`,
    });
  return findings;
}

/** The file execvp would run for `command`, or undefined. */
function lookPath(command: string, path: string | undefined, cwd: string): string | undefined {
  if (command.includes("/")) {
    const file = resolve(cwd, command);
    return existsSync(file) ? file : undefined;
  }
  for (const dir of (path ?? "").split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const file = join(dir, command);
    try {
      accessSync(file, constants.X_OK);
      if (statSync(file).isFile()) return file;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

function writableByOthers(file: string, what: string): Finding[] {
  const findings: Finding[] = [];
  let real: string;
  try {
    real = realpathSync(file);
  } catch {
    // A program that does not resolve has no file to look at; the launch check says it is missing.
    return [];
  }
  const uid = process.getuid?.();
  for (const [path, isDir] of [
    [real, false],
    [dirname(real), true],
  ] as const) {
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(path);
    } catch {
      // Absent: nothing to warn about there.
      continue;
    }
    const sticky = (st.mode & 0o1000) !== 0;
    if (st.mode & 0o002 && !(isDir && sticky))
      findings.push({
        severity: "high",
        rule: "writable-by-others",
        reason: `${what} ${isDir ? `is in ${path}, a folder` : path} every user can write: anyone here can change what the client runs`,
      });
    else if (st.mode & 0o020 && !(isDir && sticky) && st.uid !== 0 && st.uid !== uid)
      findings.push({
        severity: "medium",
        rule: "writable-by-others",
        reason: `${what} ${isDir ? `is in ${path}, a folder` : path} its group can write, owned by another user`,
      });
    else if (!isDir && uid !== undefined && st.uid !== 0 && st.uid !== uid)
      findings.push({
        severity: "medium",
        rule: "writable-by-others",
        reason: `${what} ${path} belongs to another user (uid ${st.uid}), who can change it`,
      });
  }
  return findings;
}

/** The script an interpreter runs (`node server.js`, `python -m` excluded), resolved. */
function scriptOf(argv: readonly string[], cwd: string): string | undefined {
  const [program = "", ...rest] = argv;
  const name = basename(program);
  if (!NODE.has(name) && !PYTHON.test(name) && !["deno", "perl", "ruby", "php", ...SHELLS].includes(name))
    return undefined;
  const words = name === "deno" && rest[0] === "run" ? rest.slice(1) : rest;
  for (const word of words) {
    if (word === "-m" || word === "-c" || word === "-e") return undefined;
    if (!word.startsWith("-")) return resolve(cwd, word);
  }
  return undefined;
}

export function scanLaunch(launch: LaunchToScan): Finding[] {
  const argv = unwrapPrefix([launch.command, ...launch.args]);
  const findings: Finding[] = [];
  const first = basename(argv[0] ?? "");
  if (first === "sudo" || first === "doas" || first === "pkexec")
    findings.push({
      severity: "high",
      rule: "sudo",
      reason: `${first} runs the server as another user (root): out of reach of the client's own limits`,
    });
  const program = first === "sudo" || first === "doas" ? argv.slice(1) : argv;
  findings.push(...inlineEval(program), ...pipeToShell(program), ...packageRunner(program, launch.kernel));
  findings.push(...container(program), ...secrets(launch));
  const command = launch.command;
  const exe = lookPath(command, launch.path, launch.cwd);
  if (!exe)
    findings.push({
      severity: "medium",
      rule: "not-found",
      reason: `${command} is not found ${command.includes("/") ? `(from ${launch.cwd})` : "on PATH"} here: the client cannot start it either, and wrap cannot derive its policy`,
    });
  else if (!isAbsolute(command))
    findings.push({
      severity: command.includes("/") ? "medium" : "low",
      rule: "relative-command",
      reason: command.includes("/")
        ? `${command} is relative to the folder the client starts it in: another folder runs another file`
        : `${command} is found through PATH (here: ${exe}); a client started from a desktop may have another PATH, and a folder earlier on it decides what runs`,
    });
  if (exe) findings.push(...writableByOthers(exe, "the program"));
  const script = scriptOf(program, launch.cwd);
  if (script && existsSync(script)) findings.push(...writableByOthers(script, "the script"));
  const rank = (s: Severity) => SEVERITIES.indexOf(s);
  return findings.sort((a, b) => rank(a.severity) - rank(b.severity));
}
