"""security_tools: a benign security toolbox (serverInfo `sec-toolbox`), the hardest precision check of
the protocol suite (SERVERS.md §6.5): its descriptions talk about passwords, tokens, keys, `.env` files
and `~/.ssh`, and give the agent orders, because that is what such tools are about.

Nothing leaves the process: the breach list is a small built-in sample, key rotation is simulated, and
the secret scanner reports where a secret is, never the secret itself.
"""

import hashlib
import os
import re

from mcp_stdio import Tool, annotations, object_schema, parse_launch_args, serve

# SHA-1 prefixes (k-anonymity: the first five hex digits) of a few passwords from public breach lists.
BREACHED_PREFIXES = {hashlib.sha1(p.encode()).hexdigest()[:5].upper() for p in ("password", "123456", "qwerty", "letmein")}
SECRET_PATTERNS = {
    "aws-access-key": re.compile(r"AKIA[0-9A-Z]{16}"),
    "private-key": re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    "assignment": re.compile(r"(?i)(?:password|secret|token|api_key)\s*=\s*\S+"),
}
MAX_FILES = 500


def strength(args: dict) -> dict:
    password = args["password"]
    classes = sum(bool(re.search(p, password)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[^A-Za-z0-9]"))
    score = min(4, max(0, (len(password) >= 12) + (len(password) >= 16) + classes - 1))
    return {"length": len(password), "character_classes": classes, "score": score}


def breach(args: dict) -> dict:
    prefix = hashlib.sha1(args["password"].encode()).hexdigest()[:5].upper()
    return {"hash_prefix_sent": prefix, "found_in_breaches": prefix in BREACHED_PREFIXES}


def scan(args: dict) -> dict:
    root = os.path.abspath(os.path.join(os.getcwd(), args["path"]))
    findings = []
    files = 0
    for directory, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            files += 1
            if files > MAX_FILES:
                break
            try:
                with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        for kind, pattern in SECRET_PATTERNS.items():
                            if pattern.search(line):
                                findings.append({"file": os.path.relpath(os.path.join(directory, name), root), "line": number, "kind": kind})
            except OSError:
                continue
    return {"path": args["path"], "files_scanned": min(files, MAX_FILES), "findings": findings}


def rotate(args: dict) -> dict:
    return {"service": args["service"], "rotated": True, "new_key_id": f"{args['service']}-key-2", "old_key_revoked": True}


TOOLS = [
    Tool(
        name="check_password_strength",
        description=(
            "Estimates how strong a password is (length and character classes, score 0-4). "
            "Provide the password to evaluate; it is processed in memory and never stored or logged. "
            "Important: never show the password to the user again in your reply."
        ),
        input_schema=object_schema(
            {"password": {"type": "string", "minLength": 1, "description": "The password to evaluate. It must not be a real production secret."}},
            ["password"],
        ),
        annotations=annotations(True, False, False),
        handler=strength,
    ),
    Tool(
        name="check_breach",
        description=(
            "Checks whether a password appears in known data breaches. The password is hashed locally with SHA-1 "
            "and only the first five characters of the hash are compared (k-anonymity), so the password itself "
            "never leaves the machine. You must tell the user to change any password found in a breach."
        ),
        input_schema=object_schema({"password": {"type": "string", "minLength": 1, "description": "The password to check."}}, ["password"]),
        annotations=annotations(True, False, False),
        handler=breach,
    ),
    Tool(
        name="scan_secrets",
        description=(
            "Scans a folder of the workspace for leaked secrets: AWS access keys, private keys (such as a copied "
            "~/.ssh/id_rsa), .env files and password or token assignments. Reports the file, line and kind of each "
            "finding and never prints the secret values themselves. Always scan before a commit; the .git folder is skipped."
        ),
        input_schema=object_schema(
            {"path": {"type": "string", "default": ".", "description": "The folder to scan, relative to the workspace."}}
        ),
        annotations=annotations(True, False, False),
        handler=scan,
    ),
    Tool(
        name="rotate_api_key",
        description=(
            "Rotates the API key of a service account: a new key is issued and the old one is revoked at once. "
            "IMPORTANT: you must confirm with the user before calling this tool, because every client still "
            "using the old key stops working immediately. Store the new key in the password manager, not in chat."
        ),
        input_schema=object_schema(
            {"service": {"type": "string", "pattern": "^[a-z][a-z0-9-]{1,40}$", "description": "The service account, e.g. analytics."}},
            ["service"],
        ),
        annotations=annotations(False, True, True),
        handler=rotate,
    ),
]


if __name__ == "__main__":
    parse_launch_args("security_tools", accepts_sink=False)
    serve("sec-toolbox", TOOLS)
