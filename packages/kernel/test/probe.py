"""A process that tries things under L3 and reports what happened, one JSON object per attempt.

usage: python3 probe.py OP [ARGS...] [-- OP [ARGS...]]...

OPs: write PATH | read PATH | rename FROM TO | link FROM TO | exec PROGRAM ARGS... | tcp4 HOST PORT | tcp6 HOST PORT | udp4 HOST PORT
     | mapped HOST PORT (IPv4 through an IPv4-mapped IPv6 socket) | raw | leave-cgroup CGROUP_ROOT
     | child OP ARGS... (the same attempt from a grandchild: python3 -> sh -> python3)
"""

import json
import os
import socket
import subprocess
import sys


def attempt(op, args):
    try:
        if op == "write":
            with open(args[0], "w") as f:
                f.write("written under L3\n")
        elif op == "rename":
            os.rename(args[0], args[1])
        elif op == "link":
            os.link(args[0], args[1])
        elif op == "read":
            with open(args[0]) as f:
                return {"ok": True, "bytes": len(f.read())}
        elif op == "exec":
            done = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
            return {"ok": done.returncode == 0, "status": done.returncode, "stderr": done.stderr.decode()[-200:]}
        elif op in ("tcp4", "tcp6", "mapped"):
            family = socket.AF_INET if op == "tcp4" else socket.AF_INET6
            host = "::ffff:" + args[0] if op == "mapped" else args[0]
            with socket.socket(family, socket.SOCK_STREAM) as s:
                s.settimeout(2)
                s.connect((host, int(args[1])))
                s.sendall(b"sent under L3\n")
        elif op == "udp4":
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.sendto(b"sent under L3\n", (args[0], int(args[1])))
        elif op == "raw":
            socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP).close()
        elif op == "leave-cgroup":
            with open(os.path.join(args[0], "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
        elif op == "child":
            inner = " ".join([sys.executable, "-B", __file__, *args])
            done = subprocess.run(["sh", "-c", inner], capture_output=True, timeout=20)
            return json.loads(done.stdout.decode().splitlines()[0])
        else:
            return {"ok": False, "error": "unknown op " + op}
        return {"ok": True}
    except OSError as e:
        return {"ok": False, "errno": e.errno, "error": e.strerror}
    except subprocess.SubprocessError as e:
        return {"ok": False, "error": str(e)}


def main():
    ops, current = [], []
    for word in sys.argv[1:]:
        if word == "--":
            ops.append(current)
            current = []
        else:
            current.append(word)
    if current:
        ops.append(current)
    for op in ops:
        print(json.dumps(attempt(op[0], op[1:])), flush=True)


main()
