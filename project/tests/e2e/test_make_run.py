"""`make run` as a person runs it, on a SQLite file of the test's own: it migrates, seeds, and serves the
demo with a tasks worker (`manage.py db_worker`) beside `runserver`. A client that follows tasks calls the
background tool ``export_tickets`` and the worker runs it, while the client watches its progress. Ctrl-C
stops the server and the worker alike."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests import wire
from tests.conformance.run import ROOT, free_port, wait_until_listening

TASKS: dict[str, Any] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}


def _interruptible() -> None:
    """Give the process SIGINT's default action, which a terminal's foreground job has."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class MakeRun:
    """One `make run`, in a process group of its own: the group a terminal's Ctrl-C reaches."""

    def __init__(self, directory: Path, port: int) -> None:
        (directory / "make_run_settings.py").write_text(
            "from project.settings import *\n"
            f"DATABASES['default']['NAME'] = {str(directory / 'db.sqlite3')!r}\n"
        )
        self.env = {
            **os.environ,
            "PYTHONPATH": f"{directory}{os.pathsep}{ROOT}",
            "DJANGO_SETTINGS_MODULE": "make_run_settings",
            "PYTHONUNBUFFERED": "1",
        }
        self.env.pop("DATABASE_URL", None)
        self.port = port
        self.log = directory / f"make-run-{port}.log"
        self.url = f"http://127.0.0.1:{port}/mcp"
        # -o: the virtualenv is taken as installed, whatever the age of pyproject.toml.
        command = [
            "make",
            "--no-print-directory",
            "-o",
            ".venv/.demo-installed",
            "run",
            f"RUN_ADDRESS=127.0.0.1:{port}",
        ]
        with self.log.open("wb") as output:
            self.make = subprocess.Popen(
                command,
                cwd=ROOT,
                env=self.env,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                # As from a terminal: `make test` runs this lane in the background of a shell, whose
                # children inherit SIGINT ignored, and a shell cannot trap a signal ignored on entry.
                preexec_fn=_interruptible,
            )

    def commands(self) -> list[str]:
        """The command lines of every process still in the group."""
        listed = subprocess.run(["ps", "-eo", "pgid=,args="], capture_output=True, text=True, check=True)
        rows = (line.strip().split(None, 1) for line in listed.stdout.splitlines())
        return [row[1] for row in rows if len(row) == 2 and row[0] == str(self.make.pid)]

    def ended(self, within: float) -> list[str]:
        """Wait for make, then for the rest of its group, to exit; what is left then (nothing, we hope)."""
        self.make.wait(timeout=within)
        deadline = time.monotonic() + within
        while (left := self.commands()) and time.monotonic() < deadline:
            time.sleep(0.1)
        return left

    def stop(self) -> None:
        """Whatever the test did, leave no process behind."""
        if self.commands():
            os.killpg(self.make.pid, signal.SIGKILL)
        self.make.wait()

    def token(self) -> str:
        """A personal access token of the demo's staff user, made as docs/tutorials/demo.md says."""
        made = subprocess.run(
            [sys.executable, "manage.py", "mcpforms_token", "create", "staff", "--quiet"],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        )
        return made.stdout.strip()


@contextmanager
def make_run(directory: Path) -> Iterator[MakeRun]:
    run = MakeRun(directory, free_port())
    try:
        yield run
    finally:
        run.stop()
        # Shown with a failure: what the server and the worker said, but runserver's line per request.
        said = [line for line in run.log.read_text().splitlines() if '"POST /mcp' not in line]
        print("\n".join(said[-60:]))


def send(run: MakeRun, token: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One request as a 2026-07-28 client that follows tasks sends it, as the staff user."""
    payload = wire.message(method, params, capabilities=TASKS)
    headers = {
        **wire.headers(payload),
        **({"Mcp-Name": params["taskId"]} if "taskId" in params else {}),
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    response = httpx2.post(run.url, content=json.dumps(payload), headers=headers, timeout=30)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["result"]
    return result


def poll(
    run: MakeRun, token: str, task: dict[str, Any], *, within: float
) -> tuple[dict[str, Any], list[str]]:
    """``tasks/get`` every 200 ms while the task is working; the task then, and its status messages."""
    seen: list[str] = []
    deadline = time.monotonic() + within
    while (polled := send(run, token, "tasks/get", {"taskId": task["taskId"]}))["status"] == "working":
        if polled["statusMessage"] not in seen:
            seen.append(polled["statusMessage"])
        if time.monotonic() > deadline:
            break
        time.sleep(0.2)
    return polled, seen


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MakeRun, str]]:
    """A `make run` serving, and a token of its staff user."""
    with make_run(tmp_path_factory.mktemp("make-run")) as run:
        wait_until_listening(run.port, run.make, run.log, timeout=60)
        yield run, run.token()


def test_make_run_starts_a_worker_that_runs_what_a_tasks_client_leaves_to_the_background(demo):
    run, token = demo
    assert any("manage.py db_worker" in command for command in run.commands())
    # No low-priority ticket: the export has nothing to report on the way.
    task = send(run, token, "tools/call", {"name": "export_tickets", "arguments": {"priority": "low"}})
    assert (task["resultType"], task["status"], task["statusMessage"]) == ("task", "working", "Queued")
    done, _ = poll(run, token, task, within=20)
    assert done["status"] == "completed", done
    assert done["result"]["content"] == [{"type": "text", "text": "Exported 0 ticket(s)."}]


def test_the_client_watches_the_exports_progress_while_the_worker_runs_it(demo):
    run, token = demo
    task = send(run, token, "tools/call", {"name": "export_tickets", "arguments": {}})
    done, seen = poll(run, token, task, within=10)
    assert done["status"] == "completed", (done, seen)
    assert done["result"]["content"] == [{"type": "text", "text": "Exported 2 ticket(s)."}]
    # The handler's progress, as the worker reported it between its steps.
    assert "Exporting ticket 1 of 2: VPN drops every hour" in seen, seen


def test_ctrl_c_stops_the_server_and_the_worker(demo):
    # The last test of the module: it ends the `make run` the others share.
    run, _ = demo
    assert any("manage.py db_worker" in command for command in run.commands())
    os.killpg(run.make.pid, signal.SIGINT)  # what Ctrl-C in the terminal sends
    assert run.ended(within=20) == []
