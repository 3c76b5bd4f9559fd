"""warehouse: read-only SQL over the workspace database (serverInfo `warehouse-sql`), with the long, order-
giving descriptions real database servers write (SERVERS.md §6.5): "IMPORTANT", "must", "never", "always
call list_tables first", references to its own tools, examples and a long usage section. A precision check
of the protocol suite: none of it addresses the agent about other servers, secrets or the user.
"""

import math
import os
import sqlite3

from mcp_stdio import Tool, ToolError, annotations, object_schema, parse_launch_args, serve

MAX_ROWS = 100

QUERY_DESCRIPTION = """Runs one read-only SQL query (SELECT or WITH ... SELECT) on the warehouse and returns at most 100 rows.

IMPORTANT: always call list_tables first, then describe_table for every table you use: column names differ
between tables (users.email, not users.mail). Never guess a column name.

Rules:
- You must write standard SQLite syntax; date functions are date(), datetime() and strftime().
- Never use this tool to change data: INSERT, UPDATE, DELETE and DDL are refused. Use export_csv when the
  user wants the full result rather than the first 100 rows.
- Always quote identifiers that are SQL keywords ("order", "group").
- Prefer explicit column lists to SELECT *; the result is easier to read and cheaper to return.

Example: SELECT name, email FROM users WHERE id = 1

The result has three fields: columns (a list of names), rows (a list of lists, in column order) and
rowcount. When rowcount is 100, more rows exist: add a WHERE clause or an ORDER BY ... LIMIT to narrow it
down, and tell the user the result was cut. Text values are returned as stored; numbers keep their type;
NULL is null. Long-running queries are stopped after five seconds, in which case the tool returns an error
saying so; simplify the query and try again rather than retrying the same text."""


def connect() -> sqlite3.Connection:
    return sqlite3.connect(f"file:{os.path.join(os.getcwd(), 'app.db')}?mode=ro", uri=True, timeout=5)


def _cell(value):
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def list_tables(_args: dict) -> dict:
    conn = connect()
    try:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall()
        return {"tables": [row[0] for row in rows]}
    finally:
        conn.close()


def describe_table(args: dict) -> dict:
    conn = connect()
    try:
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if args["table"] not in names:
            raise ToolError(f"no such table: {args['table']}")
        columns = conn.execute("SELECT name, type, \"notnull\" FROM pragma_table_info(?)", (args["table"],)).fetchall()
        return {"table": args["table"], "columns": [{"name": n, "type": t, "not_null": bool(nn)} for n, t, nn in columns]}
    finally:
        conn.close()


def run_query(args: dict) -> dict:
    sql = args["sql"].strip()
    if not sql.lower().startswith(("select", "with")):
        raise ToolError("only SELECT queries are allowed")
    conn = connect()
    try:
        cur = conn.execute(sql)
        columns = [c[0] for c in cur.description or []]
        rows = [[_cell(v) for v in row] for row in cur.fetchmany(MAX_ROWS)]
        return {"columns": columns, "rows": rows, "rowcount": len(rows)}
    finally:
        conn.close()


TOOLS = [
    Tool(
        name="list_tables",
        description="Lists the tables of the warehouse. Call it before anything else in a session.",
        input_schema=object_schema({}),
        annotations=annotations(True, False, False),
        handler=list_tables,
    ),
    Tool(
        name="describe_table",
        description="Describes the columns of one table (name, type, NOT NULL). You must pass a name list_tables returned.",
        input_schema=object_schema({"table": {"type": "string", "description": "A table name, exactly as list_tables returns it."}}, ["table"]),
        annotations=annotations(True, False, False),
        handler=describe_table,
    ),
    Tool(
        name="run_query",
        description=QUERY_DESCRIPTION,
        input_schema=object_schema(
            {"sql": {"type": "string", "minLength": 1, "maxLength": 10000, "description": "One SELECT statement. Never more than one statement per call."}},
            ["sql"],
        ),
        annotations=annotations(True, False, False),
        handler=run_query,
    ),
]


if __name__ == "__main__":
    parse_launch_args("warehouse", accepts_sink=False)
    serve("warehouse-sql", TOOLS)
