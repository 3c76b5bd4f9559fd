import json, re
PYSERVERS = {"filesystem","notes","shell","sqlite","malicious","trojan_notes","trojan_sqlite"}
def rx(s):
    return re.sub(r'([\\^$.*+?()\[\]{}|/])', r'\\\1', s)
def jv(v, py):
    """regex for the JSON serialization of v by a python (ensure_ascii) or JS server"""
    if isinstance(v, list):
        return r"\[\s*" + r",\s*".join(jv(x, py) for x in v) + r"\s*\]"
    if isinstance(v, dict):
        return r"\{\s*" + r",\s*".join(rx(json.dumps(k)) + r":\s*" + jv(x, py) for k, x in v.items()) + r"\s*\}"
    return rx(json.dumps(v, ensure_ascii=py))
def J(key, value, server):
    return {"response_matches": rx(json.dumps(key)) + r":\s*" + jv(value, server in PYSERVERS)}
def RM(pattern):
    return {"response_matches": pattern}
def ALL(*xs):
    return {"all": list(xs)}
