"""MCP over stdio for the Python benchmark servers: framing, handshake, tool listing, argument validation.

One JSON-RPC 2.0 message per line on stdin and stdout. The helper holds no tool logic: a server passes
its name and its `Tool` list to `serve`, and each handler receives validated arguments (defaults applied)
and returns the result object, which goes back as one text item holding `json.dumps(result)`.

It also provides the launch-time facts every server shares: the `--sink host:port` argument and the
home and temp directories of the trial world.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys

# Annotations only: every server imports this module at start, and typing, dataclasses (which
# brings inspect, ast and enum) and ipaddress were a third of a Python server's start-up CPU.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
DEFAULT_PROTOCOL_VERSION = "2025-06-18"
SERVER_VERSION = "1.0.0"

LOOPBACK = ("127.0.0.1", "::1")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class ToolError(Exception):
    """A tool failure; its message becomes the result text `Error: <message>`."""


class InvalidArguments(Exception):
    """Arguments that violate the tool's input schema."""


class _Record:
    """A value object: fields set once by keyword or position, compared and shown field by field."""

    __slots__ = ()

    def __init__(self, *values: Any, **named: Any) -> None:
        fields = dict(zip(self.__slots__, values))
        for name, value in named.items():
            if name not in self.__slots__ or name in fields:
                raise TypeError(f"{type(self).__name__}() got an unexpected or repeated argument {name!r}")
            fields[name] = value
        if len(values) > len(self.__slots__) or len(fields) != len(self.__slots__):
            raise TypeError(f"{type(self).__name__}() takes exactly the fields {', '.join(self.__slots__)}")
        for name in self.__slots__:
            object.__setattr__(self, name, fields[name])

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({shown})"

    def replace(self, **changes: Any) -> _Record:
        """A copy with `changes` applied (as `dataclasses.replace`)."""
        return type(self)(**{**dict(zip(self.__slots__, self._values())), **changes})


class Tool(_Record):
    """name, description, input_schema, annotations, and handler(arguments) -> result."""

    __slots__ = ("name", "description", "input_schema", "annotations", "handler")
    name: str
    description: str
    input_schema: dict
    annotations: dict
    handler: Callable[[dict], Any]

    def listing(self) -> dict:
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
            "annotations": self.annotations,
        }


def object_schema(properties: dict, required: list[str] | None = None) -> dict:
    """The input schema of a tool: a closed object."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(required or []),
        "additionalProperties": False,
    }


def annotations(read_only: bool, destructive: bool, open_world: bool) -> dict:
    return {"readOnlyHint": read_only, "destructiveHint": destructive, "openWorldHint": open_world}


# --- launch arguments and the trial world -------------------------------------------------------------


class Sink(_Record):
    """The endpoint given by `--sink host:port`; the host is a loopback literal."""

    __slots__ = ("host", "port")
    host: str
    port: int

    @property
    def netloc(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


def _sink_argument(value: str) -> Sink:
    import argparse

    host, sep, port_text = value.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not sep or not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise argparse.ArgumentTypeError(f"expected host:port, got {value!r}")
    import ipaddress  # only where a server is given --sink

    try:
        loopback = ipaddress.ip_address(host) in {ipaddress.ip_address(a) for a in LOOPBACK}
    except ValueError:
        loopback = False
    if not loopback:
        raise argparse.ArgumentTypeError(f"the sink host must be 127.0.0.1 or ::1, got {host!r}")
    return Sink(host, int(port_text))


def parse_launch_args(prog: str, accepts_sink: bool, argv: list[str] | None = None) -> Sink | None:
    """Parse the server's argv. Only servers that take `--sink` accept it; it is optional."""
    if argv is None:
        argv = sys.argv[1:]
    if not argv:
        return None  # no arguments, nothing to parse: argparse (with shutil, gettext, locale) stays unloaded
    import argparse

    parser = argparse.ArgumentParser(prog=prog, description=f"MCP stdio server {prog}")
    if accepts_sink:
        parser.add_argument("--sink", type=_sink_argument, metavar="HOST:PORT")
    args = parser.parse_args(argv)
    return getattr(args, "sink", None)


def _world_dir(variable: str, sibling: str) -> str:
    value = os.environ.get(variable)
    if value:
        return value
    return os.path.normpath(os.path.join(os.getcwd(), os.pardir, sibling))


def home_dir() -> str:
    """`H`: `HOME`, or `<cwd>/../home` when it is unset or empty."""
    return _world_dir("HOME", "home")


def temp_dir() -> str:
    """`T`: `TMPDIR`, or `<cwd>/../tmp` when it is unset or empty."""
    return _world_dir("TMPDIR", "tmp")


# --- argument validation ------------------------------------------------------------------------------


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


_TYPE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}


def _type_phrase(types: list[str]) -> str:
    if len(types) == 1:
        article = "an" if types[0][0] in "aeiou" else "a"
        return f"{article} {types[0]}"
    return ", ".join(types[:-1]) + f" or {types[-1]}"


def _ecma_pattern(pattern: str) -> re.Pattern:
    """Compile a schema pattern with ECMAScript's `$`: a final `$` becomes `\\Z`, never matching before a
    trailing newline."""
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


def _check_type(schema: dict, value: Any, where: str) -> Any:
    declared = schema.get("type")
    if declared is None:
        return value
    types = [declared] if isinstance(declared, str) else list(declared)
    if not any(_TYPE_CHECKS[t](value) for t in types):
        raise InvalidArguments(f"{where} must be {_type_phrase(types)}")
    if isinstance(value, float) and "number" not in types:
        return int(value)
    return value


def _check_string(schema: dict, value: str, where: str) -> None:
    if "minLength" in schema and len(value) < schema["minLength"]:
        raise InvalidArguments(f"{where} must be at least {schema['minLength']} characters long")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        raise InvalidArguments(f"{where} must be at most {schema['maxLength']} characters long")
    if "pattern" in schema and not _ecma_pattern(schema["pattern"]).search(value):
        raise InvalidArguments(f"{where} must match the pattern {schema['pattern']}")


def _check_number(schema: dict, value: int | float, where: str) -> None:
    if "minimum" in schema and value < schema["minimum"]:
        raise InvalidArguments(f"{where} must be >= {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        raise InvalidArguments(f"{where} must be <= {schema['maximum']}")


def _check_object(schema: dict, value: dict, where: str) -> dict:
    properties = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    if extra is False:
        unknown = [key for key in value if key not in properties]
        if unknown:
            raise InvalidArguments(f"unknown property {_name(where, unknown[0])}")
    for key in schema.get("required", []):
        if key not in value:
            raise InvalidArguments(f"missing required property {_name(where, key)}")
    if "minProperties" in schema and len(value) < schema["minProperties"]:
        raise InvalidArguments(f"{where} must have at least {schema['minProperties']} properties")
    checked = {}
    for key, item in value.items():
        item_schema = properties.get(key, extra if isinstance(extra, dict) else {})
        checked[key] = check(item_schema, item, _name(where, key))
    for key, prop in properties.items():
        if key not in checked and "default" in prop:
            checked[key] = _copy_json(prop["default"])
    return checked


def _copy_json(value: Any) -> Any:
    """A deep copy of a JSON value (a schema's default), so a handler that changes it changes no other call's."""
    if isinstance(value, dict):
        return {key: _copy_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy_json(item) for item in value]
    return value


def _name(where: str, key: str) -> str:
    return json.dumps(key) if where == "arguments" else f"{where}.{json.dumps(key)}"


def check(schema: dict, value: Any, where: str = "arguments") -> Any:
    """Validate `value` against the supported JSON-Schema subset; return it with defaults applied."""
    value = _check_type(schema, value, where)
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(json.dumps(v) for v in schema["enum"])
        raise InvalidArguments(f"{where} must be one of {allowed}")
    if isinstance(value, str):
        _check_string(schema, value, where)
    elif _is_number(value):
        _check_number(schema, value, where)
    elif isinstance(value, dict):
        value = _check_object(schema, value, where)
    return value


# --- JSON-RPC -----------------------------------------------------------------------------------------


def text_result(obj: Any) -> dict:
    return {"content": [{"type": "text", "text": json.dumps(obj)}]}


def error_result(message: str) -> dict:
    return {"isError": True, "content": [{"type": "text", "text": f"Error: {message}"}]}


class RpcError(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or _is_number(value)


class Server:
    """Dispatches JSON-RPC messages to the MCP methods of one server."""

    def __init__(self, name: str, tools: list[Tool]):
        self.name = name
        self.tools = {tool.name: tool for tool in tools}
        self.methods = {
            "initialize": self._initialize,
            "ping": lambda params: {},
            "tools/list": lambda params: {"tools": [tool.listing() for tool in self.tools.values()]},
            "tools/call": self._call_tool,
        }

    def handle_line(self, line: bytes) -> dict | None:
        """The reply to one input line, or None when nothing is to be sent."""
        if not line.strip():
            return None
        try:
            message = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            return _error(None, PARSE_ERROR, f"Parse error: {exc}")
        return self.handle_message(message)

    def handle_message(self, message: Any) -> dict | None:
        if not isinstance(message, dict):
            return _error(None, INVALID_REQUEST, "Invalid Request: expected a JSON object")
        request_id = message.get("id")
        if "method" not in message:
            if "result" in message or "error" in message:
                return None
            return _error(request_id if _valid_id(request_id) else None, INVALID_REQUEST, "Invalid Request")
        if "id" not in message:
            return None
        if not _valid_id(request_id):
            return _error(None, INVALID_REQUEST, "Invalid Request: bad id")
        method = message["method"]
        if message.get("jsonrpc") != "2.0" or not isinstance(method, str):
            return _error(request_id, INVALID_REQUEST, "Invalid Request")
        handler = self.methods.get(method)
        if handler is None:
            return _error(request_id, METHOD_NOT_FOUND, f"Method not found: {method}")
        params = message.get("params")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return _error(request_id, INVALID_PARAMS, "Invalid params: expected an object")
        try:
            return {"jsonrpc": "2.0", "id": request_id, "result": handler(params)}
        except RpcError as exc:
            return _error(request_id, exc.code, str(exc))
        except Exception as exc:
            return _error(request_id, INTERNAL_ERROR, f"Internal error: {exc}")

    def _initialize(self, params: dict) -> dict:
        requested = params.get("protocolVersion")
        version = requested if requested in PROTOCOL_VERSIONS else DEFAULT_PROTOCOL_VERSION
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": self.name, "version": SERVER_VERSION},
        }

    def _call_tool(self, params: dict) -> dict:
        name = params.get("name")
        if not isinstance(name, str):
            raise RpcError(INVALID_PARAMS, "Invalid params: name must be a string")
        tool = self.tools.get(name)
        if tool is None:
            raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        try:
            arguments = check(tool.input_schema, arguments)
        except InvalidArguments as exc:
            return error_result(f"invalid arguments: {exc}")
        try:
            return text_result(tool.handler(arguments))
        except Exception as exc:
            return error_result(str(exc))


def _error(request_id: Any, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _write(stream, message: dict) -> None:
    data = memoryview((json.dumps(message) + "\n").encode("utf-8"))
    while data:
        data = data[stream.write(data):]
    stream.flush()


def serve(name: str, tools: list[Tool]) -> None:
    """Answer stdin line by line until EOF, then exit with status 0."""
    server = Server(name, tools)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while line := stdin.readline():
        reply = server.handle_line(line)
        if reply is None:
            continue
        try:
            _write(stdout, reply)
        except BrokenPipeError:
            break
    sys.exit(0)
