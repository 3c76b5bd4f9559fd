/**
 * Runs the JavaScript differential test's programs, one after the other, each in a worker thread
 * of this one process, as `node -e` runs a script (a worker's eval is Node's evalScript, a data: URL
 * a module), with nodeHook.cjs preloaded, in a scratch folder of its own with the same files.
 * Reads {"scratch", "programs": [{"code", "module"}]} on stdin; writes the events of each.
 */
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const { Worker } = require("node:worker_threads");

const HOOK = path.join(__dirname, "nodeHook.cjs");
const FILES = {
  "a.txt": "alpha\n",
  "b.txt": "beta\n",
  "sub/c.txt": "gamma\n",
  "data.json": '{"x": 1, "list": [1, 2]}\n',
  "lib.js": "module.exports = 1;\n",
};
const TIMEOUT_MS = 3000;

function run(program, dir) {
  fs.mkdirSync(path.join(dir, "sub"), { recursive: true });
  for (const [name, text] of Object.entries(FILES)) fs.writeFileSync(path.join(dir, name), text);
  const log = path.join(dir, "..", `${path.basename(dir)}.events`);
  fs.writeFileSync(log, "");
  process.chdir(dir);
  return new Promise((resolve) => {
    const source = program.module
      ? new URL(`data:text/javascript,${encodeURIComponent(program.code)}`)
      : program.code;
    const worker = new Worker(source, {
      eval: !program.module,
      execArgv: ["--require", HOOK],
      workerData: { log },
      stdout: true,
      stderr: true,
      stdin: false,
    });
    let error = "";
    worker.stdout.resume();
    worker.stderr.on("data", (d) => {
      error += d;
    });
    const timer = setTimeout(() => worker.terminate(), TIMEOUT_MS);
    const done = (thrown) => {
      clearTimeout(timer);
      const events = fs
        .readFileSync(log, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line));
      resolve({
        events,
        error: thrown ? String(thrown.message ?? thrown).slice(0, 300) : error.slice(0, 300),
      });
    };
    worker.on("error", done);
    worker.on("exit", () => done());
  });
}

async function main() {
  const input = JSON.parse(fs.readFileSync(0, "utf8"));
  const results = [];
  for (let i = 0; i < input.programs.length; i++) {
    results.push(await run(input.programs[i], path.join(input.scratch, String(i))));
  }
  process.chdir(input.scratch);
  process.stdout.write(JSON.stringify(results));
}

main();
