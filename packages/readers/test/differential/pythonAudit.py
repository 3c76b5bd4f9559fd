"""What CPython itself does when it runs programs: the oracle of test/pythonDifferential.test.ts.

Run as the `-c` prelude of `python3 -I -S`: reads {"dir": scratch, "pure": [...], "programs": [...]}
as JSON on stdin (and "out", where the results go), installs a PEP 578 audit hook (sys.addaudithook), then for each program writes
it to a file, makes a scratch folder for it (with data.txt in it) and runs it there, the file
compiled and exec'd with the hook watching. Writes a JSON list to "out", one entry per program:

- refusable: what the run did that the C-app rules refuse wherever it happens (a process, the
  network, native code, the interpreter's frames and objects), or that the program's own code did
  (an import of a module that is not pure, an exec or compile of text, including in code the
  program built at run time);
- files: [event, path] for each file the run opened, made, listed, removed or renamed (any code
  but the import system's), for the test to check against what the reader returned;
- error: the exception that ended the program, if any (a program may fail half-way: what it did
  before counts).

Events are attributed to the program when the Python frame that raised them runs the program's
file or code compiled at run time (a file name like "<string>"); a pure module's own work (json
importing re, dataclasses compiling its __init__) is not the program's.
"""

import builtins
import json
import os
import sys

spec = json.loads(sys.stdin.read())
PURE = set(spec["pure"])
SCRATCH = spec["dir"]

# Wherever they happen: what no pure module does on its own.
ANYWHERE = (
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
    "os.kill",
    "os.killpg",
    "pty.spawn",
    "subprocess.Popen",
    "socket.",
    "ctypes.",
    "urllib.Request",
    "http.client.connect",
    "sys._current_frames",
    "sys.settrace",
    "sys.setprofile",
    "gc.get_objects",
    "gc.get_referrers",
    "gc.get_referents",
    "function.__new__",
    "code.__new__",
    "builtins.input",
    "os.putenv",
    "os.unsetenv",
)
# When the program's own code (or code it built) raised them.
OWN = ("exec", "compile", "sys._getframe", "object.__getattr__", "object.__setattr__", "object.__delattr__")
# Events on paths: (event, index of each path argument).
PATHS = {
    "open": (0,),
    "os.mkdir": (0,),
    "os.listdir": (0,),
    "os.scandir": (0,),
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.rename": (0, 1),
    "os.link": (0, 1),
    "os.symlink": (0, 1),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.truncate": (0,),
    "os.utime": (0,),
    "os.chdir": (0,),
    "shutil.copyfile": (0, 1),
    "shutil.rmtree": (0,),
    "glob.glob": (0,),
    "sqlite3.connect": (0,),
}

state = {"busy": False, "log": None, "code": None, "file": None}


def runtime_code(filename):
    return filename.startswith("<") and not filename.startswith("<frozen")


def hook(event, args):
    log = state["log"]
    if log is None or state["busy"]:
        return
    state["busy"] = True
    try:
        frame = sys._getframe(1)
        # The import wrapper below is the prelude's, not the importing code's.
        while frame is not None and frame.f_code is watched_import.__code__:
            frame = frame.f_back
        filename = frame.f_code.co_filename if frame is not None else "<frozen none>"
        own = filename == state["file"] or runtime_code(filename)
        if event == "exec" and args and args[0] is state["code"]:
            return
        if event.startswith(ANYWHERE):
            log["refusable"].append("%s %r" % (event, args)[:200])
        elif event in OWN and own:
            log["refusable"].append("%s %r" % (event, args)[:200])
        elif event == "import" and own and args[0].split(".")[0] not in PURE:
            log["refusable"].append("import %s" % args[0])
        if event in PATHS and not filename.startswith("<frozen"):
            for index in PATHS[event]:
                if index < len(args) and isinstance(args[index], (str, bytes)):
                    path = args[index]
                    if isinstance(path, bytes):
                        path = path.decode("utf-8", "surrogateescape")
                    log["files"].append([event, path])
    except Exception as error:  # noqa: BLE001 (the hook must not break the run)
        if log is not None:
            log["refusable"].append("hook error %r" % error)
    finally:
        state["busy"] = False


# `import x` in the program calls builtins.__import__, also for a module loaded already (which
# raises no audit event): it is seen here, with the frame that imports.
real_import = builtins.__import__


def watched_import(name, globals=None, locals=None, fromlist=(), level=0):
    log = state["log"]
    if log is not None and not state["busy"]:
        state["busy"] = True
        try:
            filename = sys._getframe(1).f_code.co_filename
            if filename == state["file"] or runtime_code(filename):
                if level > 0:
                    log["refusable"].append("relative import %s" % name)
                elif name.split(".")[0] not in PURE:
                    log["refusable"].append("import %s" % name)
        finally:
            state["busy"] = False
    return real_import(name, globals, locals, fromlist, level)


builtins.__import__ = watched_import
sys.addaudithook(hook)

results = []
for index, program in enumerate(spec["programs"]):
    work = os.path.join(SCRATCH, "run%d" % index)
    os.makedirs(work)
    with open(os.path.join(work, "data.txt"), "w") as data:
        data.write("data\n")
    file = os.path.join(SCRATCH, "program%d.py" % index)
    with open(file, "w", encoding="utf-8", errors="surrogatepass") as out:
        out.write(program)
    log = {"refusable": [], "files": [], "error": None}
    os.chdir(work)
    try:
        code = compile(program.encode("utf-8", "surrogatepass"), file, "exec")
    except (SyntaxError, ValueError) as error:
        log["error"] = "%s: %s" % (type(error).__name__, error)
        results.append(log)
        continue
    state.update(code=code, file=file, log=log)
    try:
        exec(code, {"__name__": "__main__", "__builtins__": builtins})
    except BaseException as error:  # noqa: BLE001 (SystemExit too: the batch goes on)
        log["error"] = "%s: %s" % (type(error).__name__, str(error)[:200])
    finally:
        state.update(code=None, file=None, log=None)
        builtins.__import__ = watched_import
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        os.chdir(SCRATCH)
    results.append(log)

with open(spec["out"], "w") as out:
    json.dump(results, out)
