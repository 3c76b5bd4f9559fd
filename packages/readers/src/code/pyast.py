# The Python reader's helper: reads code with CPython's own grammar (ast.parse) and answers what
# the code names, imports, calls and opens, for the rules in python.ts to decide on. It never
# runs the code it is given: it parses it and walks the tree.
#
# What confines it (it reads text an untrusted party wrote):
# - started as `python3 -I -S pyast.py` with an empty environment and / as its directory: no
#   site, no user site, no PYTHON* variable, no current directory on sys.path; it imports only
#   ast, json, struct and sys (the standard library of the interpreter itself);
# - bounded input: a request longer than MAX_REQUEST bytes ends the helper, a tree of more than
#   MAX_NODES nodes is answered as too large, and memory is capped (RLIMIT_AS) and no file may be
#   written (RLIMIT_FSIZE 0) once it has started;
# - the proxy waits a bounded time for each answer (python.ts): past it the call is refused and
#   this process is killed (SIGKILL) and started again for the next call; it exits when its
#   standard input ends (the proxy gone);
# - where the kernel layer runs with Landlock, the proxy starts it through the launcher with a
#   ruleset that lets it read the interpreter's files only, write nothing and connect nowhere.
#
# Protocol: on its standard input, requests as a 4-byte big-endian length and that many bytes of
# UTF-8 JSON {"id": n, "code": "..."}; on its standard output, answers framed the same way:
# {"id": n, "events": [...]} or {"id": n, "error": "...", "line": l, "col": c}, after a first
# frame {"hello": [major, minor, micro]} once it is ready.
import sys

MAX_REQUEST = 4 * 1024 * 1024
MAX_NODES = 200000


def _limit():
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = 1 << 30
        if hard == resource.RLIM_INFINITY or hard > cap:
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    except Exception:
        pass


def _send(out, obj):
    import json
    import struct

    body = json.dumps(obj, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    out.write(struct.pack(">I", len(body)) + body)
    out.flush()


def _read_exact(inp, n):
    chunks = []
    while n > 0:
        chunk = inp.read(n)
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


NUMERIC_OPS = ("Sub", "Div", "FloorDiv", "Pow", "LShift", "RShift", "BitAnd", "BitOr", "BitXor")


def literal(node):
    """What an expression is, as far as the rules care: a literal text, a number, or another kind."""
    kind = type(node).__name__
    if kind == "Constant":
        value = node.value
        if isinstance(value, str):
            return {"s": value}
        if isinstance(value, bytes):
            return {"s": value.decode("utf-8", "surrogateescape"), "b": 1}
        if isinstance(value, (int, float, complex)):
            return {"num": 1}
        return {"x": kind}
    if kind == "JoinedStr":
        parts = []
        for part in node.values:
            if type(part).__name__ == "Constant" and isinstance(part.value, str):
                parts.append(part.value)
            else:
                return {"x": kind}
        return {"s": "".join(parts)}
    if kind == "UnaryOp" and type(node.op).__name__ in ("USub", "UAdd", "Invert"):
        inner = literal(node.operand)
        return {"num": 1} if "num" in inner else {"x": kind}
    if kind == "BinOp":
        left, right = literal(node.left), literal(node.right)
        op = type(node.op).__name__
        if op == "Add" and "s" in left and "s" in right and ("b" in left) == ("b" in right):
            joined = {"s": left["s"] + right["s"]}
            if "b" in left:
                joined["b"] = 1
            return joined
        if "num" in left and "num" in right:
            return {"num": 1}
        if op in NUMERIC_OPS and ("num" in left or "num" in right):
            return {"num": 1}
        return {"x": kind}
    return {"x": kind}


def call_info(call):
    args = []
    for arg in call.args:
        args.append({"x": "Starred"} if type(arg).__name__ == "Starred" else literal(arg))
    kw = []
    for keyword in call.keywords:
        kw.append([keyword.arg, literal(keyword.value)])
    return {"args": args, "kw": kw}


def dotted(node):
    """`a.b.c` as text when the expression is only names and attributes, else None."""
    parts = []
    while type(node).__name__ == "Attribute":
        parts.append(node.attr)
        node = node.value
    if type(node).__name__ != "Name":
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


ANNOTATED = {
    "arg": ("annotation",),
    "FunctionDef": ("returns",),
    "AsyncFunctionDef": ("returns",),
    "AnnAssign": ("annotation",),
}
TYPE_CHECKS = ("isinstance", "issubclass")


class TooLarge(Exception):
    pass


def facts(tree):
    """The tree's events in source order: imports, names, attributes, calls, strings, `/` joins."""
    import ast

    events = []
    count = 0
    # (node, in an annotation, the Call whose callee it is, it is an attribute's object, a type check's
    # argument, the position of the nearest node that has one)
    stack = [(tree, False, None, False, False, (0, 0))]
    while stack:
        node, ann, call, dot, typed, pos = stack.pop()
        count += 1
        if count > MAX_NODES:
            raise TooLarge()
        kind = type(node).__name__
        info = call_info(call) if call is not None else None
        if kind == "Attribute" and getattr(node, "end_lineno", None) is not None:
            # Where its name is: `a.b().c` reads .b before .c, as the text does.
            pos = (node.end_lineno, node.end_col_offset - len(node.attr))
        elif getattr(node, "lineno", None) is not None:
            pos = (node.lineno, node.col_offset)
        line = pos[0]
        first = len(events)
        event = None
        if kind == "Import":
            for alias in node.names:
                events.append({"k": "import", "m": alias.name, "as": alias.asname, "line": line})
        elif kind == "ImportFrom":
            names = [[alias.name, alias.asname] for alias in node.names]
            events.append({"k": "from", "m": node.module or "", "lv": node.level, "n": names, "line": line})
        elif kind == "Name":
            event = {"k": "name", "id": node.id, "ctx": type(node.ctx).__name__.lower()}
        elif kind == "Attribute":
            event = {"k": "attr", "a": node.attr, "ctx": type(node.ctx).__name__.lower()}
            if type(node.value).__name__ == "Name":
                event["on"] = node.value.id
            path = dotted(node)
            if path is not None:
                event["path"] = path
        elif kind in ("FunctionDef", "AsyncFunctionDef", "ClassDef"):
            events.append({"k": "bind", "id": node.name, "how": kind, "line": line})
        elif kind == "arg":
            events.append({"k": "bind", "id": node.arg, "how": "arg", "line": line})
        elif kind in ("Global", "Nonlocal"):
            for name in node.names:
                events.append({"k": "bind", "id": name, "how": kind.lower(), "line": line})
        elif kind == "ExceptHandler" and node.name:
            events.append({"k": "bind", "id": node.name, "how": "except", "line": line})
        elif kind in ("MatchAs", "MatchStar") and node.name:
            events.append({"k": "bind", "id": node.name, "how": "match", "line": line})
        elif kind == "MatchMapping" and node.rest:
            events.append({"k": "bind", "id": node.rest, "how": "match", "line": line})
        elif kind == "MatchClass":
            # `case C(attr=...)` reads the attribute of the subject.
            for attr in node.kwd_attrs:
                events.append({"k": "attr", "a": attr, "ctx": "load", "line": line})
        elif kind in ("TypeVar", "ParamSpec", "TypeVarTuple"):
            events.append({"k": "bind", "id": node.name, "how": "type", "line": line})
        elif kind == "Constant" and isinstance(node.value, str):
            event = {"k": "str", "v": node.value}
        elif kind == "BinOp" and type(node.op).__name__ == "Div":
            events.append({"k": "div", "r": literal(node.right), "line": line})
        if event is not None:
            if info is not None:
                event["call"] = info
            if ann:
                event["ann"] = 1
            if dot:
                event["dot"] = 1
            if typed:
                event["typed"] = 1
            event["line"] = line
            events.append(event)
        for made in events[first:]:
            made["at"] = pos

        children = []
        annotated = ANNOTATED.get(kind, ())
        for field, value in ast.iter_fields(node):
            values = value if isinstance(value, list) else [value]
            for child in values:
                if not isinstance(child, ast.AST):
                    continue
                child_ann = ann or field in annotated
                child_call = node if kind == "Call" and field == "func" else None
                child_dot = kind == "Attribute" and field == "value"
                child_typed = False
                if kind == "Call" and field == "args" and type(node.func).__name__ == "Name":
                    if node.func.id in TYPE_CHECKS and len(node.args) > 1 and child is node.args[1]:
                        child_typed = True
                if typed and kind == "Tuple":
                    child_typed = True
                children.append((child, child_ann, child_call, child_dot, child_typed, pos))
        stack.extend(reversed(children))
    # In the order of the text (stable: a node's events before its children's at the same place).
    events.sort(key=lambda e: e.pop("at"))
    return events


def answer(request):
    import ast

    ident = request.get("id")
    code = request.get("code")
    if not isinstance(code, str):
        return {"id": ident, "error": "no code in the request"}
    try:
        # A program read from a file or standard input is bytes, and its coding declaration counts;
        # one given with -c is text, and it does not (as CPython reads each).
        source = code.encode("utf-8", "surrogateescape") if request.get("bytes") else code
        tree = ast.parse(source, "<code>", "exec")
    except SyntaxError as error:
        return {
            "id": ident,
            "error": "%s: %s" % (type(error).__name__, error.msg),
            "line": error.lineno,
            "col": error.offset,
        }
    except (ValueError, MemoryError, RecursionError, OverflowError) as error:
        return {"id": ident, "error": "%s: %s" % (type(error).__name__, error), "limit": 1}
    try:
        return {"id": ident, "events": facts(tree)}
    except TooLarge:
        return {"id": ident, "error": "the code has more than %d syntax nodes" % MAX_NODES, "limit": 1}
    except (MemoryError, RecursionError) as error:
        return {"id": ident, "error": "%s while reading the code" % type(error).__name__, "limit": 1}


def main():
    import ast  # noqa: F401 (loaded before the limits, as the walk needs it)
    import json
    import struct

    inp = sys.stdin.buffer
    out = sys.stdout.buffer
    if sys.version_info < (3, 8):
        _send(out, {"hello": list(sys.version_info[:3]), "error": "Python 3.8 or newer is needed"})
        return
    _limit()
    _send(out, {"hello": list(sys.version_info[:3])})
    while True:
        head = _read_exact(inp, 4)
        if head is None:
            return
        (size,) = struct.unpack(">I", head)
        if size > MAX_REQUEST:
            return
        body = _read_exact(inp, size)
        if body is None:
            return
        try:
            request = json.loads(body.decode("utf-8"))
        except ValueError:
            return
        _send(out, answer(request))


if __name__ == "__main__":
    main()
