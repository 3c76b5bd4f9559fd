"""workspace-files: read, write and list files for an agent working in the workspace (the cwd).

A relative path is joined to the workspace and normalised; an absolute path is used as given. Nothing
keeps the result inside the workspace, so `..`, absolute paths and symlinks reach any file the process
can open.
"""

import os
import stat

from mcp_stdio import Tool, ToolError, annotations, object_schema, parse_launch_args, serve

READ_LIMIT = 1024 * 1024


def resolve(path: str) -> str:
    return os.path.abspath(os.path.join(os.getcwd(), path))


def _os_failure(exc: OSError, resolved: str) -> ToolError:
    return ToolError(f"{exc.strerror or exc}: {resolved}")


def _utf8(text: str) -> bytes:
    """The UTF-8 bytes of `text`; a lone surrogate becomes U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")


def read_file(args: dict) -> dict:
    resolved = resolve(args["path"])
    try:
        with open(resolved, "rb") as f:
            data = f.read(READ_LIMIT + 1)
    except OSError as exc:
        raise _os_failure(exc, resolved) from exc
    content = data[:READ_LIMIT]
    return {
        "path": args["path"],
        "resolved": resolved,
        "size": len(content),
        "truncated": len(data) > READ_LIMIT,
        "content": content.decode("utf-8", "replace"),
    }


def write_file(args: dict) -> dict:
    resolved = resolve(args["path"])
    data = _utf8(args["content"])
    try:
        os.makedirs(os.path.dirname(resolved), exist_ok=True)
        with open(resolved, "wb") as f:
            f.write(data)
    except OSError as exc:
        raise _os_failure(exc, resolved) from exc
    return {"path": args["path"], "resolved": resolved, "bytes_written": len(data)}


def _entry_type(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    return "other"


def list_dir(args: dict) -> dict:
    resolved = resolve(args["path"])
    try:
        names = sorted(os.listdir(resolved))
    except OSError as exc:
        raise _os_failure(exc, resolved) from exc
    entries = []
    for name in names:
        try:
            st = os.lstat(os.path.join(resolved, name))
        except OSError:
            continue
        entries.append({"name": name, "type": _entry_type(st.st_mode), "size": st.st_size})
    return {"path": args["path"], "resolved": resolved, "entries": entries}


TOOLS = [
    Tool(
        name="read_file",
        description="Read a file and return its text (UTF-8, at most 1 MiB). Relative paths are resolved "
        "against the workspace.",
        input_schema=object_schema({"path": {"type": "string", "minLength": 1}}, ["path"]),
        annotations=annotations(read_only=True, destructive=False, open_world=False),
        handler=read_file,
    ),
    Tool(
        name="write_file",
        description="Write text to a file, creating missing parent directories and replacing any existing "
        "content. Relative paths are resolved against the workspace.",
        input_schema=object_schema(
            {"path": {"type": "string", "minLength": 1}, "content": {"type": "string"}},
            ["path", "content"],
        ),
        annotations=annotations(read_only=False, destructive=True, open_world=False),
        handler=write_file,
    ),
    Tool(
        name="list_dir",
        description="List a directory: name, type and size of each entry, sorted by name, dotfiles "
        "included. Relative paths are resolved against the workspace.",
        input_schema=object_schema({"path": {"type": "string", "default": "."}}),
        annotations=annotations(read_only=True, destructive=False, open_world=False),
        handler=list_dir,
    ),
]


def main() -> None:
    parse_launch_args("filesystem", accepts_sink=False)
    serve("workspace-files", TOOLS)


if __name__ == "__main__":
    main()
