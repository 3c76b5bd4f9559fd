/**
 * awk command lines for the differential test against the installed awk (awkDifferential.test.ts):
 * programs that compute, run commands (system(), pipes to and from commands), read files
 * (getline <, ARGV), write them (print >, >>, printf >), with every way to spell a file name (string
 * escapes \x41, octal, \/, concatenation, parentheses), regular expressions where a division could
 * stand, gawk's @include and @load, and the options that hand awk its program (-f, -W exec, -v, -F).
 * "@DIR@" is the run's folder.
 */
import fc from "fast-check";

type Pick = <T>(items: readonly T[]) => T;

class Writer {
  constructor(
    readonly pick: Pick,
    readonly chance: (percent: number) => boolean,
  ) {}

  /** A file name as an awk string: plain, escaped, split, parenthesized, absolute. */
  file(names: readonly string[]): string {
    const name = this.pick(names);
    const c = name.charCodeAt(0);
    return this.pick([
      `"${name}"`,
      `"${name}"`,
      `"\\x${c.toString(16)}${name.slice(1)}"`,
      `"\\${c.toString(8)}${name.slice(1)}"`,
      `"${name.replace(".", "\\056")}"`,
      `"${name.replace("/", "\\/")}"`,
      `"${name.slice(0, 1)}" "${name.slice(1)}"`,
      `("${name.slice(0, 1)}" "${name.slice(1)}")`,
      `"@DIR@/${name}"`,
      `"./${name}"`,
    ]);
  }
  readable(): string {
    return this.file(["a.txt", "b.txt", "sub/c.txt"]);
  }
  writable(): string {
    return this.file(["out.txt", "o2.txt", "a.txt"]);
  }
  command(): string {
    return this.pick(['"id"', '"date"', '"uname -a"', '"cat a.txt"', '"sort"', '"wc -l"', '"i" "d"']);
  }

  statement(): string {
    const kinds = [
      "compute",
      "compute",
      "compute",
      "compute",
      "write",
      "write",
      "write",
      "read",
      "read",
      "read",
    ];
    const kind = this.chance(25) ? this.pick(["argv", "run", "regex", "regex", "gawk"]) : this.pick(kinds);
    switch (kind) {
      case "compute":
        return this.pick([
          "print $1",
          "s += $2",
          "n++",
          'printf "%s\\n", $0',
          "a[$1]++",
          'gsub(/o/, "0"); print',
          "print length($0), substr($0, 2), toupper($0)",
          "x = 4 / 2; print x",
          "print (1 > 2)",
          "print(1 > 2)",
          "x = $2 > 1; print x",
          'print "system(\\"id\\")"',
          '# system("id")',
          'print ENVIRON["HOME"]',
          "if ($0 ~ /o/) print NR",
          "print NR / 2",
        ]);
      case "write": {
        const f = this.writable();
        return this.pick([
          `print > ${f}`,
          `print >> ${f}`,
          `printf "%s\\n", $1 > ${f}`,
          `printf("%s\\n", $1) > ${f}`,
          `print $1, $2 > ${f}`,
          `print > ${f}; close(${f})`,
          `f = ${f}; print > f`,
          "print 1 > 2",
          `print (1)(2) > ${f}`,
          'print > "/dev/stderr"',
        ]);
      }
      case "read": {
        const f = this.readable();
        return this.pick([
          `getline l < ${f}; print l`,
          `while ((getline l < ${f}) > 0) n++`,
          `getline < ${f}`,
          `f = ${f}; getline l < f`,
          `if ((getline l < ${f}) > 0) print l`,
        ]);
      }
      case "argv":
        return this.pick([
          'ARGV[1] = "a.txt"',
          'ARGV[ARGC++] = "b.txt"',
          'ARGV[1] = "sub/c.txt"; ARGC = 2',
          'split("a.txt", ARGV)',
          'sub(/input/, "a", ARGV[1])',
          'ARGV[1] = ARGV[1] ""',
          "print ARGV[1], ARGC",
        ]);
      case "run": {
        const c = this.command();
        return this.pick([
          `system(${c})`,
          `system (${c})`,
          `${c} | getline x; close(${c})`,
          `print | ${c}`,
          `printf "x\\n" | ${c}`,
          `c = ${c}; system(c)`,
          `while ((${c} | getline l) > 0) n++`,
        ]);
      }
      case "regex":
        // A regular expression where the tokenizer could take the / for a division.
        return this.pick([
          'if (1) /"/; system("id"); if (1) /"/',
          'x = 1 + /"/; system("id"); y = 2 + /"/',
          'x = 2 * /"/; system("id"); y = 2 * /"/',
          'while (0) /"/; system("id"); while (0) /"/',
          'x = !/"/; system("id"); x = !/"/',
          "x = 10 / 2 / 5; print x",
          "x = $2 / 2; print x",
        ]);
      default:
        return this.pick(['@include "x.awk"', '@load "filefuncs"', 'f = "system"; @f("id")']);
    }
  }

  program(): string {
    const parts: string[] = [];
    for (let i = this.pick([1, 1, 2]); i > 0; i--) {
      const where = this.pick(["BEGIN", "", "END", "NR == 1", "/o/"]);
      const body = Array.from({ length: this.pick([1, 2]) }, () => this.statement()).join(
        this.pick(["; ", "\n"]),
      );
      parts.push(`${where}${where ? " " : ""}{ ${body} }`);
    }
    if (this.chance(4)) parts.unshift(this.pick(['@include "x.awk"', "function f(x) { return system(x) }"]));
    return parts.join(this.pick(["\n", " "]));
  }

  /** The command line: options, the program, the input. */
  argv(): string[] {
    const program = this.program();
    const input = "input.txt";
    if (this.chance(60)) return [program, input];
    const lines = [
      [program, input],
      ["-F", " ", program, input],
      ["-F:", program, input],
      ["-v", "x=1", program, input],
      ["-vx=1", program, input],
      ["--", program, input],
      ["-f", "prog.awk", input],
      ["-fprog.awk", input],
      ["-W", "exec", "prog.awk", input],
      ["-Wexec", "prog.awk", input],
      ["-W", "interactive", program, input],
      ["-v", "cmd=id", "BEGIN { system(cmd) }", input],
      [program, "x=1", input],
    ];
    return [...(lines[this.pick(lines.map((_, i) => i))] as string[])];
  }
}

export const awkCommand = fc.gen().map((g) => {
  const pick: Pick = (items) => g(fc.constantFrom, ...items);
  const chance = (percent: number) => g(fc.integer, { min: 0, max: 99 }) < percent;
  return new Writer(pick, chance).argv();
});
