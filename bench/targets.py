"""The servers ``bench/http_flow.py`` measures, the flows it sends them, and what one turn of load reads.

A ``Target`` is one server and one flow: a whole two-round flow, or round one alone (``round_one``), whose
CPU is subtracted from the whole flow's to give round two's. Several targets share a server (the plain and
the ``signup_write`` tool of the same process), so that every server starts once.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from bench import load, lock_wait
from bench.flows import (
    ANSWER,
    ARGUMENTS,
    EMAIL,
    TOOL,
    FlowError,
    answers_for,
    call_body,
    check_done,
    headers_for,
    result_of,
)
from bench.procfs import TICKS_PER_SECOND, machine_ticks
from bench.servers import ROOT, ServerProcess, free_port
from bench.writes import CREATE

BIN = Path(sys.executable).parent
SETTINGS = "bench.http_settings"
WORKERS = 2


def mcp_flow(tool: str = TOOL) -> load.Flow:
    """The two rounds of one ``tool`` flow, the second with the first's ``requestState``."""
    headers = headers_for(tool)

    def flow(post: load.Poster) -> None:
        first = result_of(post("/mcp", call_body(1, tool=tool), headers))
        second = call_body(2, answers_for(first), tool=tool)
        check_done(result_of(post("/mcp", second, headers, label="last")))

    return flow


def mcp_round_one(post: load.Poster) -> None:
    """Round one of a ``signup`` flow alone: the call that asks."""
    answers_for(result_of(post("/mcp", call_body(1), headers_for(TOOL))))


def padded(data: Mapping[str, object], size: int) -> bytes:
    """``data`` as JSON of ``size`` bytes, with a ``pad`` key the form ignores."""
    body = json.dumps({**data, "pad": ""})
    return (body[: -len('"}')] + "x" * max(0, size - len(body)) + '"}').encode()


def bare_flow(request_sizes: list[int], path: str = "/bare", *, rounds: int = 2) -> load.Flow:
    """The bare view's two requests padded to mcpforms' sizes (or the first alone, ``rounds=1``)."""
    first, second = padded(ARGUMENTS, request_sizes[0]), padded(ANSWER, request_sizes[1])

    def flow(post: load.Poster) -> None:
        if b"errors" not in post(path, first):
            raise FlowError("the bare view did not answer as SignupForm would")
        if rounds == 2 and EMAIL.encode() not in post(path, second, label="last"):
            raise FlowError("the bare view did not answer as SignupForm would")

    return flow


def message_sizes(port: int) -> tuple[list[int], list[int]]:
    """The byte sizes of one mcpforms flow's two requests and two answers."""
    post = load.Poster(port)
    requests = [call_body(1)]
    answers = [post("/mcp", requests[0], headers_for(TOOL))]
    requests.append(call_body(2, answers_for(result_of(answers[0]))))
    answers.append(post("/mcp", requests[1], headers_for(TOOL)))
    check_done(result_of(answers[1]))
    return [len(body) for body in requests], [len(body) for body in answers]


class BenchServer(ServerProcess):
    """A ``ServerProcess`` whose workers count their lock wait in ``MCPFORMS_BENCH_LOCKS``."""

    def lock_wait(self) -> tuple[int, int]:
        folder = self.env.get("MCPFORMS_BENCH_LOCKS")
        return lock_wait.read(Path(folder)) if folder else (0, 0)


@dataclass(eq=False)  # a target is itself: turns and rows find it by identity
class Target:
    """One flow on one server, and what each of its turns measured."""

    name: str
    server: BenchServer
    flow: load.Flow
    flows: int = 0
    errors: int = 0
    seconds: float = 0.0
    ticks: list[int] = field(default_factory=list)
    turn_flows: list[int] = field(default_factory=list)
    busy_ticks: int = 0
    machine_ticks: int = 0
    lock_ns: int = 0
    begins: int = 0
    latencies: list[float] = field(default_factory=list)
    first_error: str = ""

    def turn(self, *, seconds: float, connections: int) -> None:
        user, system = self.server.cpu_ticks()
        busy, total = machine_ticks()
        locked, begins = self.server.lock_wait()
        started = time.monotonic()
        tally = load.run(self.flow, self.server.port, seconds=seconds, connections=connections)
        self.seconds += time.monotonic() - started
        busy_after, total_after = machine_ticks()
        user_after, system_after = self.server.cpu_ticks()
        locked_after, begins_after = self.server.lock_wait()
        self.ticks.append(user_after - user + system_after - system)
        self.turn_flows.append(tally.flows)
        self.flows += tally.flows
        self.errors += tally.errors
        self.busy_ticks += busy_after - busy
        self.machine_ticks += total_after - total
        self.lock_ns += locked_after - locked
        self.begins += begins_after - begins
        self.latencies += tally.latencies.get("last", [])
        self.first_error = self.first_error or tally.first_error

    def cpu_ms(self) -> float:
        """CPU time of the server's workers per flow (or per round, for round one alone), in ms."""
        return sum(self.ticks) / TICKS_PER_SECOND / max(self.flows, 1) * 1e3


def with_locks(env: Mapping[str, str], folder: Path, name: str) -> dict[str, str]:
    locks = folder / f"locks-{name}"
    locks.mkdir(exist_ok=True)
    return {**env, "MCPFORMS_BENCH_LOCKS": str(locks)}


def gunicorn(name: str, env: dict[str, str]) -> BenchServer:
    port = free_port()
    argv = [str(BIN / "gunicorn"), "project.wsgi:application", "--workers", str(WORKERS)]
    argv += ["--worker-class", "sync", "--bind", f"127.0.0.1:{port}", "--log-level", "warning"]
    return BenchServer(name, argv, port, WORKERS, {"DJANGO_SETTINGS_MODULE": SETTINGS, **env})


def bare_server(name: str, env: dict[str, str]) -> BenchServer:
    """The bare view under the same gunicorn, on ``bench.http_settings`` less mcpforms."""
    return gunicorn(name, {**env, "DJANGO_SETTINGS_MODULE": "bench.bare_settings"})


def demo_server(name: str, env: dict[str, str]) -> BenchServer:
    """mcpforms as the demo runs it (``bench.demo_settings``: OAuth, django-tasks, the demo's tools)."""
    return gunicorn(name, {**env, "DJANGO_SETTINGS_MODULE": "bench.demo_settings"})


def sdk_server(env: dict[str, str]) -> BenchServer | str:
    """The official SDK's ``MCPServer`` under uvicorn, or why it cannot run."""
    if importlib.util.find_spec("mcp") is None or importlib.util.find_spec("uvicorn") is None:
        return "the mcp and uvicorn packages are not installed in this environment"
    port = free_port()
    argv = [str(BIN / "uvicorn"), "bench.sdk_server:app", "--workers", str(WORKERS), "--port", str(port)]
    argv += ["--log-level", "warning", "--no-access-log"]
    return BenchServer("MCPServer", argv, port, WORKERS, env)


def mcpz_server(name: str, env: dict[str, str]) -> BenchServer | str:
    """django-mcpz 1.2 under the same gunicorn, from a virtualenv of its own, or why it cannot run."""
    venv = ROOT / "bench" / ".venvs" / "mcpz"
    stamp = venv / ".installed"
    # The same Django, gunicorn and PostgreSQL driver as this environment's: only the MCP layer differs.
    pins = []
    for package in ("django", "gunicorn", "psycopg", "psycopg-binary"):
        try:
            pins.append(f"{package}=={version(package)}")
        except PackageNotFoundError:
            continue
    if not stamp.exists() or stamp.read_text().split() != pins:
        print("Installing django-mcpz 1.2 into bench/.venvs/mcpz (once)...", flush=True)
        try:
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
            pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "django-mcpz==1.2.*"]
            subprocess.run([*pip, *pins], check=True, capture_output=True, text=True)
        except subprocess.CalledProcessError as error:
            return f"it did not install: {(error.stderr or '').strip().splitlines()[-1:]}"
        stamp.write_text("\n".join(pins))
    server = gunicorn(name, {**env, "DJANGO_SETTINGS_MODULE": "bench.mcpz_settings"})
    server.argv[0] = str(venv / "bin" / "gunicorn")
    return server


def migrate(env: Mapping[str, str]) -> None:
    command = [sys.executable, "manage.py", "migrate", "--noinput", "--skip-checks", "-v0"]
    subprocess.run(command, cwd=ROOT, env={**os.environ, **env}, check=True)


def prepare_database(path: Path, *, tuned: bool) -> tuple[dict[str, str], str]:
    """Migrate a SQLite file for the targets, with the bench table; the environment they need to use it,
    and its journal mode.

    ``tuned``: as ``project.settings`` configures SQLite (its ``init_command`` puts the file in WAL);
    otherwise as Django does by default.
    """
    env = {"DJANGO_SETTINGS_MODULE": SETTINGS, "MCPFORMS_BENCH_DB": str(path)}
    if not tuned:
        env["MCPFORMS_BENCH_SQLITE"] = "django"
    migrate(env)
    with sqlite3.connect(path) as connection:
        connection.execute(CREATE["sqlite"])
        journal: str = connection.execute("PRAGMA journal_mode").fetchone()[0]
    return env, journal
