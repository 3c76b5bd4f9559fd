import { parseArgs } from "node:util";

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

export function parseOptions<O extends Options>(argv: string[], options: O): Parsed<O> {
  try {
    const { values, positionals } = parseArgs({ args: argv, options, strict: true, allowPositionals: true });
    return { values: values as unknown as OptionValues<O>, positionals };
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\. To specify a positional.*$/s, ""));
  }
}

/**
 * Parse `[options] [--] command [args...]`: options end at `--` or at the first word that is not an
 * option, and everything after belongs to the command untouched.
 */
export function parseWithCommand<O extends Options>(
  argv: string[],
  options: O,
): Parsed<O> & { command: string[] } {
  let split = argv.indexOf("--");
  let command: string[];
  if (split === -1) {
    split = argv.length;
    for (let i = 0; i < argv.length; i++) {
      const word = argv[i] as string;
      if (!word.startsWith("-")) {
        split = i;
        break;
      }
      const name = word.replace(/^--?/, "").split("=")[0] as string;
      const spec = options[name] ?? Object.values(options).find((o) => o.short === name);
      if (spec?.type === "string" && !word.includes("=")) i++;
    }
    command = argv.slice(split);
  } else {
    command = argv.slice(split + 1);
  }
  const parsed = parseOptions(argv.slice(0, split), options);
  // Nothing before `--` but options: a stray word there would be dropped without a word.
  const [stray] = parsed.positionals;
  if (stray !== undefined)
    throw new UsageError(`unexpected argument "${stray}" before --: the server's command goes after --`);
  return { ...parsed, command };
}

/** A non-negative integer option, or its default. */
export function intOption(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a non-negative integer, got "${value}"`);
  return Number(value);
}
