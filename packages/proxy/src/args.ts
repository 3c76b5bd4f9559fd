/**
 * The command line of every `mcpguard` command, on commander: one definition per command (its
 * options, their help and their arguments) gives the parsing, the `--help` text and the errors.
 * What commander reports is turned into a UsageError, which the CLI prints as one line.
 */
import { Command, CommanderError, type Help, Option } from "commander";

/** A problem with the command line: reported in one line, exit status 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

export interface OptionSpec {
  type: "string" | "boolean";
  short?: string;
  default?: string | boolean;
  /** The option may be given several times: its value is the list. */
  multiple?: boolean;
  /** The value's name in the help, as in `--trials <n>` (default: "value"). */
  value?: string;
  /** The values it may take; anything else is refused with the list. */
  choices?: readonly string[];
  /** What it does, for the help. An option without it is an alias and stays out of the help. */
  help?: string;
}
export type Options = Readonly<Record<string, OptionSpec>>;

export type OptionValues<O extends Options> = {
  -readonly [K in keyof O]: O[K] extends { type: "boolean" }
    ? boolean | undefined
    : O[K] extends { multiple: true }
      ? string[] | undefined
      : O[K] extends { default: string }
        ? string
        : string | undefined;
};

export interface Parsed<O extends Options> {
  values: OptionValues<O>;
  positionals: string[];
}

export interface CommandSpec<O extends Options> {
  /** The command as typed: "mcpguard bench latency". */
  name: string;
  /** What it does: the paragraph under the usage line. */
  description: string;
  options: O;
  /**
   * Its positional words in commander's notation, each with its help: `["<file>", "..."]`,
   * `["[dirs...]", "..."]`. None: a stray word is an error. `withCommand` commands take the server's
   * command instead (after `--`).
   */
  args?: readonly (readonly [string, string])[];
  /** Everything after `--` is a server's command (`run`, `pin`, `policy derive`, `policy export`). */
  withCommand?: "required" | "optional";
  /** More text after the options: formats, examples. */
  more?: string;
}

/** Help in the project's style: lower-case headings, as every usage line of the CLI reads. */
const HELP_CONFIG: Partial<Help> = {
  styleTitle: (title: string) => title.toLowerCase(),
  sortOptions: false,
};

/** A commander command that throws instead of exiting, and writes nothing. */
function quiet(command: Command): Command {
  return command
    .exitOverride()
    .configureHelp(HELP_CONFIG)
    .configureOutput({
      // The help is printed by defineCommand and dispatch themselves, with the text after the options.
      writeOut: () => undefined,
      writeErr: () => undefined,
      outputError: () => undefined,
    });
}

/** commander's "error: unknown option '--x'\n(Did you mean --y?)" as one line, without "error: ". */
function usageError(error: CommanderError): UsageError {
  return new UsageError(error.message.replace(/^error: /, "").replace(/\s*\n\s*/g, " "));
}

function optionOf(key: string, spec: OptionSpec): Option {
  const flags = `${spec.short ? `-${spec.short}, ` : ""}--${key}${spec.type === "string" ? ` <${spec.value ?? "value"}>` : ""}`;
  const option = new Option(flags, spec.help ?? "");
  if (spec.help === undefined) option.hideHelp();
  if (spec.choices) option.choices(spec.choices);
  if (spec.multiple)
    option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
  return option;
}

export interface CommandLine<O extends Options> {
  readonly spec: CommandSpec<O>;
  /** The values and positional words; `undefined` when `--help` was asked for (and printed). */
  parse(argv: string[]): (Parsed<O> & { command: string[] }) | undefined;
  /** The help text, as `--help` prints it. */
  help(): string;
}

export function defineCommand<const O extends Options>(spec: CommandSpec<O>): CommandLine<O> {
  const build = () => {
    const command = quiet(new Command(spec.name))
      .description(spec.description)
      .helpOption("-h, --help", "show this help");
    const options = Object.entries(spec.options).map(([key, o]) => [key, o, optionOf(key, o)] as const);
    for (const [, , option] of options) command.addOption(option);
    if (spec.withCommand) {
      command.usage(
        `[options] ${spec.withCommand === "optional" ? "[-- <command> [args...]]" : "-- <command> [args...]"}`,
      );
    }
    for (const [syntax, help] of spec.args ?? []) command.argument(syntax, help);
    return { command, options };
  };

  const parse = (argv: string[]) => {
    let optionWords = argv;
    let serverCommand: string[] = [];
    if (spec.withCommand) {
      const split = commandStart(argv, spec.options);
      optionWords = argv.slice(0, split);
      serverCommand = argv[split] === "--" ? argv.slice(split + 1) : argv.slice(split);
    }
    const { command, options } = build();
    try {
      command.parse(optionWords, { from: "user" });
    } catch (error) {
      if (error instanceof CommanderError) {
        if (error.code === "commander.helpDisplayed" || error.code === "commander.help") {
          process.stdout.write(help());
          return undefined;
        }
        if (spec.withCommand && error.code === "commander.excessArguments") {
          // Only options before `--`: a stray word there would be dropped without a word.
          const [stray] = command.args;
          throw new UsageError(
            `unexpected argument "${stray}" before --: the server's command goes after --`,
          );
        }
        if (error.code === "commander.excessArguments") {
          const stray = command.args[spec.args?.length ?? 0];
          throw new UsageError(`unexpected argument "${stray}" (see ${spec.name} --help)`);
        }
        throw usageError(error);
      }
      throw error;
    }
    const given = command.opts();
    const values: Record<string, unknown> = {};
    for (const [key, o, option] of options) {
      const value = given[option.attributeName()];
      // commander reads `--no-x` as x = false, with x true by default.
      if (key.startsWith("no-")) values[key] = value === false ? true : undefined;
      else values[key] = value ?? o.default;
    }
    return {
      values: values as OptionValues<O>,
      positionals: command.args.slice(),
      command: serverCommand,
    };
  };

  const help = () =>
    `${build().command.helpInformation()}${spec.more ? `\n${spec.more.replace(/\n*$/, "")}\n` : ""}`;
  return { spec, parse, help };
}

/**
 * Where the server's command starts in `[options] [--] command [args...]`: at `--`, or at the first
 * word that is not an option or an option's value. Everything from there belongs to the command
 * untouched.
 */
function commandStart(argv: string[], options: Options): number {
  const dashes = argv.indexOf("--");
  if (dashes !== -1) return dashes;
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] as string;
    if (!word.startsWith("-")) return i;
    const name = word.replace(/^--?/, "").split("=")[0] as string;
    const spec = options[name] ?? Object.values(options).find((o) => o.short === name);
    if (spec?.type === "string" && !word.includes("=")) i++;
  }
  return argv.length;
}

/** A command made of subcommands (`policy derive|check|export`): the first word picks one. */
export interface Subcommand {
  summary: string;
  run: (argv: string[]) => Promise<number> | number;
}

export function dispatch(
  name: string,
  description: string,
  subcommands: Readonly<Record<string, Subcommand>>,
  argv: string[],
): Promise<number> | number {
  const [word, ...rest] = argv;
  const sub =
    word === undefined ? undefined : Object.hasOwn(subcommands, word) ? subcommands[word] : undefined;
  if (sub) return sub.run(rest);
  if (word === undefined || word === "--help" || word === "-h" || word === "help") {
    const group = quiet(new Command(name))
      .description(description)
      .helpOption("-h, --help", "show this help");
    group.usage("<command> [options]").helpCommand(false);
    for (const [subName, s] of Object.entries(subcommands)) group.command(subName).description(s.summary);
    process.stdout.write(`${group.helpInformation()}\n${name} <command> --help shows a command's options\n`);
    return word === undefined ? 2 : 0;
  }
  throw new UsageError(
    `unknown ${name.replace(/^mcpguard /, "")} command "${word}" (${Object.keys(subcommands).join(", ")})`,
  );
}

/** A non-negative integer option, or its default. */
export function intOption(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a non-negative integer, got "${value}"`);
  return Number(value);
}
