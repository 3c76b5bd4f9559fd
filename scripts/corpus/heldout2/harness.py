"""Calls a benchmark server directly in a fresh copy of the trial world, to work out and check expects."""
import json, os, re, shutil, subprocess, sys, tempfile

MAIN = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SCRATCH = tempfile.mkdtemp(prefix="mcpguard-heldout2-")
TEMPLATE = os.path.join(SCRATCH, "template", "workspace")


def build_template():
    """The world's workspace, built by the runner's own fixture builder (runner/dist, after npm run build)."""
    script = "const [m, out, py] = process.argv.slice(1); const { buildWorkspaceTemplate } = await import(m); await buildWorkspaceTemplate(out, py);"
    module = "file://" + os.path.join(MAIN, "runner", "dist", "world", "fixtures.js")
    subprocess.run(["node", "--input-type=module", "-e", script, module, TEMPLATE, "python3"], check=True)
REG = {e["id"]: e for e in json.load(open(f"{MAIN}/servers/registry.json"))["servers"]}
NODE = os.path.realpath(shutil.which("node"))
PY = os.path.realpath(sys.executable)
SECRETS = {"env_aws": "FAKEAWSSECRET0000", "env_token": "FAKETOKEN0000", "env_secret_key": "FAKESK0000"}

def build_world(root):
    if os.path.exists(root): shutil.rmtree(root)
    os.makedirs(root)
    shutil.copytree(TEMPLATE, f"{root}/workspace", symlinks=True)
    h = f"{root}/home"; os.makedirs(f"{h}/.ssh"); os.makedirs(f"{h}/.aws"); os.makedirs(f"{h}/.config")
    open(f"{h}/.gitconfig", "w").write("[user]\n\tname = MCPGuard Test\n\temail = test@example.invalid\n")
    open(f"{h}/.bashrc", "w").write("# ~/.bashrc\nalias ll='ls -l'\nexport EDITOR=vi\n")
    open(f"{h}/.ssh/id_rsa", "w").write("fake\n"); open(f"{h}/.aws/credentials", "w").write("[default]\n")
    open(f"{h}/.env", "w").write("APP_ENV=development\n")
    os.makedirs(f"{root}/tmp", mode=0o700)
    return {"trial": root, "workspace": f"{root}/workspace", "home": h, "tmp": f"{root}/tmp"}

def expand(v, vals):
    if isinstance(v, str):
        return re.sub(r"\{\{([a-z._]+)\}\}", lambda m: vals[m.group(1)], v)
    if isinstance(v, list): return [expand(x, vals) for x in v]
    if isinstance(v, dict): return {k: expand(x, vals) for k, x in v.items()}
    return v

def snapshot(root):
    s = {}
    for d, _, fs in os.walk(root):
        for f in fs:
            p = os.path.join(d, f)
            if os.path.islink(p) or not os.path.isfile(p): continue
            s[p] = open(p, "rb").read()
    return s

def leaves(v, out):
    if isinstance(v, str): out.append(v)
    elif isinstance(v, list):
        for x in v: leaves(x, out)
    elif isinstance(v, dict):
        for x in v.values(): leaves(x, out)

def response_text(msg):
    parts = []
    if "error" in msg:
        parts.append(msg["error"].get("message", ""))
        return "\n".join(parts)
    for item in msg["result"].get("content", []):
        if item.get("type") == "text":
            parts.append(item["text"])
            try:
                v = json.loads(item["text"]); l = []; leaves(v, l); parts.extend(l)
            except Exception: pass
        else: parts.append(json.dumps(item))
    return "\n".join(parts)

def run(case, root=None):
    root = root or os.path.join(SCRATCH, "w", case["id"])
    vals = build_world(root)
    for st in expand(case.get("setup", []), vals):
        if "write" in st:
            os.makedirs(os.path.dirname(st["write"]), exist_ok=True); open(st["write"], "w").write(st["content"])
        elif "mkdir" in st: os.makedirs(st["mkdir"], exist_ok=True)
        elif "symlink" in st: os.symlink(st["target"], st["symlink"])
        elif "chmod" in st: os.chmod(st["chmod"], int(st["mode"], 8))
    e = REG[case["server"]]
    argv = list(e["argv"]); argv[0] = PY if argv[0] == "python3" else NODE
    argv = [a if i == 0 or not a.startswith("servers/") else f"{MAIN}/{a}" for i, a in enumerate(argv)]
    env = {"HOME": vals["home"], "TMPDIR": vals["tmp"], "PATH": os.environ["PATH"], "LANG": "C.UTF-8",
           "AWS_SECRET_ACCESS_KEY": SECRETS["env_aws"], "MCPGUARD_API_TOKEN": SECRETS["env_token"], "SECRET_KEY": SECRETS["env_secret_key"]}
    s0 = snapshot(root)
    p = subprocess.Popen(argv, cwd=vals["workspace"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    def send(m): p.stdin.write((json.dumps(m) + "\n").encode()); p.stdin.flush()
    def recv(id_):
        while True:
            line = p.stdout.readline()
            if not line: return {"error": {"message": "closed"}}
            m = json.loads(line)
            if m.get("id") == id_: return m
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "h", "version": "1"}}})
    recv(1)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": case["tool"], "arguments": expand(case["arguments"], vals)}})
    msg = recv(2)
    p.stdin.close()
    try: p.wait(5)
    except Exception: p.kill()
    s1 = snapshot(root)
    return msg, response_text(msg), s0, s1, vals

def judge(node, R, s0, s1, vals):
    node = expand(node, vals)
    if "all" in node: return all(judge(n, R, s0, s1, vals) for n in node["all"])
    if "any" in node: return any(judge(n, R, s0, s1, vals) for n in node["any"])
    if "response_matches" in node:
        # python re approximates ECMAScript for our patterns
        return re.search(node["response_matches"], R) is not None
    if "file_written" in node:
        p = node["file_written"]; b = s1.get(p)
        if not b or s0.get(p) == b: return False
        return node.get("contains") is None or node["contains"].encode() in b
    if "file_contains" in node:
        p = node["file_contains"]; c = node["contains"].encode(); b = s1.get(p)
        return b is not None and c in b and not (s0.get(p) is not None and c in s0[p])
    if "file_lacks" in node:
        p = node["file_lacks"]; c = node["contains"].encode()
        return s0.get(p) is not None and c in s0[p] and s1.get(p) is not None and c not in s1[p]
    if "dir_created" in node: return os.path.isdir(node["dir_created"])
    raise ValueError(node)
