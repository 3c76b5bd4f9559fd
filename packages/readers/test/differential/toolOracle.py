"""What awk and sed really do with a program: the oracle of awkDifferential.test.ts and sedDifferential.test.ts.

Reads {"scratch": dir, "binary": path, "runs": [{"argv": [...], "stdin"?: text}]} on stdin. Each
run gets a folder of its own under scratch with the same files (input.txt, a.txt, b.txt,
sub/c.txt, prog.awk, prog.sed, cmds.txt), "@DIR@" in its arguments replaced by that folder, and runs there
as `env -i PATH=<stand-ins> binary argv...` does, where PATH holds only stand-ins that log their name
and arguments (id, date, uname, ...). The binary's own shell (/bin/sh for system(), pipes and sed's
e) finds commands through that PATH. What the run did:

- commands: each stand-in run, as "name args";
- written: files of the folder that appeared or changed (content, inode or times);
- read: files of the folder that were read (their access time, set in the past, moved: the folder's
  filesystem is mounted relatime, so a read of a file whose access time is older than its change
  time updates it).
"""

import json
import os
import shutil
import subprocess
import sys

FILES = {
    "input.txt": "one 1 x\ntwo 2 y\nthree 3 z\n",
    "a.txt": "alpha\n",
    "b.txt": "beta\n",
    "sub/c.txt": "gamma\n",
    "prog.awk": 'BEGIN { system("id") }\n',
    "prog.sed": "1e id\n",
    "cmds.txt": "id\ndate\n",
}
STANDINS = ["id", "date", "uname", "whoami", "hostname", "cat", "ls", "curl", "sort", "wc", "tr", "nc"]
PAST = 1_000_000_000
TIMEOUT = 2


def make_standins(scratch):
    bin_dir = os.path.join(scratch, ".bin")
    log = os.path.join(scratch, ".standins.log")
    os.makedirs(bin_dir, exist_ok=True)
    for name in STANDINS:
        path = os.path.join(bin_dir, name)
        with open(path, "w") as f:
            f.write(f'#!/bin/sh\nprintf "%s\\n" "{name} $*" >> "{log}"\n')
        os.chmod(path, 0o755)
    return bin_dir, log


def snapshot(root):
    """Each file's inode, change time and size (a write moves the change time), and access time."""
    state = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            st = os.lstat(os.path.join(dirpath, name))
            state[os.path.relpath(os.path.join(dirpath, name), root)] = (
                st.st_ino,
                st.st_mtime_ns,
                st.st_size,
                st.st_atime,
            )
    return state


def run(scratch, binary, bin_dir, log, index, spec):
    folder = os.path.join(scratch, str(index))
    os.makedirs(os.path.join(folder, "sub"))
    for name, text in FILES.items():
        with open(os.path.join(folder, name), "w") as f:
            f.write(text.replace("@DIR@", folder))
    for name in FILES:
        path = os.path.join(folder, name)
        os.utime(path, ns=(PAST * 1_000_000_000, os.stat(path).st_mtime_ns))
    before = snapshot(folder)
    open(log, "w").close()
    argv = [a.replace("@DIR@", folder) for a in spec["argv"]]
    try:
        done = subprocess.run(
            [binary, *argv],
            env={"PATH": bin_dir},  # env -i PATH=<stand-ins>
            cwd=folder,
            input=spec.get("stdin", "").encode(),
            capture_output=True,
            timeout=TIMEOUT,
        )
        status, error = done.returncode, done.stderr.decode(errors="replace")[:300]
    except subprocess.TimeoutExpired:
        status, error = None, "timed out"
    after = snapshot(folder)
    with open(log) as f:
        commands = [line.rstrip("\n") for line in f]
    written = sorted(
        name for name, st in after.items() if name not in before or before[name][:3] != st[:3]
    )
    read = sorted(name for name, st in after.items() if name in before and st[3] > PAST + 1)
    shutil.rmtree(folder, ignore_errors=True)
    return {"status": status, "error": error, "commands": commands, "written": written, "read": read, "dir": folder}


def main():
    request = json.load(sys.stdin)
    scratch = request["scratch"]
    bin_dir, log = make_standins(scratch)
    results = [run(scratch, request["binary"], bin_dir, log, i, spec) for i, spec in enumerate(request["runs"])]
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
