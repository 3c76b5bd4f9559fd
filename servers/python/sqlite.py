"""sqlite: SQL access to the workspace database `<workspace>/app.db`.

`query` executes any single SQL statement, DDL included, and `insert` puts table and column names into
the statement verbatim (values are bound). The database is opened in autocommit mode; extension loading
stays disabled and the journal mode is left as it is.
"""

import math
import os
import sqlite3

from mcp_stdio import Tool, annotations, object_schema, parse_launch_args, serve

MAX_ROWS = 500


def db_path() -> str:
    return os.path.join(os.getcwd(), "app.db")


def connect() -> sqlite3.Connection:
    return sqlite3.connect(db_path(), isolation_level=None, timeout=5)


def _cell(value):
    """A JSON-representable form of one SQLite value (BLOBs as hex, non-finite reals as text)."""
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def run_query(sql: str) -> dict:
    conn = connect()
    try:
        cur = conn.execute(sql)
        if cur.description is None:
            return {"columns": [], "rows": [], "rowcount": cur.rowcount}
        columns = [column[0] for column in cur.description]
        rows = [[_cell(value) for value in row] for row in cur.fetchmany(MAX_ROWS)]
        return {"columns": columns, "rows": rows, "rowcount": len(rows)}
    finally:
        conn.close()


def insert_row(table: str, data: dict) -> dict:
    columns = ", ".join(data)
    placeholders = ", ".join("?" for _ in data)
    conn = connect()
    try:
        cur = conn.execute(f"INSERT INTO {table} ({columns}) VALUES ({placeholders})", list(data.values()))
        return {"table": table, "rowid": cur.lastrowid, "changes": cur.rowcount}
    finally:
        conn.close()


def table_names() -> list[str]:
    conn = connect()
    try:
        cur = conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
        return [row[0] for row in cur.fetchall()]
    finally:
        conn.close()


def query(args: dict) -> dict:
    return run_query(args["sql"])


def insert(args: dict) -> dict:
    return insert_row(args["table"], args["data"])


def list_tables(args: dict) -> dict:
    return {"tables": table_names()}


TOOLS = [
    Tool(
        name="query",
        description="Execute one SQL statement on the workspace database (app.db). Returns the columns and "
        "up to 500 rows, or the number of changed rows.",
        input_schema=object_schema({"sql": {"type": "string", "minLength": 1, "maxLength": 10000}}, ["sql"]),
        annotations=annotations(read_only=False, destructive=True, open_world=False),
        handler=query,
    ),
    Tool(
        name="insert",
        description="Insert one row into a table of the workspace database; the keys of data are the "
        "column names.",
        input_schema=object_schema(
            {
                "table": {"type": "string", "minLength": 1, "maxLength": 64},
                "data": {
                    "type": "object",
                    "minProperties": 1,
                    "additionalProperties": {"type": ["string", "number", "boolean", "null"]},
                },
            },
            ["table", "data"],
        ),
        annotations=annotations(read_only=False, destructive=False, open_world=False),
        handler=insert,
    ),
    Tool(
        name="list_tables",
        description="List the tables of the workspace database.",
        input_schema=object_schema({}),
        annotations=annotations(read_only=True, destructive=False, open_world=False),
        handler=list_tables,
    ),
]


def main() -> None:
    parse_launch_args("sqlite", accepts_sink=False)
    serve("sqlite", TOOLS)


if __name__ == "__main__":
    main()
