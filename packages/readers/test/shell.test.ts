import { describe, expect, it } from "vitest";
import { type Field, type FullReading, readShell, type ShellContext } from "../src/shell/index.ts";

const ctx: ShellContext = {
  cwd: "/w",
  home: "/h",
  tmp: "/t",
  present: new Set(["PATH", "LANG", "USER"]),
  environmentKnown: true,
};

function reading(src: string, context: ShellContext = ctx): FullReading {
  const read = readShell(src, context);
  if (!read.ok) throw new Error(read.reason);
  return read.reading;
}

/** A field as the tests write it: text, `…` for an unknown part, `<kind>` for what is known of it. */
function show(f: Field): string {
  if (!f.unknown) return f.pattern ? `glob:${f.text}` : f.text;
  if (f.unknown.kind === "within") return `<within ${f.unknown.dir}>`;
  return `<${f.unknown.kind}>`;
}

/** Each invocation as "kind: argv | argv" (its ways). */
function runs(src: string, context?: ShellContext): string[] {
  const seen = new Set<string>();
  for (const inv of reading(src, context).invocations) {
    const line = `${inv.kind === "program" ? "" : `${inv.kind}: `}${inv.argvs.map((a) => a.map(show).join(" ")).join(" | ")}`;
    seen.add(line);
  }
  return [...seen];
}

function refusal(src: string): string {
  const read = readShell(src, ctx);
  if (read.ok) throw new Error(`${src} was read`);
  return read.reason;
}

describe("the shell reading: commands and lists", () => {
  it("reads pipelines, lists, subshells and groups", () => {
    expect(runs("cat a | sort | uniq -c && echo ok || echo no; (cd src && ls) & { date; }")).toEqual([
      "cat a",
      "sort",
      "uniq -c",
      "builtin: echo ok",
      "builtin: echo no",
      "builtin: cd src",
      "ls",
      "date",
    ]);
  });

  it("reads a word of many parts, and a command of many words, whole", () => {
    // Each part and word is appended in place (a long one once cost its length squared).
    expect(runs(`echo a${"''".repeat(5000)}b ${"x ".repeat(5000)}`)).toEqual([
      `builtin: echo ab ${"x ".repeat(5000).trim()}`,
    ]);
    expect(runs(`cat "$(date)"'a'"b"c`)).toEqual(["date", "cat <text>"]);
  });

  it("keeps what a subshell does in the subshell", () => {
    const inv = reading("(cd src && ls) && ls").invocations.filter((i) => i.argvs[0]?.[0]?.text === "ls");
    expect(inv.map((i) => i.cwd)).toEqual(["/w/src", "/w"]);
  });

  const where = (src: string, context?: ShellContext) =>
    reading(src, context).invocations.map(
      (i) => `${i.argvs[0]?.[0]?.text}@${i.cwd}${i.cwdElse === undefined ? "" : `|${i.cwdElse}`}`,
    );

  it("runs each command of an && chain where the ones before it succeeded", () => {
    // After the chain, the shell is where it stopped: in /w, or in /w/out.
    expect(where("mkdir -p out && cd out && touch a; ls")).toEqual([
      "mkdir@/w",
      "cd@/w",
      "touch@/w/out",
      "ls@/w|/w/out",
    ]);
  });

  it("runs a command after a cd that may have failed (`;`, `||`, a glob, pushd) in either folder", () => {
    // bash stays where it was when there is no such folder: /etc/passwd is read then.
    expect(where("cd /etc; cd /w/missing; cat passwd").at(-1)).toBe("cat@undefined");
    expect(where("cd /etc; cat passwd").at(-1)).toBe("cat@/etc|/w");
    expect(where("cd sub; cat x").at(-1)).toBe("cat@/w/sub|/w");
    expect(where("cd sub && cat x").at(-1)).toBe("cat@/w/sub");
    expect(where("cd sub || cat x").at(-1)).toBe("cat@/w/sub|/w");
    expect(where("(cd sub; cat x); cat y")).toEqual(["cd@/w", "cat@/w/sub|/w", "cat@/w"]);
    expect(where("cd .g*; cat config").at(-1)).toBe("cat@undefined");
    expect(where("cd sub; pushd -n /tmp; cat x").at(-1)).toBe("cat@/w/sub|/w");
    expect(where("pushd sub && pushd +1 && cat x").at(-1)).toBe("cat@undefined");
    expect(where("cd /tmp && cd /etc && pwd").at(-1)).toBe("pwd@/etc");
  });

  it("takes HOME as the line sets it, for a bare cd and for ~", () => {
    expect(where("HOME=/etc; cd && cat passwd").at(-1)).toBe("cat@/etc");
    expect(where("HOME=/etc cd && cat passwd").at(-1)).toBe("cat@/etc");
    expect(where("HOME=.git; cd && cat config").at(-1)).toBe("cat@undefined");
    const words = reading("HOME=/etc; cat ~/passwd")
      .invocations.at(-1)
      ?.argvs[0]?.map((f) => f.text);
    expect(words).toEqual(["cat", "/etc/passwd"]);
  });

  it("does not know where cd went along CDPATH, or with -P through `..`", () => {
    const at = (src: string, context?: ShellContext) =>
      reading(src, context)
        .invocations.filter((i) => i.argvs[0]?.[0]?.text === "cat")
        .map((i) => i.cwd);
    expect(at("cd etc && cat passwd")).toEqual(["/w/etc"]);
    expect(at("CDPATH=/ cd etc && cat passwd")).toEqual([undefined]);
    expect(at("export CDPATH=/; cd etc && cat passwd")).toEqual([undefined]);
    expect(at("CDPATH= cd etc && cat passwd")).toEqual(["/w/etc"]);
    // A name that starts with . or .. is never looked up along CDPATH.
    expect(at("export CDPATH=/; cd ./etc && cat passwd")).toEqual(["/w/etc"]);
    expect(at("cd etc && cat passwd", { ...ctx, present: new Set(["CDPATH"]) })).toEqual([undefined]);
    // -P walks the link, and its `..` climbs from the link's target; -L (the default) folds it.
    expect(at("cd -P self/.. && cat outside.txt")).toEqual([undefined]);
    expect(at("cd -P -L self/.. && cat outside.txt")).toEqual(["/w"]);
    expect(at("cd -P src && cat a")).toEqual(["/w/src"]);
    expect(at("cd self/.. && cat outside.txt")).toEqual(["/w"]);
    // bash's set -P makes every later cd physical, until set +P.
    expect(at("set -P; cd self/.. && cat outside.txt")).toEqual([undefined]);
    expect(at("set -o physical; cd self/.. && cat outside.txt")).toEqual([undefined]);
    expect(at("set -P; set +P; cd self/.. && cat outside.txt")).toEqual(["/w"]);
    expect(at("(set -P); cd self/.. && cat outside.txt")).toEqual(["/w"]);
    // bash retries a cd whose folded target is missing physically: after a name, or after a cd.
    const bash = (src: string) => at(`bash -c ${JSON.stringify(src)}`);
    expect(bash("cd link/../x && cat key")).toEqual([undefined]);
    expect(bash("cd link && cd ../x && cat key")).toEqual([undefined]);
    expect(bash("cd ../x && cat key")).toEqual(["/x"]);
    expect(bash("cd .. && cat key")).toEqual(["/"]);
    // dash refuses a missing folded target: the fold is where it goes, if anywhere.
    expect(at("cd link/../x && cat key")).toEqual(["/w/x"]);
  });

  it("gives a command in a pipeline the programs before it as its input", () => {
    const sort = reading("cut -d, -f1 x | sort").invocations[1];
    expect(sort?.stdin).toEqual({ kind: "pipe", producers: ["cut"] });
  });

  it("reads if, while, until, for and case, each branch", () => {
    expect(runs("if [ -d .git ]; then git log; elif test -f x; then cat x; else ls; fi")).toEqual([
      "builtin: [ -d .git ]",
      "git log",
      "builtin: test -f x",
      "cat x",
      "ls",
    ]);
    expect(runs("case x in a) wc a;; *) head b;; esac")).toEqual(["wc a", "head b"]);
    expect(runs('while read -r l; do echo "$l"; done < f')).toEqual([
      "builtin: read -r l",
      "builtin: echo <text>",
    ]);
    expect(runs("n=0; until [ $n -ge 3 ]; do n=$((n+1)); done")).toContain("builtin: [ 0 -ge 3 ]");
  });

  it("takes a loop variable over literal words and globs as each of them", () => {
    expect(runs("for f in a.txt 'b c.txt' src/*.py; do wc -l \"$f\"; done")).toEqual([
      "wc -l a.txt | wc -l b c.txt | wc -l glob:src/*.py",
    ]);
  });

  it("runs a function's body where it is called, with its arguments, and not as a program", () => {
    expect(runs("greet() { printf 'hi %s\\n' \"$1\"; }; greet Ada")).toEqual([
      "function: greet Ada",
      "builtin: printf hi %s\\n Ada",
    ]);
    // A function never called is read too, its arguments unknown.
    expect(runs('f() { cat "$1"; }')).toEqual(["cat <text>"]);
  });

  it("knows builtins from programs", () => {
    expect(
      runs("cd /tmp; set -e; export X=1; read y; test -f a; [ a = b ]; true; :; shift; unset X"),
    ).toEqual([
      "builtin: cd /tmp",
      "builtin: set -e",
      "builtin: export X=...",
      "builtin: read y",
      "builtin: test -f a",
      "builtin: [ a = b ]",
      "builtin: true",
      "builtin: :",
      "builtin: shift",
      "builtin: unset X",
    ]);
  });
});

describe("the shell reading: words", () => {
  it("computes parameter expansions of known values", () => {
    expect(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell expansion, not a template
      runs('f=src/hello.py; echo "${f##*/} ${f%.py} ${f#src/} ${#f} ${APP_ENV:-dev} ${f/hello/bye}"'),
    ).toEqual(["builtin: echo hello.py src/hello hello.py 12 dev src/bye.py"]);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell expansion, not a template
    expect(runs("bash -c 'a=(x y z); echo ${#a[@]} ${a[-1]} ${a[@]}'")).toContain("builtin: echo 3 z x y z");
  });

  it("knows HOME, PWD and TMPDIR, and that an unset variable is empty once L1 filtered the environment", () => {
    expect(runs('echo $HOME $PWD $TMPDIR ~/x "$UNSET"')).toEqual(["builtin: echo /h /w /t /h/x "]);
    expect(runs("echo $USER")).toEqual(["builtin: echo <text>"]);
    expect(runs("echo $UNSET", { cwd: "/w" })).toEqual(["builtin: echo <text>"]);
  });

  it("takes arithmetic for a number and runs nothing for it", () => {
    expect(runs("echo $(( (12 + 5 + 7) * 2 ))")).toEqual(["builtin: echo <number>"]);
  });

  it("reads command substitutions, backticks and process substitutions as the commands they run", () => {
    expect(runs('echo "today: $(date +%F)" `uname -s`')).toEqual([
      "date +%F",
      "uname -s",
      "builtin: echo <text> <text>",
    ]);
    expect(runs("diff <(sort a) <(sort b)")).toEqual(["sort a", "sort b", "diff <stream> <stream>"]);
    expect(runs("for i in $(seq 1 3); do echo $i; done")).toEqual(["seq 1 3", "builtin: echo <number>"]);
    expect(runs('t=$(mktemp); sort a > "$t"')).toEqual(["mktemp", "sort a"]);
    const redirect = reading('t=$(mktemp); sort a > "$t"').redirects[0]?.redirect.targets[0];
    expect(redirect && show(redirect)).toBe("<within /t>");
  });

  it("judges $'...' by bash's value and dash's, and {a,b} by both", () => {
    expect(runs("cat $'\\x2fetc/passwd'")).toEqual(["cat /etc/passwd | cat $\\x2fetc/passwd"]);
    expect(runs("mkdir -p out/{a,b}")).toEqual(["mkdir -p out/{a,b} | mkdir -p out/a out/b"]);
    expect(runs("bash -c 'mkdir -p out/{a,b}'")).toContain("mkdir -p out/a out/b");
  });

  it("reads here-documents as data, expanding ones with their substitutions", () => {
    expect(runs("cat <<'EOF' > out.txt\nenv\n$(curl x)\nEOF\ndate")).toEqual(["cat", "date"]);
    expect(runs("cat <<EOF\nfiles: $(ls src | wc -l)\nEOF")).toEqual(["ls src", "wc -l", "cat"]);
    const py = reading("python3 - <<'EOF'\nprint(1)\nEOF").invocations[0];
    expect(py?.stdin).toEqual({ kind: "text", texts: ["print(1)\n"] });
    expect(reading("grep x <<< 'a b'").invocations[0]?.stdin).toEqual({ kind: "text", texts: ["a b\n"] });
  });

  it("names the files a line redirects to, and no file for a descriptor", () => {
    const targets = reading("ls > a 2>&1 >> b < c 2>/dev/null >&2").redirects.map(
      (r) => `${r.redirect.op}${r.redirect.targets.map(show).join("|")}`,
    );
    expect(targets).toEqual([">a", ">>b", "<c", ">/dev/null"]);
  });
});

describe("the shell reading: what runs other code", () => {
  it("parses eval of literal text and sh -c of a literal script, with the same rules", () => {
    expect(runs("eval 'cat a; ls'")).toEqual(["builtin: eval cat a; ls", "cat a", "ls"]);
    expect(runs("sh -c 'curl $1' sh http://x")).toEqual(["sh -c curl $1 sh http://x", "curl http://x"]);
    expect(runs("bash <<'EOF'\nwget x\nEOF")).toEqual(["bash", "wget x"]);
  });

  it("records what only the shell knows at run time", () => {
    const dynamics = (src: string) => reading(src).dynamics.map((d) => d.what);
    expect(dynamics('read x; eval "$x"')).toEqual(["runs eval on text known only at run time"]);
    expect(dynamics(". ./env.sh")[0]).toMatch(/runs the shell script \.\/env\.sh/);
    expect(dynamics("bash build.sh")[0]).toMatch(/runs the bash script build\.sh/);
    expect(dynamics("cat x | sh")[0]).toMatch(/reads from its input/);
    expect(dynamics("alias ls='rm -rf /'")[0]).toMatch(/defines an alias/);
    expect(dynamics("read n; bash -c 'echo $((n))'")).toEqual([]);
    expect(dynamics("read n; echo $((n + 1))")[0]).toMatch(/as arithmetic/);
    expect(dynamics("read n; [[ $n -eq 1 ]]")[0]).toMatch(/as arithmetic/);
    expect(dynamics("a='x[$(id)]'; echo $((a))")[0]).toMatch(/as arithmetic/);
  });

  it("catches bash's quieter ways to run text", () => {
    const dynamics = (src: string) =>
      reading(src)
        .dynamics.map((d) => d.what)
        .join(" / ");
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell expansion, not a template
    expect(dynamics("x='$(id)'; echo ${x@P}")).toMatch(/as a prompt/);
    expect(dynamics("read 'a[$(id)]' < f")).toMatch(/array subscript/);
    expect(dynamics("printf -v 'a[$(id)]' x")).toMatch(/array subscript/);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell expansion, not a template
    expect(dynamics("x='a[$(id)]'; echo ${!x}")).toMatch(/array subscript/);
    expect(dynamics("hash -p /tmp/evil cat; cat")).toMatch(/hash -p/);
    expect(runs("mapfile -C 'curl x' -c 1 a < f")).toContain("curl x");
    expect(runs("trap 'wget x' EXIT")).toContain("wget x");
    expect(runs("bash -c 'f() { curl x; }'")).toContain("curl x");
  });

  it("follows wrappers to the programs they run", () => {
    expect(runs("timeout 5 nice -n 2 cat a")).toEqual([
      "timeout 5 nice -n 2 cat a",
      "nice -n 2 cat a",
      "cat a",
    ]);
    expect(runs("find src -name '*.py' -exec wc -l {} \\;")).toEqual([
      "find src -name *.py -exec wc -l {} ;",
      "wc -l <within /w/src>",
    ]);
    // Without -r xargs runs its command once even when its input holds no word.
    expect(runs("ls | xargs -0 grep -c def")).toEqual([
      "ls",
      "xargs -0 grep -c def",
      "grep -c def <text>",
      "grep -c def",
    ]);
    expect(runs("git -c core.pager='less -R' log")).toEqual(["git -c core.pager=less -R log", "less -R"]);
    expect(runs("git rebase -x 'make test' main")).toContain("make test");
  });

  it("runs a function named like a program as the function", () => {
    expect(runs("ls() { rm -rf x; }; ls")).toEqual(["function: ls", "rm -rf x"]);
  });
});

describe("the shell reading: refusals", () => {
  it("refuses a line that does not parse, with the parser's reason", () => {
    expect(refusal("echo 'abc")).toMatch(
      /^the command does not parse as shell: line 1, column 6: reached EOF without closing quote/,
    );
    expect(refusal("if true; then")).toMatch(/does not parse as shell/);
    expect(refusal("a | | b")).toMatch(/does not parse as shell/);
    expect(refusal("eval 'echo \"x'")).toMatch(/the text given to eval does not parse as shell/);
    expect(refusal("bash -c 'for x in; do'")).toMatch(/the script given to bash does not parse as shell/);
  });

  it("stops reading past its bounds instead of recursing without end", () => {
    expect(refusal(`${"(".repeat(5000)}ls${")".repeat(5000)}`)).toMatch(/too|nest/);
    expect(refusal(`${"timeout 1 ".repeat(500)}ls`)).toMatch(/nests wrappers/);
    expect(refusal(`eval ${"'eval ".repeat(20)}ls${"'".repeat(20)}`)).toMatch(/./);
  });
});

describe("the shell reading agrees with dash and bash (lines the differential test found)", () => {
  it("takes $0 of sh -c 'script' name from the name, and of the line itself as unknown", () => {
    expect(runs(`sh -c 'tool "$1" $0' s0 a`)).toEqual([`sh -c tool "$1" $0 s0 a`, "tool a s0"]);
    expect(runs(`bash -c 'grep "$1" $0' s0 x`)).toContain("grep x s0");
    expect(runs(`sh -c 'cat $0'`)).toContain("cat sh");
    expect(runs("cat $0")).toEqual(["cat <text>"]);
  });

  it("expands bash's braces in a word of several parts, and drops the empty word of a plain {a,}", () => {
    expect(runs(`bash -c "cat {a,}'' y"`)).toContain("cat a  y");
    expect(runs(`bash -c 'cat {a..c}"{a,b}-"'`)).toContain("cat a{a,b}- b{a,b}- c{a,b}-");
    expect(runs("bash -c 'cat {a,b}{1,2} {a,}'")).toContain("cat a1 a2 b1 b2 a");
    expect(runs("cat {a,}x {a,}")).toEqual(["cat {a,}x {a,} | cat {a,}x a | cat ax x {a,} | cat ax x a"]);
    // A brace across a quoted part: bash's way is not followed.
    expect(runs(`cat a{"b",c}`)).toEqual(["cat a{b,c} | cat <text>"]);
  });
});

describe("the shell reading agrees with dash and bash on tildes and the order of expansions", () => {
  it("expands a tilde only where the prefix up to a slash is plain text", () => {
    const r = reading(`cat ~/x ~ ~"x" ~$v ~\\/ >> ~"y"`);
    expect(r.invocations.map((i) => i.argvs.map((a) => a.map(show).join(" ")))).toEqual([
      ["cat /h/x /h ~x ~ ~/"],
    ]);
    expect(r.redirects.map((x) => x.redirect.targets.map(show))).toEqual([["~y"]]);
  });

  // biome-ignore lint/suspicious/noTemplateCurlyInString: the test's name quotes shell text
  it("reads a redirection after the words of its command: a ${v=x} among them names the file", () => {
    const files = (src: string) => reading(src).redirects.flatMap((x) => x.redirect.targets.map(show));
    expect(files(`cat \${v=q} > "$v"`)).toContain("q");
    // bash expands the prefixes before the redirections, dash after: both.
    expect(files(`w=\${v=q} cat > "\${v:-.}"`)).toEqual([".", "q"]);
  });

  it("reads the words before and after the NAME=value prefixes (bash, dash)", () => {
    expect(runs(`u=\${v=p} cat "$v"`)).toEqual(["cat p | cat "]);
    expect(runs(`bash -c 'u=\${v=p} cat "$v"'`)).toContain("cat ");
  });

  it("takes bash's brace expansion of a redirection's word where it makes one word", () => {
    const files = (src: string) => reading(src).redirects.flatMap((x) => x.redirect.targets.map(show));
    expect(files("cat >> {a,}")).toContain("a");
  });
});

describe("the shell reading agrees with dash and bash on positional parameters and $'...'", () => {
  it("takes a parameter after a glob as unknown: the glob may expand to any number of files", () => {
    expect(runs("f() { grep $2 x; }; f a* b")).toContain("grep <text> x");
    expect(runs(`set -- a* b; cat "$2"`)).toContain("cat <text>");
    expect(runs(`sh -c 'cat "$2"' s a* b`)).toContain("cat <text>");
    expect(runs(`f() { cat "$1" "$2"; }; f a b`)).toContain("cat a b");
  });

  it("refuses a $'...' that holds \\', which dash reads as the end of the string", () => {
    expect(refusal("cat $'\\'' | sh")).toMatch(/ends the string in dash/);
    expect(runs("bash -c \"cat \\$'\\\\''\"")).toContain("cat '");
  });
});
