/**
 * sed command lines for the differential test against GNU sed (sedDifferential.test.ts): scripts of
 * every command (e and s///e run commands; r and R read files; w, W and s///w write them), with
 * addresses, blocks, labels, comments, escaped and unusual delimiters, one-liner text commands,
 * commands split by ; and by newlines, and the options that hand sed its script or change its files
 * (-n, -i with and without a suffix, -s, -E, --posix, --sandbox, several -e, -f, attached values,
 * abbreviated long options). "@DIR@" is the run's folder.
 */
import fc from "fast-check";

type Pick = <T>(items: readonly T[]) => T;

class Writer {
  constructor(
    readonly pick: Pick,
    readonly chance: (percent: number) => boolean,
  ) {}

  readable(): string {
    return this.pick(["a.txt", "b.txt", "sub/c.txt", "@DIR@/a.txt", "a.txt}", "/dev/stdin"]);
  }
  writable(): string {
    return this.pick(["out.txt", "o2.txt", "@DIR@/o3.txt", "a.txt", "/dev/stdout", "out.txt;p"]);
  }
  address(): string {
    return this.pick([
      "",
      "",
      "",
      "1",
      "$",
      "/o/",
      "\\%t%",
      "1,2",
      "0,/o/",
      "1~2",
      "2,+1",
      "/O/I",
      "$!",
      "1!",
    ]);
  }
  substitute(): string {
    const [d, re, to] = this.pick([
      ["/", "o", "0"],
      ["/", "a\\/b", "c"],
      ["|", "o", "0"],
      ["|", "a\\|b", "x"],
      ["#", "o", "#"],
      ["&", "o", "x"],
      ["x", "o", "y"],
      [" ", "o", "y"],
      ["/", ".*", "id"],
      ["/", "o", "\\\n"],
    ] as const);
    const body = `s${d}${re}${d}${to === "#" ? "\\#" : to}${d}`;
    const flags = this.pick(["", "", "g", "p", "2", "I", "gp", "e", "ge", "w ", "gw ", "m"]);
    return flags.endsWith("w ") ? `${body}${flags}${this.writable()}` : `${body}${flags}`;
  }

  command(): string {
    const kind = this.chance(30)
      ? this.pick(["exec", "exec", "read", "write", "label", "text"])
      : this.pick(["plain", "plain", "plain", "s", "s", "read", "write", "y", "block"]);
    switch (kind) {
      case "plain":
        return this.pick([
          "p",
          "d",
          "=",
          "l",
          "l 5",
          "n",
          "N",
          "$!N",
          "D",
          "P",
          "h",
          "H",
          "g",
          "G",
          "x",
          "z",
          "F",
          "q",
          "Q",
          "v",
        ]);
      case "s":
        return this.substitute();
      case "y":
        return this.pick(["y/ot/OT/", "y|o|0|", "y/o/\\n/"]);
      case "read":
        return `${this.pick(["r", "R", "0r", "$r"])} ${this.readable()}`;
      case "write":
        return `${this.pick(["w", "W", "1w", "/o/w"])} ${this.writable()}`;
      case "exec":
        return this.pick(["e id", "1e date", "e", "$e uname", "s/.*/id/e", "2s/.*/date/e", "e cat a.txt"]);
      case "label":
        return this.pick([":a", ":x e id", "b", "bend", "t", "T", ":a e date", "b x e id"]);
      case "text":
        return this.pick(["a foo", "i\\\nbar", "c baz", "a\\", "a foo; e id", "1i\\  x"]);
      default:
        return `${this.address()}{ ${this.command()}${this.pick([";", "\n"])}}`;
    }
  }

  script(): string {
    const n = this.pick([1, 1, 2, 3]);
    const parts = Array.from({ length: n }, () => {
      const command = this.command();
      // Forms that carry their own address (1w, 0r, $e) take no other.
      return /^[0-9$/]/.test(command) ? command : `${this.address()}${this.chance(10) ? " " : ""}${command}`;
    });
    let out = "";
    for (const p of parts) {
      out += out === "" ? p : `${this.pick([";", "\n", " ; ", "\n\n"])}${p}`;
    }
    if (this.chance(8)) out += this.pick([" # e id", "\n# e id", ";# comment"]);
    if (this.chance(5)) out = `#n\n${out}`;
    return out;
  }

  /** The command line: options and scripts, then the input. */
  argv(): string[] {
    const s = this.script();
    const options = this.chance(50)
      ? []
      : [
          this.pick([
            "-n",
            "-E",
            "-r",
            "-s",
            "-z",
            "-u",
            "--posix",
            "--debug",
            "--sandbox",
            "-i",
            "-i.bak",
            "--in-place=.orig",
            "-ibak/*",
            "-l",
            "-n",
          ]),
        ];
    if (options[0] === "-l") options.push("5");
    const input = this.pick(["input.txt", "cmds.txt"]);
    const lines = [
      [...options, s, input],
      [...options, "-e", s, input],
      [...options, "-e", s, "-e", this.script(), input],
      [...options, `-e${s}`, input],
      [...options, `--expression=${s}`, input],
      [...options, `--expr=${s}`, input],
      [...options, "-ne", s, input],
      [...options, "-f", "prog.sed", input],
      [...options, "-fprog.sed", input],
      [...options, "--fi=prog.sed", input],
      [...options, "-nfprog.sed", input],
      [...options, "--", s, input],
      [...options, "-e", "a\\", "-e", "e id", input],
      [...options, s, input, "a.txt"],
    ];
    if (this.chance(50)) return [...options, s, input];
    return [...(lines[this.pick(lines.map((_, i) => i))] as string[])];
  }
}

export const sedCommand = fc.gen().map((g) => {
  const pick: Pick = (items) => g(fc.constantFrom, ...items);
  const chance = (percent: number) => g(fc.integer, { min: 0, max: 99 }) < percent;
  return new Writer(pick, chance).argv();
});
