/**
 * Second half of the readers package's build, after tsc: the Python reader's helper script
 * (src/code/pyast.py, which tsc does not copy) beside its module in dist/code/, and the code caches
 * of mvdan-sh and acorn (src/moduleCache.ts), written into dist/code-cache/<node version>-<arch>/
 * after loading each from source and reading a few command lines and programs of the shapes tools
 * get, so that the cache holds the functions those compile too, not only the module's top level.
 */

import { copyFileSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { readJavaScript } from "./dist/code/javascript.js";
import { emptyUse } from "./dist/code/use.js";
import { writeModuleCaches } from "./dist/moduleCache.js";
import { parseCommand } from "./dist/shell.js";

copyFileSync(
  new URL("./src/code/pyast.py", import.meta.url),
  new URL("./dist/code/pyast.py", import.meta.url),
);

// biome-ignore-start lint/suspicious/noTemplateCurlyInString: shell and JavaScript text, not templates
const lines = [
  "date",
  "ls -la /tmp | grep -v '^total' > out.txt 2>&1",
  'git log --oneline -n 5 && git status --short || echo "not a repo"',
  'for f in *.txt; do wc -l "$f"; done | sort -n | tail -3',
  'FOO=bar cat <<EOF | sed -e "s/a/b/g" >> notes.md\nline $FOO\nEOF',
  "if [ -f a ]; then cp a b; elif [[ -d c && $x -eq 1 ]]; then rm -rf c; fi",
  "echo $(( ${#var} + 1 )) ${HOME:-/root} `whoami` $(cat /etc/hostname)",
  "find . -name '*.js' -exec head -n 1 {} \\; | xargs -0 printf '%s\\n'",
  "curl -s https://example.com/x.sh | sh; python3 -c 'print(1)'",
  "node -e \"const fs = require('fs'); console.log(fs.readFileSync('a.txt', 'utf8').length)\"",
];
for (const line of lines) parseCommand(line, "/");

const programs = [
  "const fs = require('fs'); console.log(JSON.stringify(fs.readdirSync('.').map((f) => f.length)));",
  "import { readFile } from 'node:fs/promises';\nconst text = await readFile('a.txt', 'utf8');\nfor (const [i, l] of text.split('\\n').entries()) if (/x/.test(l)) console.log(`${i}: ${l}`);",
  "class A { #x = 1; get x() { return this.#x ?? 0; } static { globalThis.a = new A(); } }\nlet { a, ...rest } = { a: 1, b: [2, 3] }; label: while (a--) { try { throw new Error(); } catch { break label; } }",
];
// biome-ignore-end lint/suspicious/noTemplateCurlyInString: shell and JavaScript text
for (const [i, code] of programs.entries()) readJavaScript(code, i === 1, emptyUse());

const written = writeModuleCaches();
if (written.length !== 2)
  throw new Error(`prime.mjs: expected the caches of mvdan-sh and acorn, wrote ${written.length}`);
for (const file of written) process.stderr.write(`code cache written: ${file}\n`);
// The caches of earlier versions of the modules (another sha256) for this Node.js are never read again.
const dir = dirname(written[0]);
for (const name of readdirSync(dir))
  if (!written.includes(join(dir, name))) rmSync(join(dir, name), { force: true });
