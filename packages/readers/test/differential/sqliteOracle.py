"""What SQLite itself does with SQL texts: the differential oracle of test/sqlDifferential.test.ts.

Reads a JSON object {"setup": sql, "texts": [sql, ...]} on stdin and writes, for each text, what
the SQLite library (the one Python's sqlite3 module links, through ctypes) made of it:

- statements: SQLite's own split, statement by statement as sqlite3_prepare_v2 takes them (its
  tail pointer), with empty statements (a lone ";", a comment) left out;
- for each, the authorizer's calls while it was prepared (action code and its four arguments),
  the error of its preparation or of its run, and the files that appeared in the scratch folder
  while it ran (ATTACH, VACUUM INTO);
- error: the preparation error that ended the text (a syntax error: SQLite reads no further).

Each text gets a fresh in-memory database with the setup schema, scalar stand-ins for the sqlite3
shell's readfile(), writefile() and edit() (so that their calls reach the authorizer, as in the
shell), and a progress handler that stops a run after a bounded number of steps. Statements are
run (in the scratch folder) so that a later one sees the tables an earlier one made.
"""

import ctypes
import ctypes.util
import json
import os
import sys

lib = ctypes.CDLL(ctypes.util.find_library("sqlite3") or "libsqlite3.so.0")

c_void_p = ctypes.c_void_p
AUTH = ctypes.CFUNCTYPE(
    ctypes.c_int, c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p
)
PROGRESS = ctypes.CFUNCTYPE(ctypes.c_int, c_void_p)
FUNC = ctypes.CFUNCTYPE(None, c_void_p, ctypes.c_int, ctypes.POINTER(c_void_p))

lib.sqlite3_open_v2.argtypes = [ctypes.c_char_p, ctypes.POINTER(c_void_p), ctypes.c_int, ctypes.c_char_p]
lib.sqlite3_close_v2.argtypes = [c_void_p]
lib.sqlite3_errmsg.argtypes = [c_void_p]
lib.sqlite3_errmsg.restype = ctypes.c_char_p
lib.sqlite3_exec.argtypes = [c_void_p, ctypes.c_char_p, c_void_p, c_void_p, c_void_p]
lib.sqlite3_set_authorizer.argtypes = [c_void_p, AUTH, c_void_p]
lib.sqlite3_progress_handler.argtypes = [c_void_p, ctypes.c_int, PROGRESS, c_void_p]
lib.sqlite3_prepare_v2.argtypes = [
    c_void_p,
    c_void_p,
    ctypes.c_int,
    ctypes.POINTER(c_void_p),
    ctypes.POINTER(c_void_p),
]
lib.sqlite3_step.argtypes = [c_void_p]
lib.sqlite3_finalize.argtypes = [c_void_p]
lib.sqlite3_create_function_v2.argtypes = [
    c_void_p,
    ctypes.c_char_p,
    ctypes.c_int,
    ctypes.c_int,
    c_void_p,
    FUNC,
    c_void_p,
    c_void_p,
    c_void_p,
]
lib.sqlite3_result_null.argtypes = [c_void_p]
lib.sqlite3_libversion.restype = ctypes.c_char_p

SQLITE_OK, SQLITE_ROW, SQLITE_DONE = 0, 100, 101
SQLITE_UTF8 = 1
MAX_STEPS = 200  # progress callbacks of 1000 VM steps: a run longer than that is stopped

actions = []
steps = [0]


def text(b):
    return None if b is None else b.decode("utf-8", "replace")


@AUTH
def authorizer(_arg, code, a1, a2, a3, a4):
    actions.append([code, text(a1), text(a2), text(a3), text(a4)])
    return SQLITE_OK


@PROGRESS
def progress(_arg):
    steps[0] += 1
    return 1 if steps[0] > MAX_STEPS else 0


@FUNC
def stand_in(context, _argc, _argv):
    lib.sqlite3_result_null(context)


def scratch_files():
    return set(os.listdir("."))


def run_text(setup, sql):
    db = c_void_p()
    lib.sqlite3_open_v2(b":memory:", ctypes.byref(db), 0x2 | 0x4, None)
    try:
        if setup:
            lib.sqlite3_exec(db, setup.encode(), None, None, None)
        for name, argc in (("readfile", 1), ("writefile", -1), ("edit", -1)):
            lib.sqlite3_create_function_v2(db, name.encode(), argc, SQLITE_UTF8, None, stand_in, None, None, None)
        lib.sqlite3_set_authorizer(db, authorizer, None)
        lib.sqlite3_progress_handler(db, 1000, progress, None)
        data = sql.encode("utf-8")
        buf = ctypes.create_string_buffer(data, len(data) + 1)
        base = ctypes.addressof(buf)
        offset = 0
        statements = []
        result = {"statements": statements}
        while offset < len(data):
            stmt = c_void_p()
            tail = c_void_p()
            actions.clear()
            rc = lib.sqlite3_prepare_v2(db, base + offset, len(data) - offset, ctypes.byref(stmt), ctypes.byref(tail))
            end = (tail.value - base) if tail.value else len(data)
            if rc != SQLITE_OK:
                result["error"] = text(lib.sqlite3_errmsg(db))
                result["errorAt"] = len(data[:offset].decode("utf-8", "replace"))
                break
            if not stmt.value:
                offset = end if end > offset else len(data)
                continue
            entry = {
                "sql": data[offset:end].decode("utf-8", "replace"),
                "actions": [a for a in actions],
            }
            before = scratch_files()
            steps[0] = 0
            rc = lib.sqlite3_step(stmt)
            while rc == SQLITE_ROW:
                rc = lib.sqlite3_step(stmt)
            if rc != SQLITE_DONE:
                entry["runError"] = text(lib.sqlite3_errmsg(db))
            lib.sqlite3_finalize(stmt)
            made = sorted(scratch_files() - before)
            if made:
                entry["files"] = made
            statements.append(entry)
            offset = end
        return result
    finally:
        lib.sqlite3_close_v2(db)
        for name in os.listdir("."):
            try:
                os.unlink(name)
            except OSError:
                pass


def main():
    request = json.load(sys.stdin)
    os.chdir(request["scratch"])
    out = {
        "version": text(lib.sqlite3_libversion()),
        "results": [run_text(request.get("setup", ""), sql) for sql in request["texts"]],
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
