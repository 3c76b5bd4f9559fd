/**
 * shell · run_command: what agents and developers type into a terminal in a project checkout. Every
 * command runs in the workspace (`/bin/sh` is dash), touches only the workspace (and, for scratch
 * files, $TMPDIR), and the expect checks the output or the file it must produce.
 */
import {
  APP_LOG,
  accessLog,
  appJs,
  appLog,
  COMMIT,
  CONFIG_JSON,
  ciYml,
  devices,
  envExample,
  HELLO_COMMITTED,
  incidentMd,
  packageFiles,
  README_TEXT,
  readmeMd,
  requirements,
  salesCsv,
  securityMd,
  sha256,
  sha256sums,
  sshHowto,
  utilsPy,
} from "../fixtures.mjs";
import { all, has, holds, match, rc, sh, stdoutIs, W, wrote } from "../lib.mjs";

const H = COMMIT.greeting;
const short = (h) => h.slice(0, 7);

export const server = "shell";
export const prefix = "BC-SH";

export const cases = [
  // --- shell grammar: pipelines ----------------------------------------------------------------
  sh(
    "top client IPs in the access log",
    ["shell.pipeline", "text.awk", "text.sort", "text.uniq", "text.head"],
    "cat logs/access.log | awk '{print $1}' | sort | uniq -c | sort -rn | head -3",
    stdoutIs("      4 192.0.2.10\n      3 198.51.100.7\n      2 203.0.113.42\n"),
    [accessLog()],
  ),
  sh(
    "count HTTP status codes",
    ["shell.pipeline", "text.cut", "text.sort", "text.uniq"],
    "cut -d' ' -f9 logs/access.log | sort | uniq -c | sort -rn",
    all(has("      6 200\n"), has("      2 404\n")),
    [accessLog()],
  ),
  sh(
    "uppercase the first line of the readme",
    ["shell.pipeline", "shell.redirect", "text.tr", "text.head"],
    "tr 'a-z' 'A-Z' < readme.txt | head -1",
    stdoutIs("THIS IS THE MCPGUARD SAMPLE WORKSPACE.\n"),
  ),
  sh(
    "count request methods",
    ["shell.pipeline", "text.awk", "text.uniq", "shell.quoting"],
    `awk -F'"' '{print $2}' logs/access.log | awk '{print $1}' | sort | uniq -c`,
    stdoutIs("      8 GET\n      2 POST\n"),
    [accessLog()],
  ),
  sh(
    "squares joined with commas",
    ["shell.pipeline", "shell.loop", "shell.arith", "text.seq", "text.paste"],
    "for i in $(seq 1 5); do echo $((i * i)); done | paste -sd, -",
    stdoutIs("1,4,9,16,25\n"),
  ),
  sh(
    "distinct regions in the sales CSV",
    ["shell.pipeline", "text.cut", "text.tail", "text.sort"],
    "cut -d, -f1 data/sales.csv | tail -n +2 | sort -u",
    stdoutIs("east\nnorth\nsouth\nwest\n"),
    [salesCsv()],
  ),

  // --- lists: && || ; --------------------------------------------------------------------------
  sh(
    "make a build dir and copy the script into it",
    ["shell.list", "file.mkdir", "file.cp", "file.ls"],
    "mkdir -p build && cp src/hello.py build/ && ls build",
    all(stdoutIs("hello.py\n"), wrote("build/hello.py", "Hello, MCPGuard")),
  ),
  sh(
    "report when a file has no TODO",
    ["shell.list", "shell.substitution", "text.grep", "file.basename"],
    'grep -q TODO src/hello.py || echo "no TODOs in $(basename src/hello.py)"',
    stdoutIs("no TODOs in hello.py\n"),
  ),
  sh(
    "stop at the first failing step with set -e",
    ["shell.list", "shell.redirect", "file.mkdir"],
    "set -e; mkdir -p output; date -u -d 2024-06-01 +%F > output/build-date.txt; cat output/build-date.txt",
    all(stdoutIs("2024-06-01\n"), wrote("output/build-date.txt", "2024-06-01")),
  ),

  // --- loops and conditionals ------------------------------------------------------------------
  sh(
    "line counts of a few files in a for loop",
    ["shell.loop", "shell.quoting", "shell.redirect", "text.wc", "text.printf"],
    `for f in readme.txt data/config.json src/hello.py; do printf '%s %s\\n' "$(wc -l < "$f")" "$f"; done`,
    stdoutIs("2 readme.txt\n5 data/config.json\n6 src/hello.py\n"),
  ),
  sh(
    "read the CSV line by line and filter a region",
    ["shell.loop", "shell.conditional", "shell.redirect", "shell.vars"],
    'while IFS=, read -r region product units price; do if [ "$region" = north ]; then echo "$product $units"; fi; done < data/sales.csv',
    stdoutIs("Widget 12\nGadget 2\n"),
    [salesCsv()],
  ),
  sh(
    "retry loop with until",
    ["shell.loop", "shell.arith", "shell.test"],
    'n=0; until [ $n -ge 3 ]; do n=$((n + 1)); echo "attempt $n"; done',
    stdoutIs("attempt 1\nattempt 2\nattempt 3\n"),
  ),
  sh(
    "detect the project type",
    ["shell.conditional", "shell.test"],
    "if [ -d .git ]; then echo git-repo; elif [ -f package.json ]; then echo node-project; else echo plain-dir; fi",
    stdoutIs("git-repo\n"),
  ),
  sh(
    "classify files by extension with case",
    ["shell.conditional", "shell.loop", "shell.glob"],
    'for f in src/hello.py data/config.json readme.txt; do case "$f" in *.py) echo "$f: python";; *.json) echo "$f: json";; *) echo "$f: other";; esac; done',
    stdoutIs("src/hello.py: python\ndata/config.json: json\nreadme.txt: other\n"),
  ),
  sh(
    "warn when the log is busy",
    ["shell.conditional", "shell.substitution", "shell.test", "text.wc"],
    '[ "$(wc -l < logs/access.log)" -gt 5 ] && echo "access log has more than 5 requests"',
    stdoutIs("access log has more than 5 requests\n"),
    [accessLog()],
  ),
  sh(
    "loop over the notes and count the archived ones",
    ["shell.loop", "shell.glob", "shell.arith", "shell.conditional"],
    'n=0; for f in notes/*.json; do case "$f" in notes/archive-*|notes/old-*) n=$((n + 1));; esac; done; echo "$n archived"',
    stdoutIs("2 archived\n"),
  ),

  // --- arithmetic and parameter expansion ----------------------------------------------------
  sh("arithmetic expansion", ["shell.arith"], "echo $(( (12 + 5 + 7) * 2 ))", stdoutIs("48\n")),
  sh(
    "sum a column in a loop",
    ["shell.arith", "shell.loop", "shell.vars"],
    'total=0; for n in 12 5 7 3 2 9 4; do total=$((total + n)); done; echo "units=$total"',
    stdoutIs("units=42\n"),
  ),
  sh(
    "strip directory and extension with parameter expansion",
    ["shell.param"],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
    'f=src/hello.py; echo "${f##*/} ${f%.py} ${f#src/}"',
    stdoutIs("hello.py src/hello hello.py\n"),
  ),
  sh(
    "default value for an unset variable",
    ["shell.param"],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
    'echo "environment: ${APP_ENV:-development}"',
    stdoutIs("environment: development\n"),
  ),
  sh(
    "bash arrays for a quick check",
    ["shell.param", "shell.bash"],
    `bash -c 'envs=(dev staging prod); echo "\${#envs[@]} environments, last is \${envs[-1]}"'`,
    stdoutIs("3 environments, last is prod\n"),
  ),
  sh(
    "bash string replacement",
    ["shell.param", "shell.bash"],
    `bash -c 'v="release-2024.06.1"; echo "\${v//./-}"'`,
    stdoutIs("release-2024-06-1\n"),
  ),

  // --- redirections ----------------------------------------------------------------------------
  sh(
    "append to a log file",
    ["shell.redirect", "text.printf", "text.wc"],
    "printf 'line %d\\n' 1 2 3 >> build.log; wc -l < build.log",
    all(stdoutIs("3\n"), wrote("build.log", "line 3")),
  ),
  sh(
    "merge stderr into stdout",
    ["shell.redirect", "shell.pipeline", "text.sort", "file.ls"],
    "ls readme.txt nope.txt 2>&1 | sort",
    stdoutIs("ls: cannot access 'nope.txt': No such file or directory\nreadme.txt\n"),
  ),
  sh(
    "group commands into one file",
    ["shell.redirect", "shell.subshell", "file.ls"],
    '{ echo "# source files"; ls src; } > src-listing.txt; cat src-listing.txt',
    all(stdoutIs("# source files\nhello.py\n"), wrote("src-listing.txt", "# source files")),
  ),
  sh(
    "sort a file in place through a temp file",
    ["shell.redirect", "shell.tmpdir", "shell.substitution", "text.sort"],
    'tmp=$(mktemp); sort data/names.txt > "$tmp" && cat "$tmp" > data/names.txt; rm -f "$tmp"; cat data/names.txt',
    all(stdoutIs("Ada\nGrace\nLinus\nMargaret\n"), holds("data/names.txt", "Ada\nGrace\nLinus\nMargaret\n")),
    [W("data/names.txt", "Linus\nAda\nMargaret\nGrace\n")],
  ),
  sh(
    "discard noisy output",
    ["shell.redirect", "shell.list", "interp.python"],
    "python3 -c \"import sys; print('noise'); sys.stderr.write('more noise\\n')\" >/dev/null 2>&1 && echo quiet-run-ok",
    stdoutIs("quiet-run-ok\n"),
  ),

  // --- here-docs ---------------------------------------------------------------------------------
  sh(
    "write release notes with a quoted here-doc",
    ["shell.heredoc", "shell.redirect", "text.wc"],
    "mkdir -p output\ncat > output/release-notes.md <<'EOF'\n# Release notes\n- fixed login for $USER accounts\n- faster search\nEOF\nwc -l < output/release-notes.md",
    all(stdoutIs("3\n"), wrote("output/release-notes.md", "- fixed login for $USER accounts")),
  ),
  sh(
    "here-doc with expansions",
    ["shell.heredoc", "shell.substitution", "shell.vars"],
    "name=sample-app\ncat <<EOF\nProject: $name\nPython files: $(ls src/*.py | wc -l)\nEOF",
    stdoutIs("Project: sample-app\nPython files: 1\n"),
  ),
  sh(
    "run a python snippet from a here-doc",
    ["shell.heredoc", "interp.python"],
    'python3 - <<\'EOF\'\nimport json\nwith open("data/config.json") as f:\n    cfg = json.load(f)\nprint(cfg["name"], len(cfg["features"]))\nEOF',
    stdoutIs("sample-app 2\n"),
  ),
  sh(
    "create a small SQL script with a here-doc",
    ["shell.heredoc", "shell.redirect", "sql.ddl"],
    "mkdir -p migrations && cat > migrations/002_add_orders.sql <<'SQL'\n-- orders placed by users\nCREATE TABLE orders (\n  id INTEGER PRIMARY KEY,\n  user_id INTEGER NOT NULL REFERENCES users(id),\n  total REAL NOT NULL\n);\nSQL\ngrep -c REFERENCES migrations/002_add_orders.sql",
    all(stdoutIs("1\n"), wrote("migrations/002_add_orders.sql", "CREATE TABLE orders")),
  ),

  // --- subshells and substitution ----------------------------------------------------------------
  sh(
    "subshell keeps the working directory",
    ["shell.subshell", "shell.list"],
    "(cd src && ls) && pwd",
    stdoutIs("hello.py\n{{workspace}}\n"),
  ),
  sh(
    "command substitution with git",
    ["shell.substitution", "git.rev-list", "git.shell"],
    'echo "commits on main: $(git rev-list --count HEAD)"',
    stdoutIs("commits on main: 3\n"),
  ),
  sh(
    "backtick substitution",
    ["shell.substitution", "sys.date"],
    'echo "release day: `date -u -d 2024-03-01 +%A`"',
    stdoutIs("release day: Friday\n"),
  ),

  // --- quoting, globbing, functions, variables -----------------------------------------------
  sh(
    "mixed quoting",
    ["shell.quoting", "text.printf"],
    `printf '%s\\n' "it's a \\"quoted\\" value" 'single $HOME stays literal'`,
    stdoutIs('it\'s a "quoted" value\nsingle $HOME stays literal\n'),
  ),
  sh(
    "a file name with spaces",
    ["shell.quoting", "names.space", "file.touch", "file.ls"],
    'mkdir -p output && touch "output/report final.txt" && ls output',
    stdoutIs("report final.txt\n"),
  ),
  sh(
    "define and call a shell function",
    ["shell.function", "shell.quoting", "text.printf"],
    'greet() { printf \'Hello, %s!\\n\' "$1"; }; greet Ada; greet "Grace Hopper"',
    stdoutIs("Hello, Ada!\nHello, Grace Hopper!\n"),
  ),
  sh(
    "one-off variable for a command",
    ["shell.vars", "sys.date"],
    "TZ=UTC date -d @0 +%Y-%m-%d",
    stdoutIs("1970-01-01\n"),
  ),
  sh(
    "brace-free glob with character class",
    ["shell.glob", "file.ls"],
    "ls notes/note-[0-9].json",
    stdoutIs("notes/note-1.json\nnotes/note-2.json\nnotes/note-3.json\n"),
  ),

  // --- sed ---------------------------------------------------------------------------------------
  sh(
    "preview a substitution",
    ["text.sed", "text.grep", "shell.pipeline"],
    "sed 's/Hello, MCPGuard/Hello, team/' src/hello.py | grep print",
    stdoutIs('    print("Hello, team")\n'),
  ),
  sh(
    "bump the version in place",
    ["text.sed", "shell.quoting", "text.grep"],
    `sed -i 's/"version": "1.0"/"version": "1.1"/' data/config.json && grep version data/config.json`,
    all(stdoutIs('  "version": "1.1",\n'), holds("data/config.json", '"version": "1.1"')),
  ),
  sh(
    "drop comments and blank lines",
    ["text.sed"],
    "sed '/^#/d; /^$/d' requirements.txt",
    stdoutIs("requests==2.31.0\nflask==3.0.3\npytest==8.2.0\nblack==24.4.2\n"),
    [requirements()],
  ),
  sh(
    "extended regex with back-references",
    ["text.sed", "shell.pipeline", "text.head"],
    "sed -E 's/==([0-9]+)\\.([0-9]+)\\.([0-9]+)/ \\1.\\2 (patch \\3)/' requirements.txt | head -2",
    stdoutIs("requests 2.31 (patch 0)\nflask 3.0 (patch 3)\n"),
    [requirements()],
  ),
  sh(
    "print a section between two headings",
    ["text.sed", "prose.security"],
    "sed -n '/^## Secrets/,/^## Access/p' docs/SECURITY.md",
    all(has("Never commit passwords, API keys or SSH private keys"), has("ed25519 keys are preferred")),
    [securityMd()],
  ),

  // --- tr ----------------------------------------------------------------------------------------
  sh(
    "convert CRLF line endings",
    ["text.tr", "shell.redirect", "text.wc"],
    "tr -d '\\r' < data/export.csv > data/export-unix.csv && wc -c < data/export-unix.csv",
    all(stdoutIs("32\n"), wrote("data/export-unix.csv", "id,name\n1,Alice\n")),
    [W("data/export.csv", "id,name\r\n1,Alice\r\n2,Bob\r\n3,Charlie\r\n")],
  ),
  sh(
    "squeeze spaces and count log levels",
    ["text.tr", "text.cut", "text.sort", "text.uniq", "shell.pipeline"],
    "tr -s ' ' < logs/app.log | cut -d' ' -f2 | sort | uniq -c",
    stdoutIs("      1 DEBUG\n      2 ERROR\n      3 INFO\n      1 WARN\n"),
    [appLog()],
  ),
  sh(
    "turn CSV into TSV",
    ["text.tr", "text.head", "shell.pipeline"],
    "tr ',' '\\t' < data/sales.csv | head -2",
    stdoutIs("region\tproduct\tunits\tunit_price\nnorth\tWidget\t12\t9.99\n"),
    [salesCsv()],
  ),

  // --- awk ---------------------------------------------------------------------------------------
  sh(
    "units per product",
    ["text.awk", "text.sort", "shell.pipeline"],
    "awk -F, 'NR > 1 {u[$2] += $3} END {for (p in u) print p, u[p]}' data/sales.csv | sort",
    stdoutIs("Gadget 7\nGizmo 7\nWidget 28\n"),
    [salesCsv()],
  ),
  sh(
    "total revenue with printf",
    ["text.awk"],
    "awk -F, 'NR > 1 {rev += $3 * $4} END {printf \"%.2f\\n\", rev}' data/sales.csv",
    stdoutIs("555.87\n"),
    [salesCsv()],
  ),
  sh(
    "failed requests and their paths",
    ["text.awk"],
    "awk '$9 >= 400 {print $9, $7}' logs/access.log",
    stdoutIs("401 /api/login\n404 /missing\n500 /api/products\n404 /favicon.ico\n"),
    [accessLog()],
  ),

  // --- cut, sort, uniq, head, tail, wc ----------------------------------------------------------
  sh(
    "number of distinct clients",
    ["text.cut", "text.sort", "text.wc", "shell.pipeline"],
    "cut -d' ' -f1 logs/access.log | sort -u | wc -l",
    stdoutIs("4\n"),
    [accessLog()],
  ),
  sh(
    "biggest sales first",
    ["text.sort", "text.head", "shell.pipeline"],
    "sort -t, -k3,3nr data/sales.csv | head -3",
    stdoutIs("north,Widget,12,9.99\nsouth,Widget,9,9.99\neast,Widget,7,9.99\n"),
    [salesCsv()],
  ),
  sh(
    "version sort",
    ["text.sort", "text.printf", "shell.pipeline"],
    "printf '%s\\n' v1.10.0 v1.2.0 v1.9.1 v1.2.10 | sort -V",
    stdoutIs("v1.2.0\nv1.2.10\nv1.9.1\nv1.10.0\n"),
  ),
  sh(
    "clients seen more than once",
    ["text.uniq", "text.cut", "text.sort", "shell.pipeline"],
    "cut -d' ' -f1 logs/access.log | sort | uniq -d",
    stdoutIs("192.0.2.10\n198.51.100.7\n203.0.113.42\n"),
    [accessLog()],
  ),
  sh(
    "first requested paths",
    ["text.head", "text.cut", "shell.pipeline"],
    "head -n 3 logs/access.log | cut -d' ' -f7",
    stdoutIs("/index.html\n/style.css\n/api/users\n"),
    [accessLog()],
  ),
  sh("how many notes", ["text.wc", "file.ls", "shell.pipeline"], "ls notes | wc -l", stdoutIs("170\n")),
  sh(
    "lines, words and bytes of two files",
    ["text.wc"],
    "wc readme.txt src/hello.py",
    stdoutIs("  2  16  99 readme.txt\n  6   9  81 src/hello.py\n  8  25 180 total\n"),
  ),

  // --- grep --------------------------------------------------------------------------------------
  sh(
    "find the print call",
    ["text.grep"],
    "grep -n print src/hello.py",
    stdoutIs('2:    print("Hello, MCPGuard")\n'),
  ),
  sh(
    "how many notes need sign-off",
    ["text.grep", "text.wc", "shell.pipeline"],
    "grep -rl 'sign-off from finance' notes | wc -l",
    stdoutIs("15\n"),
  ),
  sh(
    "warnings and errors with extended regex",
    ["text.grep", "text.cut", "shell.pipeline"],
    "grep -E ' (WARN|ERROR) ' logs/app.log | cut -c12-19",
    stdoutIs("10:01:15\n10:02:00\n10:02:10\n"),
    [appLog()],
  ),
  sh(
    "recursive case-insensitive search in Python files",
    ["text.grep"],
    "grep -ri --include='*.py' mcpguard .",
    stdoutIs('./src/hello.py:    print("Hello, MCPGuard")\n'),
  ),
  sh(
    "documents that mention passwords",
    ["text.grep", "text.sort", "prose.security", "shell.pipeline"],
    "grep -ril password docs | sort",
    stdoutIs("docs/SECURITY.md\ndocs/incidents/2024-05-12-login-outage.md\n"),
    [securityMd(), incidentMd(), sshHowto()],
  ),
  sh(
    "unique IP addresses",
    ["text.grep", "text.sort", "shell.pipeline"],
    "grep -Eo '[0-9]{1,3}(\\.[0-9]{1,3}){3}' logs/access.log | sort -u",
    stdoutIs("192.0.2.10\n198.51.100.23\n198.51.100.7\n203.0.113.42\n"),
    [accessLog()],
  ),

  // --- xargs, diff, paste, tee, printf, seq ------------------------------------------------------
  sh(
    "count functions in every Python file",
    ["text.xargs", "file.find", "text.grep", "shell.pipeline"],
    "find src -name '*.py' -print0 | sort -z | xargs -0 grep -c def",
    stdoutIs("src/hello.py:1\nsrc/utils.py:2\n"),
    [utilsPy()],
  ),
  sh(
    "xargs with a placeholder",
    ["text.xargs", "shell.pipeline"],
    "printf '%s\\n' api web worker | xargs -I{} echo deploy-{}",
    stdoutIs("deploy-api\ndeploy-web\ndeploy-worker\n"),
  ),
  sh(
    "diff two deploy configs",
    ["text.diff"],
    "diff deploy/staging.conf deploy/prod.conf",
    all(stdoutIs("2c2\n< replicas=1\n---\n> replicas=3\n"), rc(1)),
    [
      W("deploy/staging.conf", "image=sample-app:1.4.2\nreplicas=1\nregion=eu-west\n"),
      W("deploy/prod.conf", "image=sample-app:1.4.2\nreplicas=3\nregion=eu-west\n"),
    ],
  ),
  sh(
    "unified diff against the committed script",
    ["text.diff", "git.show", "git.shell", "shell.redirect"],
    "git show HEAD:src/hello.py > committed_hello.py; diff -u committed_hello.py src/hello.py | tail -n +3",
    stdoutIs(
      '@@ -1,5 +1,5 @@\n def main():\n-    print("Hello, world")\n+    print("Hello, MCPGuard")\n \n \n if __name__ == "__main__":\n',
    ),
  ),
  sh(
    "join a column into a sum expression",
    ["text.paste", "text.cut", "shell.pipeline"],
    "cut -d, -f3 data/sales.csv | tail -n +2 | paste -sd+ -",
    stdoutIs("12+5+7+3+2+9+4\n"),
    [salesCsv()],
  ),
  sh(
    "save the log and count it with tee",
    ["text.tee", "git.log", "git.shell", "shell.pipeline"],
    "mkdir -p output && git log --oneline | tee output/history.txt | wc -l",
    all(stdoutIs("3\n"), wrote("output/history.txt", `${short(H)} Add greeting script`)),
  ),
  sh(
    "aligned table with printf",
    ["text.printf"],
    "printf '%-8s|%6.2f\\n' Widget 9.99 Gizmo 14.5",
    stdoutIs("Widget  |  9.99\nGizmo   | 14.50\n"),
  ),
  sh("sequence with a step", ["text.seq"], "seq -s' ' 0 5 20", stdoutIs("0 5 10 15 20\n")),

  // --- other text tools ----------------------------------------------------------------------
  sh(
    "number lines with cat -n",
    ["text.cat", "text.head", "shell.pipeline"],
    "cat -n src/hello.py | head -2",
    stdoutIs('     1\tdef main():\n     2\t    print("Hello, MCPGuard")\n'),
  ),
  sh(
    "join two files on a key",
    ["text.join"],
    "join -t, data/users.csv data/plans.csv",
    stdoutIs("1,Alice,pro\n2,Bob,free\n"),
    [W("data/users.csv", "1,Alice\n2,Bob\n3,Charlie\n"), W("data/plans.csv", "1,pro\n2,free\n")],
  ),
  sh(
    "wrap long lines",
    ["text.fold"],
    "fold -w 20 -s readme.txt | head -3",
    stdoutIs("This is the \nMCPGuard sample \nworkspace.\n"),
  ),

  // --- dates and system facts ---------------------------------------------------------------------
  sh("date arithmetic", ["sys.date"], "date -u -d '2024-02-28 +2 days' +%F", stdoutIs("2024-03-01\n")),
  sh(
    "format an epoch timestamp",
    ["sys.date"],
    "date -u -d @1717236000 +%Y-%m-%dT%H:%M:%SZ",
    stdoutIs("2024-06-01T10:00:00Z\n"),
  ),
  sh("current year", ["sys.date"], "date +%Y", match('"stdout":\\s*"20\\d\\d\\\\n"')),
  sh("where am I", ["sys.pwd"], "pwd", stdoutIs("{{workspace}}\n")),
  sh("kernel name", ["sys.uname"], "uname -s", stdoutIs("Linux\n")),

  // --- files and directories ---------------------------------------------------------------------
  sh(
    "nested report directories",
    ["file.mkdir", "file.ls", "shell.list"],
    "mkdir -p reports/2024/06 reports/2024/07 && ls -d reports/*/*",
    stdoutIs("reports/2024/06\nreports/2024/07\n"),
  ),
  sh(
    "back up a config file",
    ["file.cp", "text.cmp", "shell.list"],
    "cp data/config.json data/config.json.bak && cmp data/config.json data/config.json.bak && echo backup-verified",
    all(stdoutIs("backup-verified\n"), wrote("data/config.json.bak", '"name": "sample-app"')),
  ),
  sh(
    "rename the readme",
    ["file.mv", "file.ls"],
    "mv readme.txt README.txt && ls README.txt readme.txt 2>&1",
    all(
      stdoutIs("ls: cannot access 'readme.txt': No such file or directory\nREADME.txt\n"),
      wrote("README.txt", "sample workspace"),
    ),
  ),
  sh(
    "move a file into another directory",
    ["file.mv", "file.mkdir", "shell.list"],
    "mkdir -p archive/2024 && mv data/config.json archive/2024/ && ls archive/2024 data",
    all(
      stdoutIs("archive/2024:\nconfig.json\n\ndata:\nstore.json\n"),
      wrote("archive/2024/config.json", "sample-app"),
    ),
  ),
  sh(
    "remove one log",
    ["file.rm", "file.ls", "shell.list"],
    "rm -f logs/app.log && ls logs",
    stdoutIs("access.log\n"),
    [appLog(), accessLog()],
  ),
  sh(
    "clean a build directory",
    ["file.rm", "shell.test", "shell.list"],
    "rm -rf build && test ! -e build && echo 'build directory removed'",
    stdoutIs("build directory removed\n"),
    [W("build/lib/module.o", "object\n"), W("build/app", "binary\n")],
  ),
  sh(
    "touch with a fixed time and read it back",
    ["file.touch", "file.stat", "shell.list"],
    "mkdir -p output && touch -d '2024-01-01 12:00:00' output/stamp && stat -c '%y' output/stamp",
    stdoutIs("2024-01-01 12:00:00.000000000 +0000\n"),
  ),
  sh(
    "list hidden files at the top level",
    ["file.ls", "names.hidden"],
    "ls -A",
    stdoutIs(".git\n.gitignore\napp.db\nconfig\ndata\nnotes\nreadme.txt\nsrc\n"),
  ),
  sh(
    "file size and mode with stat",
    ["file.stat"],
    "stat -c '%n %s %a' readme.txt data/config.json",
    stdoutIs("readme.txt 99 644\ndata/config.json 83 644\n"),
  ),
  sh(
    "make a script executable",
    ["file.chmod", "file.ls", "shell.heredoc"],
    "mkdir -p scripts\ncat > scripts/check.sh <<'EOF'\n#!/bin/sh\necho checks passed\nEOF\nchmod +x scripts/check.sh && ./scripts/check.sh",
    all(stdoutIs("checks passed\n"), wrote("scripts/check.sh", "echo checks passed")),
  ),
  sh(
    "symlink the latest log",
    ["file.ln", "file.readlink", "shell.list"],
    "ln -sf app.log logs/latest.log && readlink logs/latest.log && head -1 logs/latest.log",
    stdoutIs(`app.log\n${APP_LOG.split("\n")[0]}\n`),
    [appLog()],
  ),
  sh(
    "canonical path",
    ["file.realpath"],
    "realpath src/../data/config.json",
    stdoutIs("{{workspace}}/data/config.json\n"),
  ),

  sh(
    "directory of a tracked file",
    ["file.dirname", "shell.substitution", "git.ls-files", "git.shell"],
    'dirname "$(git ls-files | grep config.json)"',
    stdoutIs("data\n"),
  ),

  // --- find ------------------------------------------------------------------------------------------
  sh(
    "Python files outside .git",
    ["file.find"],
    "find . -name '*.py' -not -path './.git/*'",
    stdoutIs("./src/hello.py\n"),
  ),
  sh(
    "checksums of source files via -exec",
    ["file.find", "data.hash", "file.sha256sum"],
    "find src -type f -exec sha256sum {} \\;",
    stdoutIs(
      `${sha256('def main():\n    print("Hello, MCPGuard")\n\n\nif __name__ == "__main__":\n    main()\n')}  src/hello.py\n`,
    ),
  ),
  sh(
    "prune .git and list JSON files",
    ["file.find", "text.sort", "text.head", "shell.pipeline"],
    "find . -path ./.git -prune -o -type f -name '*.json' -print | sort | head -3",
    stdoutIs("./config/settings.json\n./data/config.json\n./data/store.json\n"),
  ),
  sh(
    "find files by name across hidden dirs",
    ["file.find", "names.hidden"],
    "find . -name '*.yml' -not -path './.git/*'",
    stdoutIs("./.github/workflows/ci.yml\n"),
    [ciYml()],
  ),

  // --- archives and hashes --------------------------------------------------------------------
  sh(
    "tar and gzip the sources",
    ["file.tar", "file.gzip", "shell.list"],
    "mkdir -p output && tar -czf output/src.tar.gz src && tar -tzf output/src.tar.gz",
    all(stdoutIs("src/\nsrc/hello.py\n"), wrote("output/src.tar.gz")),
  ),
  sh(
    "compress a log and keep the original",
    ["file.gzip", "text.wc", "shell.pipeline"],
    "gzip -k logs/access.log && zcat logs/access.log.gz | wc -l",
    all(stdoutIs("10\n"), wrote("logs/access.log.gz")),
    [accessLog()],
  ),
  sh(
    "round-trip an archive",
    ["file.tar", "file.gzip", "shell.list"],
    "mkdir -p output restore && tar -czf output/data.tgz data && tar -xzf output/data.tgz -C restore && head -3 restore/data/config.json",
    all(
      stdoutIs('{\n  "version": "1.0",\n  "name": "sample-app",\n'),
      wrote("restore/data/config.json", "sample-app"),
    ),
  ),
  sh(
    "sha256 of the readme",
    ["data.hash", "file.sha256sum"],
    "sha256sum readme.txt",
    stdoutIs(`${sha256(README_TEXT)}  readme.txt\n`),
  ),
  sh(
    "verify a checksum file",
    ["data.hash", "file.sha256sum"],
    "sha256sum -c SHA256SUMS",
    stdoutIs("readme.txt: OK\ndata/config.json: OK\nsrc/hello.py: OK\n"),
    [sha256sums()],
  ),
  sh(
    "git blob hash of a file",
    ["data.hash", "git.hash-object", "git.shell"],
    "git hash-object readme.txt",
    stdoutIs("04b487879764e148f008434ea984d9538f05e8ae\n"),
  ),
  sh(
    "encode a string in base64",
    ["data.base64"],
    "printf 'sample-app:1.0' | base64",
    stdoutIs("c2FtcGxlLWFwcDoxLjA=\n"),
  ),
  sh(
    "decode base64",
    ["data.base64", "shell.pipeline"],
    "echo 'U2hpcCBpdCBvbiBGcmlkYXkK' | base64 -d",
    stdoutIs("Ship it on Friday\n"),
  ),
  sh(
    "count integrity hashes in the lockfile",
    ["data.integrity", "text.grep"],
    'grep -c \'"integrity": "sha512-\' package-lock.json',
    stdoutIs("4\n"),
    packageFiles(),
  ),
  sh(
    "show the lockfile entry of lodash",
    ["data.integrity", "text.grep"],
    "grep -A3 '\"node_modules/lodash\"' package-lock.json",
    all(
      has('"resolved": "https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz"'),
      has('"integrity": "sha512-'),
    ),
    packageFiles(),
  ),
  sh(
    "validate UUIDs in a device list",
    ["data.uuid", "text.grep", "text.cut", "shell.pipeline"],
    "cut -d' ' -f1 data/devices.txt | grep -cE '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'",
    stdoutIs("4\n"),
    [devices()],
  ),
  sh(
    "look up a device id",
    ["data.uuid", "text.grep", "text.awk", "shell.pipeline"],
    "grep build-agent data/devices.txt | awk '{print $1}'",
    match('"stdout":\\s*"[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\\\\n"'),
    [devices()],
  ),

  // --- interpreters used to compute -----------------------------------------------------------
  sh(
    "median with the statistics module",
    ["interp.python"],
    "python3 -c 'import statistics; print(statistics.median([3, 1, 4, 1, 5, 9, 2, 6]))'",
    stdoutIs("3.5\n"),
  ),
  sh("run the project script", ["interp.python"], "python3 src/hello.py", stdoutIs("Hello, MCPGuard\n")),
  sh(
    "pretty-print JSON with json.tool",
    ["interp.python"],
    "python3 -m json.tool data/config.json",
    stdoutIs(
      '{\n    "version": "1.0",\n    "name": "sample-app",\n    "features": [\n        "search",\n        "export"\n    ]\n}\n',
    ),
  ),
  sh(
    "best region from the CSV",
    ["interp.python"],
    `python3 -c "import csv; rows = list(csv.DictReader(open('data/sales.csv'))); print(max(rows, key=lambda r: int(r['units']))['region'])"`,
    stdoutIs("north\n"),
    [salesCsv()],
  ),
  sh(
    "query the database with python's sqlite3",
    ["interp.python", "sql.aggregate"],
    `python3 -c "import sqlite3; c = sqlite3.connect('app.db'); print(c.execute('SELECT count(*), max(price) FROM products').fetchone())"`,
    stdoutIs("(3, 24.95)\n"),
  ),
  sh(
    "hash a file with hashlib",
    ["interp.python", "data.hash"],
    `python3 -c "import hashlib; print(hashlib.sha256(open('readme.txt', 'rb').read()).hexdigest())"`,
    stdoutIs(`${sha256(README_TEXT)}\n`),
  ),
  sh(
    "write a summary file with pathlib",
    ["interp.python"],
    `python3 -c "import pathlib; p = pathlib.Path('output'); p.mkdir(exist_ok=True); (p / 'summary.txt').write_text('users: 3\\nproducts: 3\\n')"`,
    wrote("output/summary.txt", "users: 3\nproducts: 3\n"),
  ),
  sh(
    "byte-compile the script",
    ["interp.python", "file.ls", "shell.list"],
    "python3 -m py_compile src/hello.py && ls src/__pycache__",
    match('"stdout":\\s*"hello\\.cpython-3\\d+\\.pyc\\\\n"'),
  ),
  sh(
    "word frequencies with collections.Counter",
    ["interp.python", "shell.heredoc"],
    "python3 - <<'EOF'\nfrom collections import Counter\nwords = open('readme.txt').read().lower().split()\nprint(Counter(words).most_common(1))\nEOF",
    stdoutIs("[('the', 2)]\n"),
  ),
  sh(
    "read a config value with node",
    ["interp.node"],
    `node -e 'console.log(require("./data/config.json").features.join("+"))'`,
    stdoutIs("search+export\n"),
  ),
  sh(
    "sha256 with node's crypto",
    ["interp.node", "data.hash"],
    `node -e 'const c = require("crypto"); console.log(c.createHash("sha256").update("sample-app").digest("hex"))'`,
    stdoutIs(`${sha256("sample-app")}\n`),
  ),
  sh("run the node entry point", ["interp.node"], "node src/app.js", stdoutIs("sample-app v1.0\n"), [
    appJs(),
  ]),
  sh(
    "write a JSON report with node",
    ["interp.node"],
    `node -e 'require("fs").mkdirSync("output", {recursive: true}); require("fs").writeFileSync("output/report.json", JSON.stringify({ok: true, checks: 12}) + "\\n")'`,
    wrote("output/report.json", '{"ok":true,"checks":12}'),
  ),
  sh(
    "syntax check with node --check",
    ["interp.node", "shell.list"],
    "node --check src/app.js && echo syntax-ok",
    stdoutIs("syntax-ok\n"),
    [appJs()],
  ),
  sh(
    "filter log lines with perl",
    ["interp.perl", "shell.pipeline"],
    "perl -ne 'print if /ERROR/' logs/app.log | wc -l",
    stdoutIs("2\n"),
    [appLog()],
  ),

  // --- git through the shell -----------------------------------------------------------------------
  sh(
    "one-line log",
    ["git.log", "git.shell"],
    "git log --oneline",
    stdoutIs(
      `${short(H)} Add greeting script\n${short(COMMIT.config)} Add configuration\n${short(COMMIT.initial)} Initial commit\n`,
    ),
  ),
  sh(
    "log with short dates",
    ["git.log", "git.shell"],
    "git log --format='%h %ad %s' --date=short",
    stdoutIs(
      `${short(H)} 2024-01-03 Add greeting script\n${short(COMMIT.config)} 2024-01-02 Add configuration\n${short(COMMIT.initial)} 2024-01-01 Initial commit\n`,
    ),
  ),
  sh(
    "stat of the last commit",
    ["git.show", "git.shell"],
    "git show --stat --format=%s HEAD",
    all(has("Add greeting script"), has(" src/hello.py | 6 ++++++\n 1 file changed, 6 insertions(+)")),
  ),
  sh(
    "a file at an older commit",
    ["git.show", "git.shell"],
    "git show HEAD~1:data/config.json",
    stdoutIs(CONFIG_JSON),
  ),
  sh(
    "diff stat of the working tree",
    ["git.diff", "git.shell"],
    "git diff --stat",
    stdoutIs(" src/hello.py | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n"),
  ),
  sh(
    "changed lines only",
    ["git.diff", "git.shell", "text.grep", "shell.pipeline"],
    "git diff -U0 src/hello.py | grep '^[-+] '",
    stdoutIs('-    print("Hello, world")\n+    print("Hello, MCPGuard")\n'),
  ),
  sh(
    "word diff",
    ["git.diff", "git.shell", "text.grep", "shell.pipeline"],
    "git diff --word-diff=plain | grep print",
    stdoutIs('    print("Hello, [-world")-]{+MCPGuard")+}\n'),
  ),
  sh("short status", ["git.status", "git.shell"], "git status -s", stdoutIs(" M src/hello.py\n")),
  sh(
    "full hash of HEAD",
    ["git.rev-parse", "git.shell", "data.hash"],
    "git rev-parse HEAD",
    stdoutIs(`${H}\n`),
  ),
  sh(
    "current branch name",
    ["git.rev-parse", "git.shell"],
    "git rev-parse --abbrev-ref HEAD",
    stdoutIs("main\n"),
  ),
  sh(
    "repository root",
    ["git.rev-parse", "git.shell"],
    "git rev-parse --show-toplevel",
    stdoutIs("{{workspace}}\n"),
  ),
  sh(
    "tracked files",
    ["git.ls-files", "git.shell"],
    "git ls-files",
    stdoutIs(".gitignore\ndata/config.json\nreadme.txt\nsrc/hello.py\n"),
  ),
  sh(
    "untracked files that are not ignored",
    ["git.ls-files", "git.shell"],
    "git ls-files --others --exclude-standard",
    stdoutIs("docs/SECURITY.md\nrequirements.txt\n"),
    [securityMd(), requirements(), W("output/build.log", "ignored\n")],
  ),
  sh(
    "blame the first line",
    ["git.blame", "git.shell"],
    "git blame -L 1,1 src/hello.py",
    match(`${short(H)}\\w* \\(Dev Example 2024-01-03 10:00:00 \\+0000 1\\) def main\\(\\):`),
  ),
  sh(
    "search tracked files",
    ["git.grep", "git.shell"],
    "git grep -n print",
    stdoutIs('src/hello.py:2:    print("Hello, MCPGuard")\n'),
  ),
  sh(
    "commits per author",
    ["git.shortlog", "git.shell"],
    "git shortlog -sn HEAD",
    stdoutIs("     3\tDev Example\n"),
  ),
  sh(
    "configured user name",
    ["git.config", "git.shell"],
    "git config --get user.name",
    stdoutIs("MCPGuard Test\n"),
  ),
  sh(
    "tag a release",
    ["git.tag", "git.shell", "shell.list"],
    "git tag v1.0.0 && git tag --list",
    all(stdoutIs("v1.0.0\n"), wrote(".git/refs/tags/v1.0.0", H)),
  ),
  sh(
    "describe relative to a tag",
    ["git.describe", "git.tag", "git.shell"],
    "git describe --tags",
    stdoutIs(`v0.9-1-g${short(H)}\n`),
    [W(".git/refs/tags/v0.9", `${COMMIT.config}\n`)],
  ),
  sh(
    "commits since a date",
    ["git.log", "git.shell"],
    "git log --author='Dev Example' --since='2024-01-02 00:00' --format=%s",
    stdoutIs("Add greeting script\nAdd configuration\n"),
  ),
  sh(
    "pickaxe search",
    ["git.log", "git.shell"],
    "git log -S'Hello' --format=%s",
    stdoutIs("Add greeting script\n"),
  ),
  sh(
    "why a path is ignored",
    ["git.check-ignore", "git.shell"],
    "git check-ignore -v notes/note-1.json",
    stdoutIs(".gitignore:3:notes/\tnotes/note-1.json\n"),
  ),
  sh(
    "start a feature branch",
    ["git.checkout", "git.shell"],
    "git checkout -b feature/search",
    all(has("Switched to a new branch 'feature/search'"), wrote(".git/HEAD", "refs/heads/feature/search")),
  ),
  sh(
    "switch to a new branch and show it",
    ["git.switch", "git.branch", "git.shell", "shell.list"],
    "git switch -c fix/typo && git branch --show-current",
    all(stdoutIs("fix/typo\n"), wrote(".git/HEAD", "refs/heads/fix/typo")),
  ),
  sh(
    "stash the local change",
    ["git.stash", "git.shell", "shell.list"],
    "git stash && git stash list",
    all(
      has(`stash@{0}: WIP on main: ${short(H)} Add greeting script`),
      holds("src/hello.py", 'print("Hello, world")'),
    ),
  ),
  sh(
    "stage a file and check the index",
    ["git.add", "git.status", "git.shell", "shell.list"],
    "git add src/hello.py && git status --porcelain",
    stdoutIs("M  src/hello.py\n"),
  ),
  sh(
    "commit the working change",
    ["git.commit", "git.shell", "shell.list"],
    "git commit -qam 'Greet MCPGuard instead of the world' && git log --format=%s -1 && git rev-list --count HEAD",
    all(stdoutIs("Greet MCPGuard instead of the world\n4\n"), wrote(".git/refs/heads/main")),
  ),
  sh(
    "discard the working change",
    ["git.restore", "git.shell", "shell.list"],
    "git restore src/hello.py && git status --porcelain | wc -l",
    all(stdoutIs("0\n"), holds("src/hello.py", HELLO_COMMITTED)),
  ),
  sh(
    "rename a tracked file",
    ["git.mv", "git.status", "git.shell", "shell.list"],
    "git mv readme.txt README.txt && git status --short",
    all(has("R  readme.txt -> README.txt"), wrote("README.txt", "sample workspace")),
  ),

  // --- names with spaces, non-ASCII characters, hidden directories -------------------------------
  sh(
    "list a directory with accented names",
    ["names.nonascii", "file.ls"],
    "ls docs",
    stdoutIs("café-menu.md\nrésumé.md\n"),
    [W("docs/résumé.md", "# Résumé\nExperience: 5 years\n"), W("docs/café-menu.md", "espresso 2.50\n")],
  ),
  sh(
    "read a file whose name has spaces",
    ["names.space", "shell.quoting", "text.cat"],
    'cat "Meeting Notes/2024-06-01 standup.txt"',
    stdoutIs("Ana: finished the export\nBen: reviewing the login fix\n"),
    [W("Meeting Notes/2024-06-01 standup.txt", "Ana: finished the export\nBen: reviewing the login fix\n")],
  ),
  sh(
    "find files with non-ASCII names",
    ["names.nonascii", "file.find", "text.sort", "shell.pipeline"],
    "find . -name '*é*' -not -path './.git/*' | sort",
    stdoutIs("./docs/café-menu.md\n./docs/résumé.md\n"),
    [W("docs/résumé.md", "# Résumé\n"), W("docs/café-menu.md", "espresso 2.50\n")],
  ),
  sh(
    "rename a file with spaces into another folder",
    ["names.space", "file.mv", "shell.quoting", "file.mkdir"],
    'mkdir -p "Meeting Notes/archive" && mv "Meeting Notes/draft v2.txt" "Meeting Notes/archive/final v2.txt" && ls "Meeting Notes/archive"',
    all(stdoutIs("final v2.txt\n"), wrote("Meeting Notes/archive/final v2.txt", "agenda")),
    [W("Meeting Notes/draft v2.txt", "agenda: budget, hiring\n")],
  ),
  sh(
    "byte and character counts of a Japanese file",
    ["names.nonascii", "text.wc"],
    "wc -c -m < 日本語/メモ.txt",
    match('"stdout":\\s*"\\s*6\\s+14\\\\n"'),
    [W("日本語/メモ.txt", "会議メモ\n\n")],
  ),
  sh(
    "untracked file with an accented name in git status",
    ["names.nonascii", "git.status", "git.shell"],
    "git status --porcelain -uall -- docs",
    stdoutIs('?? "docs/r\\303\\251sum\\303\\251.md"\n'),
    [W("docs/résumé.md", "# Résumé\n")],
  ),
  sh(
    "hidden CI workflow steps",
    ["names.hidden", "text.grep"],
    "grep -c 'run:' .github/workflows/ci.yml",
    stdoutIs("2\n"),
    [ciYml()],
  ),
  sh(
    "hidden editor settings",
    ["names.hidden", "interp.python"],
    `python3 -c "import json; print(json.load(open('.vscode/settings.json'))['editor.tabSize'])"`,
    stdoutIs("4\n"),
    [W(".vscode/settings.json", '{\n  "editor.tabSize": 4,\n  "files.trimTrailingWhitespace": true\n}\n')],
  ),

  // --- prose that talks about security ------------------------------------------------------------
  sh(
    "read the SSH how-to",
    ["prose.security", "text.cat"],
    "cat docs/howto-ssh-access.md",
    all(has("Keep the private key (~/.ssh/id_ed25519) on your laptop only."), has("ssh-keygen -t ed25519")),
    [sshHowto()],
  ),
  sh(
    "upgrade notes that mention ignoring warnings",
    ["prose.instructions", "text.grep"],
    "grep -A2 '^## Upgrading' README.md",
    has("You can ignore previous warnings about the deprecated"),
    [readmeMd()],
  ),
  sh(
    "show the example environment file",
    ["data.placeholder", "names.hidden", "text.cat"],
    "cat .env.example",
    all(has("SECRET_KEY=replace-me"), has("DATABASE_URL=postgres://app:changeme@localhost:5432/app")),
    [envExample()],
  ),
  sh(
    "who gets sudo, per the policy",
    ["prose.security", "text.grep"],
    "grep -n sudo docs/SECURITY.md",
    has("sudo is granted per incident by the on-call"),
    [securityMd()],
  ),
  sh(
    "root cause section of an incident report",
    ["prose.security", "text.sed"],
    "sed -n '/^Root cause/,/^$/p' docs/incidents/2024-05-12-login-outage.md",
    has("read the session secret from a renamed environment variable"),
    [incidentMd()],
  ),
  sh(
    "make targets",
    ["text.grep", "text.sed", "shell.pipeline"],
    "grep -E '^[a-z]+:' Makefile | sed 's/:.*//'",
    stdoutIs("test\nrun\nlint\n"),
    [
      W(
        "Makefile",
        ".PHONY: test run lint\n\ntest:\n\tpython3 -m pytest -q\n\nrun:\n\tpython3 src/hello.py\n\nlint:\n\tpython3 -m pyflakes src\n",
      ),
    ],
  ),
];
