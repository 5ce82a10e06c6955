"""A background tool on a broker-backed tasks backend: RQ on a Redis of the test's own, through
django-tasks-rq, with a real ``manage.py rqworker`` beside a real ``runserver`` (tests/e2e/background).

A client over HTTP that follows tasks calls the tool and polls ``tasks/get`` until the worker's handler
is done; another run is cancelled mid-run and reaches a terminal status well within the 10 s the
conformance suite allows. mcpforms only enqueues: nothing here but the project's TASKS setting knows RQ.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests import wire
from tests.conformance.run import ROOT, running_server, stop_process
from tests.e2e.services import private_redis

TASKS: dict[str, Any] = {"elicitation": {"form": {}}, "extensions": {"io.modelcontextprotocol/tasks": {}}}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Path]]:
    """The server's MCP endpoint, the database file it shares with one RQ worker, and the worker's log."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    directory = tmp_path_factory.mktemp("background")
    database = directory / "db.sqlite3"
    with private_redis(directory) as redis:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.e2e.background.settings",
            "BACKGROUND_DATABASE": str(database),
            "BACKGROUND_REDIS_PORT": str(redis.port),
            "PYTHONUNBUFFERED": "1",
        }
        env.pop("DATABASE_URL", None)
        manage = [sys.executable, "manage.py"]
        subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=env, check=True)
        log = directory / "rqworker.log"
        # RQ's own worker, told to run each job through django-tasks-rq's Job (which calls the Task).
        worker = subprocess.Popen(
            [*manage, "rqworker", "--job-class", "django_tasks_rq.Job", "default"],
            cwd=ROOT,
            env=env,
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
        )
        try:
            with running_server(directory / "runserver.log", env=env) as port:
                yield f"http://127.0.0.1:{port}/mcp", database, log
        finally:
            stop_process(worker, timeout=10)
            print(log.read_text()[-4000:])  # shown with a failure


def send(url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One request over Streamable HTTP, as a 2026-07-28 client sends it, opted in to the tasks extension."""
    payload = wire.message(method, params, capabilities=TASKS)
    headers = {
        **wire.headers(payload),
        # The tasks extension mirrors the task a tasks/* request is about into Mcp-Name.
        **({"Mcp-Name": params["taskId"]} if "taskId" in params else {}),
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    response = httpx2.post(url, content=json.dumps(payload), headers=headers, timeout=30)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert "result" in body, body
    result: dict[str, Any] = body["result"]
    return result


def poll(url: str, task_id: str, *, until: frozenset[str], within: float) -> tuple[dict[str, Any], list[str]]:
    """``tasks/get`` every 100 ms until the task's status is one of ``until``; the task then, and the
    status messages it had while it was still working."""
    deadline = time.monotonic() + within
    seen: list[str] = []
    while True:
        task = send(url, "tasks/get", {"taskId": task_id})
        if task["status"] == "working" and task.get("statusMessage") not in (None, *seen):
            seen.append(task["statusMessage"])
        if task["status"] in until or time.monotonic() > deadline:
            return task, seen
        time.sleep(0.1)


def colours(database: Path, name: str) -> int:
    with sqlite3.connect(database) as connection:
        (count,) = connection.execute(
            "SELECT count(*) FROM testapp_colour WHERE name = ?", (name,)
        ).fetchone()
    return int(count)


TERMINAL = frozenset({"completed", "failed", "cancelled"})


def test_the_rq_worker_runs_the_handler_and_the_client_polls_its_result(site):
    url, database, _ = site
    task = send(url, "tools/call", {"name": "mix", "arguments": {"name": "teal", "steps": 5}})
    assert (task["resultType"], task["status"], task["statusMessage"]) == ("task", "working", "Queued")
    done, seen = poll(url, task["taskId"], until=TERMINAL, within=60)
    assert done["status"] == "completed", done
    assert done["result"]["content"] == [{"type": "text", "text": "Mixed teal in 5 steps"}]
    assert any(message.startswith("Step ") for message in seen), seen  # its progress, while it ran
    assert colours(database, "teal") == 1


def finished_jobs(log: Path) -> int:
    """How many jobs the worker has finished, by its log ("Job OK" once a job's function returned)."""
    return log.read_text().count("Job OK")


def test_a_cancel_mid_run_reaches_a_terminal_status_within_ten_seconds(site):
    url, database, log = site
    task = send(url, "tools/call", {"name": "mix", "arguments": {"name": "ochre", "steps": 100}})
    deadline = time.monotonic() + 60
    while True:  # until the handler runs, as its progress shows
        running = send(url, "tasks/get", {"taskId": task["taskId"]})
        if running["status"] == "working" and running.get("statusMessage", "").startswith("Step"):
            break
        assert running["status"] == "working" and time.monotonic() < deadline, running
        time.sleep(0.1)
    finished = finished_jobs(log)
    asked_at = time.monotonic()
    assert "resultType" in send(url, "tasks/cancel", {"taskId": task["taskId"]})  # an empty ack
    ended, _ = poll(url, task["taskId"], until=TERMINAL, within=10)
    assert ended["status"] == "cancelled", ended
    assert time.monotonic() - asked_at < 10
    # The handler (100 steps of 0.2 s) stops at its next step, well before its end, and saves nothing.
    while finished_jobs(log) == finished:
        assert time.monotonic() - asked_at < 5, "the handler went on after the cancel"
        time.sleep(0.1)
    assert colours(database, "ochre") == 0
    assert send(url, "tasks/get", {"taskId": task["taskId"]})["status"] == "cancelled"
