#!/usr/bin/env python3
"""The held-out part of the benign corpus (HO-001 .. HO-141): written independently of the BC-*
cases and of the layers, run against the layers once before any fix, then merged into
test_cases/benign_corpus (docs/benchmark/CORPUS.md). Regenerate: python3 scripts/corpus/heldout/gen.py
It rewrites only the HO-*.json files."""
import json, os, re, sys, glob
sys.path.insert(0, os.path.dirname(__file__))
import cases_shell, cases_shell2, cases_other

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "test_cases", "benign_corpus")

def leaves(v, out):
    if isinstance(v, str): out.append(v)
    elif isinstance(v, list):
        for x in v: leaves(x, out)
    elif isinstance(v, dict):
        for x in v.values(): leaves(x, out)

def judge_nofiles(node, R):
    if "all" in node: return all(judge_nofiles(n, R) for n in node["all"])
    if "any" in node: return any(judge_nofiles(n, R) for n in node["any"])
    if "response_matches" in node: return re.search(node["response_matches"], R) is not None
    return False

def refusal_texts(c):
    args = c["arguments"]
    ls = []; leaves(args, ls)
    texts = []
    for dumps in (lambda o: json.dumps(o), lambda o: json.dumps(o, separators=(",", ":")), lambda o: json.dumps(o, ensure_ascii=False)):
        base = f"Error: call to {c['server']}.{c['tool']} refused by policy: {dumps(args)}"
        texts.append("\n".join([base] + ls))
        if c["server"] == "shell":
            fake = {"command": args["command"], "returncode": 0, "stdout": "", "stderr": "blocked: " + args["command"]}
            texts.append("\n".join([dumps(fake)] + [fake["command"], fake["stdout"], fake["stderr"]]))
        else:
            fake = dict(args); fake["error"] = "blocked"
            texts.append("\n".join([dumps(fake)] + ls))
    return texts

def main():
    allc = cases_shell.CASES + cases_shell2.CASES + cases_other.CASES
    drop = set(open(os.path.join(os.path.dirname(__file__), "drop.txt")).read().splitlines())
    allc = [c for c in allc if c["title"] not in drop]
    for f in glob.glob(os.path.join(OUT, "HO-*.json")): os.remove(f)
    problems = 0
    for i, c in enumerate(allc, 1):
        cid = f"HO-{i:03d}"
        doc = {"id": cid, "category": "benign_corpus", "kind": "benign", "title": c["title"], "server": c["server"],
               "tool": c["tool"], "arguments": c["arguments"]}
        if c.get("setup"): doc["setup"] = c["setup"]
        doc["expect"] = c["expect"]
        doc["tags"] = sorted(set(c["tags"]))
        for t in refusal_texts(c):
            if judge_nofiles(c["expect"], t):
                print(f"{cid}: expect satisfiable by a refusal/echo: {c['title']}"); problems += 1; break
        with open(os.path.join(OUT, cid + ".json"), "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=2, ensure_ascii=False); fh.write("\n")
    print(len(allc), "cases written;", problems, "problems")
    # The repository's JSON style is biome's (the lint checks it); the generator's indent=2 is close.
    biome = os.path.join(os.path.dirname(__file__), "..", "..", "..", "node_modules", ".bin", "biome")
    if os.path.exists(biome):
        import subprocess
        subprocess.run([biome, "format", "--write", OUT], check=False, stdout=subprocess.DEVNULL)

main()
