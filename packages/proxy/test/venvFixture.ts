/**
 * The stdlib-only MCP server of fixtures/py-echo installed into a Python virtual environment, as
 * people install servers (pythonVenv.test.ts, policyExportRuns.test.ts).
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const PY_ECHO = join(import.meta.dirname, "fixtures", "py-echo");

/**
 * Install the fixture as pip installs a wheel: the package in site-packages, a dist-info folder,
 * and a console script in the environment's bin whose `#!` names the environment's python.
 */
export function installByLayout(venv: string, source: string = PY_ECHO): void {
  const site = spawnSync(
    join(venv, "bin", "python"),
    ["-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
    {
      encoding: "utf8",
    },
  ).stdout.trim();
  cpSync(join(source, "mcp_echo_server"), join(site, "mcp_echo_server"), { recursive: true });
  const info = join(site, "mcp_echo_server-0.1.0.dist-info");
  mkdirSync(info);
  writeFileSync(join(info, "METADATA"), "Metadata-Version: 2.1\nName: mcp-echo-server\nVersion: 0.1.0\n");
  writeFileSync(join(info, "INSTALLER"), "pip\n");
  writeFileSync(
    join(info, "entry_points.txt"),
    "[console_scripts]\nmcp-echo-server = mcp_echo_server.server:main\n",
  );
  writeFileSync(join(info, "RECORD"), "");
  const script = join(venv, "bin", "mcp-echo-server");
  writeFileSync(
    script,
    `#!${join(venv, "bin", "python3")}\n# -*- coding: utf-8 -*-\nimport re\nimport sys\nfrom mcp_echo_server.server import main\nif __name__ == '__main__':\n    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n    sys.exit(main())\n`,
    { mode: 0o755 },
  );
}

/**
 * The fixture as a wheel (a zip with its dist-info: METADATA, WHEEL, entry_points.txt and a RECORD
 * of sha256 digests), made by Python's zipfile: no `wheel` package or index is needed to install it.
 */
export function buildWheel(dir: string, source: string = PY_ECHO): string {
  const wheel = join(dir, "mcp_echo_server-0.1.0-py3-none-any.whl");
  const script = `
import base64, hashlib, os, sys, zipfile
src, out = sys.argv[1], sys.argv[2]
info = "mcp_echo_server-0.1.0.dist-info/"
files = {}
for name in sorted(os.listdir(os.path.join(src, "mcp_echo_server"))):
    path = os.path.join(src, "mcp_echo_server", name)
    if os.path.isfile(path) and name.endswith(".py"):
        files["mcp_echo_server/" + name] = open(path, "rb").read()
files[info + "METADATA"] = b"Metadata-Version: 2.1\\nName: mcp-echo-server\\nVersion: 0.1.0\\n"
files[info + "WHEEL"] = b"Wheel-Version: 1.0\\nGenerator: mcpguard-test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
files[info + "entry_points.txt"] = b"[console_scripts]\\nmcp-echo-server = mcp_echo_server.server:main\\n"
digest = lambda b: base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
record = [f"{k},sha256={digest(v)},{len(v)}" for k, v in files.items()] + [info + "RECORD,,"]
files[info + "RECORD"] = ("\\n".join(record) + "\\n").encode()
with zipfile.ZipFile(out, "w") as z:
    for k, v in files.items():
        z.writestr(k, v)
`;
  const r = spawnSync("/usr/bin/python3", ["-I", "-c", script, source, wheel], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`building the wheel: ${r.stderr}`);
  return wheel;
}
