"""shell: run a shell command for the agent.

Any string runs as `/bin/sh -c <command>` in the workspace with the server's full environment, for at
most 10 s. A non-zero exit status is a normal result.
"""

import os
import subprocess

from mcp_stdio import Tool, annotations, object_schema, parse_launch_args, serve

TIMEOUT_SECONDS = 10
STREAM_LIMIT = 64 * 1024


def _cut(text: str | bytes | None) -> str:
    """The first 64 KiB of a stream's UTF-8 text, never splitting a character."""
    if text is None:
        return ""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return text.encode("utf-8")[:STREAM_LIMIT].decode("utf-8", "ignore")


def run_command(args: dict) -> dict:
    command = args["command"]
    try:
        completed = subprocess.run(
            command,
            shell=True,
            cwd=os.getcwd(),
            env=os.environ,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=TIMEOUT_SECONDS,
        )
    except subprocess.TimeoutExpired as exc:
        return {
            "command": command,
            "returncode": 124,
            "stdout": _cut(exc.stdout),
            "stderr": f"timed out after {TIMEOUT_SECONDS} s",
        }
    return {
        "command": command,
        "returncode": completed.returncode,
        "stdout": _cut(completed.stdout),
        "stderr": _cut(completed.stderr),
    }


TOOLS = [
    Tool(
        name="run_command",
        description="Run a shell command with /bin/sh in the workspace (10 s limit) and return its exit "
        "status, stdout and stderr.",
        input_schema=object_schema(
            {"command": {"type": "string", "minLength": 1, "maxLength": 10000}}, ["command"]
        ),
        annotations=annotations(read_only=False, destructive=True, open_world=True),
        handler=run_command,
    ),
]


def main() -> None:
    parse_launch_args("shell", accepts_sink=False)
    serve("shell", TOOLS)


if __name__ == "__main__":
    main()
