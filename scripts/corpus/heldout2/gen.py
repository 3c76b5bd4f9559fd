#!/usr/bin/env python3
"""The second held-out part of the benign corpus (HX-*): docs/benchmark/CORPUS.md.

    python3 scripts/corpus/heldout2/gen.py          # (re)write test_cases/benign_corpus/HX-*.json
    python3 scripts/corpus/heldout2/gen.py HX-SH-001 # only show what one case does

Each case is run against its server with no proxy in a fresh world; a shell case's expect is its exit
status and exact output, a data tool's its exact field. A case whose expect an echo of its arguments
or an empty shell output would meet is flagged ECHO!.
"""
import json, sys, os, re, shutil, subprocess
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import run, judge, leaves, build_template, MAIN, SCRATCH
from lib import J, RM, ALL, rx
from cases_shell import SHELL
from cases_other import OTHER
PFX = {"shell":"SH","sqlite":"SQ","trojan_sqlite":"TS","js_sqlite":"JS","filesystem":"FS","js_filesystem":"JF","notes":"NT","trojan_notes":"TN","git":"GT","trojan_git":"TG","env":"EN","weather":"WX","malicious":"MT","js_malicious":"JM"}
OUT = os.path.join(MAIN, "test_cases", "benign_corpus")
build_template()
drop = set()
cases = []
for (title, cmd, setup, tags) in SHELL:
    cases.append(dict(server="shell", tool="run_command", title=title, arguments={"command": cmd}, expect=None, setup=setup, tags=tags))
cases += OTHER
counters = {}
only = sys.argv[1:]
out = []
for c in cases:
    k = PFX[c["server"]]; counters[k] = counters.get(k, 0) + 1
    cid = f"HX-{k}-{counters[k]:03d}"
    c = dict(id=cid, **c)
    if only and cid not in only: continue
    msg, R, s0, s1, vals = run(c)
    res = None
    try: res = json.loads(msg["result"]["content"][0]["text"])
    except Exception: pass
    if c["expect"] is None:
        if c["server"] == "shell":
            c["expect"] = ALL(RM(r'"returncode":\s*0\b') if res and res.get("returncode") == 0 else RM(r'"returncode":\s*%d\b' % (res or {}).get("returncode", -1)),
                              RM(r'"stdout":\s*"' + rx(json.dumps((res or {}).get("stdout", ""))[1:-1]) + '"'))
        elif c["tool"] == "query": c["expect"] = J("rows", (res or {}).get("rows"), c["server"])
        elif c["tool"] == "get_forecast": c["expect"] = J("days", res["days"], c["server"])
        elif c["tool"] == "spellcheck": c["expect"] = J("misspelled", res["misspelled"], c["server"])
        elif c["tool"] == "summarize": c["expect"] = J("summary", res["summary"], c["server"])
        elif c["tool"] == "translate": c["expect"] = J("translated", res["translated"], c["server"])
    ok = judge(c["expect"], R, s0, s1, vals)
    # echo check
    a = c["arguments"]; l = []; leaves(a, l)
    echo = "Blocked by mcpguard (x): " + json.dumps(a) + "\n" + json.dumps(a, ensure_ascii=False) + "\n" + "\n".join(l)
    echo2 = json.dumps({"command": a.get("command",""), "returncode": 0, "stdout": "", "stderr": ""})
    echo_hit = judge(c["expect"], echo, s0, s0, vals) or judge(c["expect"], echo2, s0, s0, vals)
    flag = ("OK " if ok else "FAIL") + (" ECHO!" if echo_hit else "")
    show = json.dumps(res, ensure_ascii=False)[:300] if res is not None else R[:300]
    print(f"{flag} {cid} {c['title']}\n     {show}")
    rec = {"id": cid, "category": "benign_corpus", "kind": "benign", "title": c["title"], "server": c["server"], "tool": c["tool"], "arguments": c["arguments"]}
    if c["setup"]: rec["setup"] = c["setup"]
    rec["expect"] = c["expect"]; rec["tags"] = sorted(c["tags"])
    if cid in drop: continue
    if not only:
        with open(os.path.join(OUT, f"{cid}.json"), "w") as f:
            json.dump(rec, f, indent=2, ensure_ascii=False)
            f.write("\n")
shutil.rmtree(SCRATCH, ignore_errors=True)
if not only:
    # The repository's JSON style, as the main generator writes it.
    biome = os.path.join(MAIN, "node_modules", ".bin", "biome")
    files = [os.path.join(OUT, n) for n in os.listdir(OUT) if n.startswith("HX-")]
    if os.path.exists(biome):
        subprocess.run([biome, "format", "--write", *files], stdout=subprocess.DEVNULL, check=False)
