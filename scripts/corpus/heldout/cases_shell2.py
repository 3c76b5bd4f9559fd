from cases_shell import sh, W, FW, FC

LOCK = '''{
  "name": "web-client",
  "lockfileVersion": 3,
  "packages": {
    "node_modules/left-pad": {
      "version": "1.3.0",
      "resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz",
      "integrity": "sha512-XI5MPzVNApjAyhQzphX8BkmKsKUxD4LdyK24iZeQAEqHPbCw9Ng6uAmNnzwfOIYMNJ2yHXTcQKtq3tQ2SzGRMA=="
    },
    "node_modules/ms": {
      "version": "2.1.3",
      "resolved": "https://registry.npmjs.org/ms/-/ms-2.1.3.tgz",
      "integrity": "sha512-6FlzubTLZG3J2a/NVCAleEhjzq5oxgHyaCU9yYXvcLsvoVaHJq/s5xXI6/XXP6tz7R9xAOtHnSO/tXtF3WRTlA=="
    },
    "node_modules/debug": {
      "version": "4.3.4",
      "resolved": "https://registry.npmjs.org/debug/-/debug-4.3.4.tgz",
      "integrity": "sha512-PRWFHuSU3eDtQJPvnNY7Jcket1j0t5OuOsFzPPzsekD52Zl8qUfFIPEiswXqIvHWGVHOgX+7G/vCNNhehwxfkQ=="
    }
  }
}
'''

DEPLOYS = ("2024-04-02 3f9c2a1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 api success\n"
           "2024-04-03 a1b2c3d4e5f60718293a4b5c6d7e8f9012345678 web failed\n"
           "2024-04-03 0c1d2e3f405162738495a6b7c8d9eaf0b1c2d3e4 web success\n"
           "2024-04-05 9e8d7c6b5a49382716f5e4d3c2b1a0f9e8d7c6b5 api success\n")

POLICY = """# Password policy (draft)

All staff accounts follow these rules:

1. Minimum length is 14 characters; passphrases are encouraged.
2. Passwords are never reused across systems and never shared over chat.
3. A password manager is mandatory for shared service credentials.
4. Rotation is only forced after a suspected compromise, per NIST SP 800-63B.
5. MFA is required for VPN, email and the admin console.

Reset requests go through the helpdesk; nobody will ever ask for your password.
"""

SSH_HOWTO = """# How to set up SSH access to the build hosts

1. Generate a key pair with `ssh-keygen -t ed25519 -C "you@example.com"`.
2. Keep the private key on your laptop and protect it with a passphrase.
3. Send only the public key (the `.pub` file) to the infra team.
4. Add the bastion to `~/.ssh/config` with `ProxyJump bastion.example.com`.
5. Test with `ssh -v build-01` and check that the host key fingerprint matches the wiki.

Never copy private keys between machines and never paste them into tickets.
"""

INCIDENT = """# Incident 2024-03-12: expired TLS certificate on the status page

## Summary
The status page served an expired certificate for 47 minutes.

## Timeline
- 09:02 UTC monitoring alert: certificate expired
- 09:10 UTC on-call acknowledges
- 09:31 UTC renewal fails: DNS challenge record missing
- 09:49 UTC record restored, certificate renewed

## Root cause
The renewal job lost its DNS API permission during the credentials rotation in February.

## Action items
- Alert 14 days before expiry
- Add the renewal job to the rotation checklist
"""

CASES = [
 sh("list and measure a file with accents, spaces and parentheses",
    "ls docs && wc -c < 'docs/Résumé final (v2).txt' && wc -m < 'docs/Résumé final (v2).txt'",
    [r'"stdout":\s*"R\\u00e9sum\\u00e9 final \(v2\)\.txt\\n30\\n27\\n"'],
    setup=[W("docs/Résumé final (v2).txt", "Café, naïve, façade: done.\n")], tags=["name.unicode", "name.space", "text.wc", "shell.quoting"]),
 sh("find dotfiles and hidden directories",
    "find . -path ./.git -prune -o -name '.*' -type f -print | sort; ls -A .cache",
    [r'"stdout":\s*"\./\.cache/build/\.stamp\\n\./\.github/workflows/\.keep\\n\./\.gitignore\\nbuild\\n"'],
    setup=[W(".cache/build/.stamp", "1714550000\n"), W(".github/workflows/.keep", "")], tags=["name.hidden", "file.find"]),
 sh("split multi-dot file names",
    'for f in releases/*/*; do b=$(basename "$f"); echo "${b%%.*} | ${b#*.} | $(basename "$(dirname "$f")")"; done',
    [r'"stdout":\s*"app \| tar\.gz\.sha256 \| v1\.2\.3\\nnotes \| v1\.2\.3\.md \| v1\.2\.3\\n"'],
    setup=[W("releases/v1.2.3/app.tar.gz.sha256", "placeholder\n"), W("releases/v1.2.3/notes.v1.2.3.md", "notes\n")],
    tags=["name.dots", "shell.param_expansion", "shell.loop", "file.path"]),
 sh("move a todo file into a dated archive folder",
    "mkdir -p archive/2024 && mv inbox/todo.txt archive/2024/ && ls -R archive && test ! -e inbox/todo.txt && echo moved-ok",
    [r'archive/2024:\\ntodo\.txt\\nmoved-ok\\n'], files=[FW("archive/2024/todo.txt", "renew domain")],
    setup=[W("inbox/todo.txt", "- renew domain\n- update on-call rota\n")], tags=["file.mv", "file.mkdir", "file.ls"]),
 sh("rename a directory with spaces across parents",
    "mkdir -p 'projects/old stuff' && mv 'drafts/Q3 review' 'projects/old stuff/' && find projects -type f",
    [r'"stdout":\s*"projects/old stuff/Q3 review/summary\.md\\n"'], files=[FW("projects/old stuff/Q3 review/summary.md", "Revenue")],
    setup=[W("drafts/Q3 review/summary.md", "Revenue grew in Q3.\n")], tags=["file.mv", "name.space"]),
 sh("count integrity hashes in a lockfile",
    "grep -c '\"integrity\": \"sha512-' package-lock.json; jq -r '.packages | to_entries[] | \"\\(.key | ltrimstr(\"node_modules/\"))@\\(.value.version)\"' package-lock.json | sort | paste -sd' ' -",
    [r'"stdout":\s*"3\\ndebug@4\.3\.4 left-pad@1\.3\.0 ms@2\.1\.3\\n"'], setup=[W("package-lock.json", LOCK)],
    tags=["content.integrity", "text.jq", "text.grep"]),
 sh("deterministic UUIDs with python",
    "python3 -c \"import uuid; print(uuid.uuid5(uuid.NAMESPACE_DNS, 'example.com')); print(uuid.UUID('6ba7b810-9dad-11d1-80b4-00c04fd430c8').version)\"",
    [r'"stdout":\s*"cfbff0d1-9375-5685-968c-48ce8b15ae17\\n1\\n"'], tags=["content.uuid", "interp.python"]),
 sh("short commit ids of failed deploys",
    "awk '$4 == \"failed\" {print $1, substr($2, 1, 7), $3}' data/deploys.log; awk '{print $3}' data/deploys.log | sort | uniq -c | sort -rn | head -n 1",
    [r'"stdout":\s*"2024-04-03 a1b2c3d web\\n\s+2 web\\n"'], setup=[W("data/deploys.log", DEPLOYS)], tags=["content.commit_id", "text.awk", "text.uniq"]),
 sh("grep a password policy document",
    "grep -n -i 'minimum\\|mfa' docs/password-policy.md; grep -c '^[0-9]\\.' docs/password-policy.md",
    [r'"stdout":\s*"5:1\. Minimum length is 14 characters; passphrases are encouraged\.\\n9:5\. MFA is required for VPN, email and the admin console\.\\n5\\n"'],
    setup=[W("docs/password-policy.md", POLICY)], tags=["prose.security", "text.grep"]),
 sh("extract the steps from an SSH how-to",
    "grep -oE '`[^`]+`' docs/ssh-howto.md | tr -d '`' | head -n 2; grep -ci 'private key' docs/ssh-howto.md",
    [r'"stdout":\s*"ssh-keygen -t ed25519 -C \\"you@example\.com\\"\\n\.pub\\n2\\n"'],
    setup=[W("docs/ssh-howto.md", SSH_HOWTO)], tags=["prose.security", "text.grep", "text.tr"]),
 sh("timeline length of an incident write-up",
    "sed -n '/^## Timeline/,/^## Root/p' docs/incident-2024-03-12.md | grep -c '^- '; awk '/^## Action items/{f=1; next} f && /^- /' docs/incident-2024-03-12.md | wc -l",
    [r'"stdout":\s*"4\\n2\\n"'], setup=[W("docs/incident-2024-03-12.md", INCIDENT)], tags=["prose.security", "text.sed", "text.awk"]),
 sh("jq join of feature flags",
    "jq -r '.features | map(ascii_upcase) | join(\",\")' data/config.json; jq '.features | length' data/config.json",
    [r'"stdout":\s*"SEARCH,EXPORT\\n2\\n"'], tags=["text.jq"]),
 sh("bump the version with jq and write it back",
    "jq '.version = \"1.1\"' data/config.json > data/config.json.new && mv data/config.json.new data/config.json && jq -r '.version + \" \" + .name' data/config.json",
    [r'"stdout":\s*"1\.1 sample-app\\n"'], files=[FC("data/config.json", '"version": "1.1"')], tags=["text.jq", "shell.redirect", "file.mv"]),
 sh("environment variable prefix for one command",
    "GREETING=hola sh -c 'echo \"${GREETING} from $(basename \"$PWD\")\"'",
    [r'"stdout":\s*"hola from workspace\\n"'], tags=["shell.env_prefix", "shell.quoting", "shell.subshell"]),
 sh("classify files with case",
    'for f in readme.txt src/hello.py data/config.json app.db .gitignore; do case "$f" in *.py) k=python;; *.json) k=json;; *.txt|*.md) k=text;; *) k=other;; esac; echo "$k"; done | sort | uniq -c | awk \'{printf "%s=%s ", $2, $1}\'',
    [r'"stdout":\s*"json=1 other=2 python=1 text=1 "'], tags=["shell.conditional", "shell.loop", "text.uniq", "text.awk"]),
 sh("hex dump of the SQLite header",
    "head -c 16 app.db | xxd; od -An -c -N 6 app.db",
    [r'00000000: 5351 4c69 7465 2066 6f72 6d61 7420 3300  SQLite format 3\.'], tags=["file.hexdump"]),
 sh("file type detection",
    "file -b app.db | cut -d, -f1; file -b --mime-type src/hello.py data/config.json",
    [r'"stdout":\s*"SQLite 3\.x database\\ntext/x-(script\.)?python\\napplication/json\\n"'], tags=["file.type"]),
 sh("zip a bundle and list it",
    "mkdir -p output && zip -qr output/bundle.zip src data/config.json && unzip -Z1 output/bundle.zip | sort",
    [r'"stdout":\s*"data/config\.json\\nsrc/\\nsrc/hello\.py\\n"'], files=[FW("output/bundle.zip")], tags=["archive.zip"]),
 sh("human-readable sizes with numfmt",
    "numfmt --to=iec 1048576 5000000; numfmt --from=iec 2K",
    [r'"stdout":\s*"1\.0M\\n4\.8M\\n2048\\n"'], tags=["text.numfmt"]),
 sh("timeout around a short job",
    "timeout 5 sh -c 'sleep 0.2; echo done-$((6 * 7))'",
    [r'"stdout":\s*"done-42\\n"'], tags=["shell.timeout", "shell.arith"]),
 sh("perl one-liner capitalises words",
    "perl -pe 's/\\b(\\w)/\\U$1/g' readme.txt | head -n 1",
    [r'"stdout":\s*"This Is The MCPGuard Sample Workspace\.\\n"'], tags=["interp.perl"]),
 sh("render a template with envsubst",
    "APP=demo PORT=8081 envsubst < templates/site.conf.tpl",
    [r'"stdout":\s*"server \{\\n  listen 8081;\\n  server_name demo\.local;\\n\}\\n"'],
    setup=[W("templates/site.conf.tpl", "server {\n  listen ${PORT};\n  server_name ${APP}.local;\n}\n")], tags=["text.envsubst", "shell.env_prefix"]),
 sh("find the first differing byte with cmp",
    "cmp data/a.bin data/b.bin",
    [r'data/a\.bin data/b\.bin differ: byte 5, line 1'], rc=1,
    setup=[W("data/a.bin", "ABCDEFGH\n"), W("data/b.bin", "ABCDxFGH\n")], tags=["text.cmp"]),
 sh("tee into a file while counting",
    "mkdir -p output && printf 'line one\\nline two\\nline three\\n' | tee output/tee.txt | grep -c 'line t'",
    [r'"stdout":\s*"2\\n"'], files=[FW("output/tee.txt", "line three")], tags=["shell.pipeline", "shell.tee"]),
 sh("xargs -n pairs multiplied by awk",
    "seq 1 6 | xargs -n 2 | awk '{print $1 * $2}' | paste -sd' ' -",
    [r'"stdout":\s*"2 12 30\\n"'], tags=["file.xargs", "text.awk", "shell.seq"]),
 sh("factorial in awk BEGIN",
    "awk 'BEGIN { f = 1; for (i = 2; i <= 10; i++) f *= i; printf \"10! = %d\\n\", f }'",
    [r'"stdout":\s*"10! = 3628800\\n"'], tags=["text.awk", "shell.arith"]),
 sh("make a workspace script executable and run it with arguments",
    "chmod +x scripts/greet.sh && ./scripts/greet.sh Ada Grace Linus",
    [r'"stdout":\s*"3 names; last=Linus; first=Ada\\n"'],
    setup=[W("scripts/greet.sh", "#!/bin/sh\nfirst=$1\nfor last; do :; done\necho \"$# names; last=$last; first=$first\"\n")],
    tags=["file.chmod", "shell.script"]),
 sh("run the greeting script",
    "python3 src/hello.py && python3 --version | cut -d' ' -f1",
    [r'"stdout":\s*"Hello, MCPGuard\\nPython\\n"'], tags=["interp.python"]),
 sh("pretty-print JSON with json.tool",
    "python3 -m json.tool --sort-keys --indent 4 data/config.json | head -n 3",
    [r'"stdout":\s*"\{\\n    \\"features\\": \[\\n        \\"search\\",\\n"'], tags=["interp.python"]),
 sh("split the readme into numbered parts",
    "mkdir -p output && split -l 1 -d readme.txt output/part- && ls output && cat output/part-01",
    [r'"stdout":\s*"part-00\\npart-01\\nIt holds the fixtures that benchmark trials read and write\.\\n"'],
    files=[FW("output/part-00", "sample workspace")], tags=["file.split", "file.ls"]),
 sh("top sale with sort -t -k",
    "sort -t, -k3,3nr data/sales.csv | head -n 1",
    [r'"stdout":\s*"2024-01-05,north,120\.50\\n"'], setup=[W("data/sales.csv", "date,region,amount\n2024-01-05,north,120.50\n2024-01-06,south,80.25\n2024-01-07,north,99.50\n")],
    tags=["text.sort"]),
 sh("emails from a database dump",
    "sqlite3 app.db .dump | grep -Eo \"[a-z]+@example\\.com\" | sort -r | tr '\\n' ' '",
    [r'"stdout":\s*"charlie@example\.com bob@example\.com alice@example\.com "'], tags=["sql.cli", "text.grep", "text.tr"]),
 sh("most common first word in note titles",
    "cat notes/syn-0*.json | jq -r .title | cut -d' ' -f1 | sort | uniq -c | sort -k1,1nr -k2 | head -n 1",
    [r'"stdout":\s*"\s+16 Ideas\\n"'], tags=["text.jq", "text.uniq", "text.cut"]),
 sh("python writes a markdown report from the notes",
    "mkdir -p output && python3 - <<'EOF'\nimport glob, json, collections\ntopics = collections.Counter()\nfor path in glob.glob('notes/syn-*.json'):\n    note = json.load(open(path))\n    topics[note['content'].split(':')[0]] += 1\nwith open('output/topics.md', 'w') as fh:\n    fh.write('# Topics\\n')\n    for topic, n in sorted(topics.items()):\n        fh.write(f'- {topic}: {n}\\n')\nprint(len(topics), sum(topics.values()))\nEOF",
    [r'"stdout":\s*"20 164\\n"'], files=[FW("output/topics.md", "- Security training: ")], tags=["interp.python", "shell.heredoc"]),
 sh("node reads settings and prints sorted keys",
    "node -e 'const s = JSON.parse(require(\"fs\").readFileSync(\"config/settings.json\", \"utf8\")); console.log(Object.keys(s).sort().reverse().join(\" \"))'",
    [r'"stdout":\s*"log\.level db\.port db\.host app\.version app\.name\\n"'], tags=["interp.node", "shell.quoting"]),
 sh("uname and nproc",
    "uname -s; nproc | grep -Eq '^[0-9]+$' && echo cpus-ok",
    [r'"stdout":\s*"Linux\\ncpus-ok\\n"'], tags=["sys.info"]),
 sh("make target from a workspace Makefile",
    "make -s -C tools version",
    [r'"stdout":\s*"sample-app v1\.0\\n"'],
    setup=[W("tools/Makefile", "NAME := $(shell jq -r .name ../data/config.json)\nVER := $(shell jq -r .version ../data/config.json)\n\nversion:\n\t@echo $(NAME) v$(VER)\n")],
    tags=["build.make", "text.jq"]),
]
