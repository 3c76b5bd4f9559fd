"""notes: a small note store in `<workspace>/notes/<id>.json`.

Each note is `{"id", "title", "content", "created_at"}`, written with `json.dumps(note, indent=2)`.
Note ids are validated against `ID_PATTERN` before they are used in a path.
"""

import json
import os
import re
import time

from mcp_stdio import Tool, ToolError, annotations, object_schema, parse_launch_args, serve

ID_PATTERN = "^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"
_ID_RE = re.compile(ID_PATTERN.strip("^$"))
SLUG_LENGTH = 48
SNIPPET_LENGTH = 100


def notes_dir() -> str:
    return os.path.join(os.getcwd(), "notes")


def note_path(note_id: str) -> str:
    return os.path.join(notes_dir(), f"{note_id}.json")


def slugify(title: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:SLUG_LENGTH]
    return slug or "note"


def load_note(note_id: str) -> dict | None:
    """The note stored under `note_id`, or None if it is missing or unparseable."""
    try:
        with open(note_path(note_id), encoding="utf-8") as f:
            stored = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict):
        return None
    title, content = stored.get("title"), stored.get("content")
    if not isinstance(title, str) or not isinstance(content, str):
        return None
    return {"id": note_id, "title": title, "content": content, "created_at": stored.get("created_at")}


def load_notes() -> list[dict]:
    """Every parseable note, sorted by id."""
    try:
        names = os.listdir(notes_dir())
    except FileNotFoundError:
        return []
    notes = []
    for name in names:
        note_id, ext = os.path.splitext(name)
        if ext == ".json" and _ID_RE.fullmatch(note_id):
            note = load_note(note_id)
            if note is not None:
                notes.append(note)
    return sorted(notes, key=lambda note: note["id"])


def store_note(title: str, content: str) -> dict:
    """Write a new note under the first free id derived from the title."""
    os.makedirs(notes_dir(), exist_ok=True)
    base = slugify(title)
    created_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    suffix = 1
    while True:
        note_id = base if suffix == 1 else f"{base}-{suffix}"
        note = {"id": note_id, "title": title, "content": content, "created_at": created_at}
        try:
            with open(note_path(note_id), "x", encoding="utf-8") as f:
                f.write(json.dumps(note, indent=2))
            return note
        except FileExistsError:
            suffix += 1


def search(query: str, limit: int) -> list[dict]:
    needle = query.lower()
    matches = [
        note for note in load_notes() if needle in note["title"].lower() or needle in note["content"].lower()
    ]
    return matches[:limit]


def create_note(args: dict) -> dict:
    note = store_note(args["title"], args["content"])
    return {"id": note["id"], "title": note["title"], "created_at": note["created_at"]}


def search_notes(args: dict) -> dict:
    results = [
        {"id": note["id"], "title": note["title"], "snippet": note["content"][:SNIPPET_LENGTH]}
        for note in search(args["query"], args["limit"])
    ]
    return {"query": args["query"], "count": len(results), "results": results}


def read_note(args: dict) -> dict:
    note = load_note(args["id"])
    if note is None:
        raise ToolError(f"note not found: {args['id']}")
    return note


ID_SCHEMA = {"type": "string", "pattern": ID_PATTERN}
READ_ONLY = annotations(read_only=True, destructive=False, open_world=False)

TOOLS = [
    Tool(
        name="create_note",
        description="Create a note. Its id is derived from the title (lower-case, dashes), made unique "
        "with a numeric suffix.",
        input_schema=object_schema(
            {
                "title": {"type": "string", "minLength": 1, "maxLength": 200},
                "content": {"type": "string", "maxLength": 10000},
            },
            ["title", "content"],
        ),
        annotations=annotations(read_only=False, destructive=False, open_world=False),
        handler=create_note,
    ),
    Tool(
        name="search_notes",
        description="Search notes by title and content (case-insensitive substring match), sorted by id.",
        input_schema=object_schema(
            {
                "query": {"type": "string", "minLength": 1, "maxLength": 200},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 20},
            },
            ["query"],
        ),
        annotations=READ_ONLY,
        handler=search_notes,
    ),
    Tool(
        name="read_note",
        description="Read a note by id.",
        input_schema=object_schema({"id": ID_SCHEMA}, ["id"]),
        annotations=READ_ONLY,
        handler=read_note,
    ),
]


def main() -> None:
    parse_launch_args("notes", accepts_sink=False)
    serve("notes", TOOLS)


if __name__ == "__main__":
    main()
