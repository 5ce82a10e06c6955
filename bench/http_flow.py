"""What a two-round form flow costs a real server, per flow, as a ratio to a bare Django view: one command.

Run: ``make bench``, or ``.venv/bin/python bench/http_flow.py [--seconds N] [--connections C] [--rounds R]``
(Linux: it reads ``/proc``); about three minutes with the defaults. It prints a table and two sections,
and asserts nothing:

- **HTTP**: each target is served by its own server of 2 worker processes on a free local port, with
  ``bench.http_settings`` (the demo without middleware, on a SQLite file configured as the demo's
  ``project.settings`` configures it: WAL, ``synchronous=NORMAL``, persistent connections):
  - ``bare view``: gunicorn (2 sync workers), a view binding ``SignupForm`` to the posted JSON; its
    requests and answers are padded to the byte sizes of mcpforms' in the same round: the floor;
  - ``bare view + record``: the same, and a valid form's reply recorded in ``CompletedFlow`` as mcpforms
    records a completed flow: what exactly-once costs with nothing else of MCP;
  - ``mcpforms``: the same gunicorn and settings, the demo's ``signup`` tool at ``/mcp``: round one asks
    (``input_required``), round two answers with the ``requestState`` of that flow's round one and
    completes (the completion is recorded in the database);
  - ``mcpforms, SQLite as Django sets it``: the same, on a second file left at Django's defaults (the
    rollback journal, a connection per request), what a project that never tuned SQLite gets;
  - ``MCPServer``, optional: the official SDK's server with an equivalent tool (``bench/sdk_server.py``)
    under uvicorn with 2 workers; skipped, with the reason, when ``mcp`` does not import;
  - ``django-mcpz 1.2``, optional: its ``MCPServer`` with an equivalent tool binding the same form
    (``bench/mcpz_server.py``), under the same gunicorn and settings less mcpforms, from a virtualenv
    made on the first run in ``bench/.venvs/mcpz`` (pip, from the registry); skipped when that fails.

  The targets take turns, ``--rounds`` times ``--seconds`` each, so the machine's noise hits them all;
  ``--connections`` threads run flows back to back. A flow with a non-200 answer, a JSON-RPC error or an
  unexpected result is an error. The CPU time (user + system) of the target's worker processes is read
  from ``/proc`` before and after each turn, and divided by the flows completed; peak RSS is each
  worker's ``VmHWM`` at the end. The ratio to the bare view is the figure to compare across machines.
- **tools/list** at 10, 100 and 1,000 form tools, in process (``bench/tools_list.py``).
- **Import costs** of mcpforms' dependencies and of mcpforms itself, in fresh processes
  (``bench/import_cost.py``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import load  # noqa: E402
from bench.flows import (  # noqa: E402
    ANSWER,
    ARGUMENTS,
    EMAIL,
    HEADERS,
    FlowError,
    answers_for,
    call_body,
    check_done,
    result_of,
)
from bench.procfs import TICKS_PER_SECOND  # noqa: E402
from bench.servers import ROOT, ServerProcess, free_port  # noqa: E402

BIN = Path(sys.executable).parent
SETTINGS = "bench.http_settings"
WORKERS = 2


def mcp_flow(post: load.Poster) -> None:
    """The two rounds of one ``signup`` flow, the second with the first's ``requestState``."""
    first = result_of(post("/mcp", call_body(1), HEADERS))
    check_done(result_of(post("/mcp", call_body(2, answers_for(first)), HEADERS)))


def padded(data: Mapping[str, object], size: int) -> bytes:
    """``data`` as JSON of ``size`` bytes, with a ``pad`` key the form ignores."""
    body = json.dumps({**data, "pad": ""})
    return (body[: -len('"}')] + "x" * max(0, size - len(body)) + '"}').encode()


def bare_flow_of(request_sizes: list[int], path: str = "/bare") -> load.Flow:
    first, second = padded(ARGUMENTS, request_sizes[0]), padded(ANSWER, request_sizes[1])

    def bare_flow(post: load.Poster) -> None:
        if b"errors" not in post(path, first) or EMAIL.encode() not in post(path, second):
            raise FlowError("the bare view did not answer as SignupForm would")

    return bare_flow


def message_sizes(port: int) -> tuple[list[int], list[int]]:
    """The byte sizes of one mcpforms flow's two requests and two answers."""
    post = load.Poster(port)
    requests = [call_body(1)]
    answers = [post("/mcp", requests[0], HEADERS)]
    requests.append(call_body(2, answers_for(result_of(answers[0]))))
    answers.append(post("/mcp", requests[1], HEADERS))
    check_done(result_of(answers[1]))
    return [len(body) for body in requests], [len(body) for body in answers]


@dataclass
class Target:
    name: str
    server: ServerProcess
    flow: load.Flow
    flows: list[int] = field(default_factory=list)
    errors: list[int] = field(default_factory=list)
    ticks: list[int] = field(default_factory=list)
    system_ticks: list[int] = field(default_factory=list)
    first_error: str = ""

    def turn(self, *, seconds: float, connections: int) -> None:
        user, system = self.server.cpu_ticks()
        tally = load.run(self.flow, self.server.port, seconds=seconds, connections=connections)
        user_after, system_after = self.server.cpu_ticks()
        self.ticks.append(user_after - user + system_after - system)
        self.system_ticks.append(system_after - system)
        self.flows.append(tally.flows)
        self.errors.append(tally.errors)
        self.first_error = self.first_error or tally.first_error

    def cpu_us_per_flow(self, ticks: int, flows: int) -> float:
        return ticks / TICKS_PER_SECOND / max(flows, 1) * 1e6


def gunicorn(name: str, env: dict[str, str]) -> ServerProcess:
    port = free_port()
    argv = [str(BIN / "gunicorn"), "project.wsgi:application", "--workers", str(WORKERS)]
    argv += ["--worker-class", "sync", "--bind", f"127.0.0.1:{port}", "--log-level", "warning"]
    return ServerProcess(name, argv, port, WORKERS, {"DJANGO_SETTINGS_MODULE": SETTINGS, **env})


def sdk_target() -> Target | str:
    """The official SDK's ``MCPServer`` under uvicorn, or why it cannot run."""
    if importlib.util.find_spec("mcp") is None or importlib.util.find_spec("uvicorn") is None:
        return "the mcp and uvicorn packages are not installed in this environment"
    port = free_port()
    argv = [str(BIN / "uvicorn"), "bench.sdk_server:app", "--workers", str(WORKERS), "--port", str(port)]
    argv += ["--log-level", "warning", "--no-access-log"]
    return Target("MCPServer (mcp SDK, uvicorn)", ServerProcess("MCPServer", argv, port, WORKERS), mcp_flow)


def mcpz_target(env: dict[str, str]) -> Target | str:
    """django-mcpz 1.2 under the same gunicorn, from a virtualenv of its own, or why it cannot run."""
    venv = ROOT / "bench" / ".venvs" / "mcpz"
    stamp = venv / ".installed"
    if not stamp.exists():
        # The same Django and gunicorn as this environment's, so that only the MCP layer differs.
        pins = [f"{name}=={version(name)}" for name in ("django", "gunicorn")]
        print("Installing django-mcpz 1.2 into bench/.venvs/mcpz (once)...", flush=True)
        try:
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
            pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "django-mcpz==1.2.*"]
            subprocess.run([*pip, *pins], check=True, capture_output=True, text=True)
        except subprocess.CalledProcessError as error:
            return f"it did not install: {(error.stderr or '').strip().splitlines()[-1:]}"
        stamp.touch()
    target = gunicorn("django-mcpz", {**env, "DJANGO_SETTINGS_MODULE": "bench.mcpz_settings"})
    target.argv[0] = str(venv / "bin" / "gunicorn")
    return Target("django-mcpz 1.2 (gunicorn)", target, mcp_flow)


def prepare_database(path: Path, *, tuned: bool) -> tuple[dict[str, str], str]:
    """Migrate a SQLite file for the targets; the environment they need to use it, and its journal mode.

    ``tuned``: as ``project.settings`` configures SQLite (its ``init_command`` puts the file in WAL);
    otherwise as Django does by default.
    """
    env = {"DJANGO_SETTINGS_MODULE": SETTINGS, "MCPFORMS_BENCH_DB": str(path)}
    if not tuned:
        env["MCPFORMS_BENCH_SQLITE"] = "django"
    migrate = [sys.executable, "manage.py", "migrate", "--noinput", "--skip-checks", "-v0"]
    subprocess.run(migrate, cwd=ROOT, env={**os.environ, **env}, check=True)
    with sqlite3.connect(path) as connection:
        journal: str = connection.execute("PRAGMA journal_mode").fetchone()[0]
    return env, journal


def start(target: Target, folder: Path, started: list[ServerProcess]) -> None:
    started.append(target.server)
    target.server.start(folder / f"{target.server.name}.log")


def http_comparison(args: argparse.Namespace, folder: Path) -> None:
    env, journal = prepare_database(folder / "tuned.sqlite3", tuned=True)
    untuned_env, untuned_journal = prepare_database(folder / "django.sqlite3", tuned=False)
    started: list[ServerProcess] = []
    try:
        mcpforms = Target("mcpforms (gunicorn)", gunicorn("mcpforms", env), mcp_flow)
        start(mcpforms, folder, started)
        request_sizes, answer_sizes = message_sizes(mcpforms.server.port)
        sizes = {"MCPFORMS_BENCH_SIZES": ",".join(map(str, answer_sizes))}
        bare = Target("bare view (gunicorn)", gunicorn("bare", {**env, **sizes}), bare_flow_of(request_sizes))
        recorded_flow = bare_flow_of(request_sizes, "/bare-recorded")
        recorded = Target("bare view + record", gunicorn("bare-recorded", {**env, **sizes}), recorded_flow)
        untuned = Target("mcpforms, SQLite as Django sets", gunicorn("untuned", untuned_env), mcp_flow)
        for target in (bare, recorded, untuned):
            start(target, folder, started)
        targets = [bare, recorded, mcpforms, untuned]
        notes: list[str] = []
        for name, optional in (("MCPServer (mcp SDK)", sdk_target()), ("django-mcpz", mcpz_target(env))):
            if isinstance(optional, str):
                notes.append(f"{name}: skipped, {optional}")
                continue
            try:
                start(optional, folder, started)
                # One flow, to fail here rather than in every turn, and to show what it exchanges.
                requests, answers = message_sizes(optional.server.port)
            except (RuntimeError, FlowError, OSError) as error:
                notes.append(f"{name}: skipped, {error}")
                continue
            notes.append(f"{name}: requests {requests} B, answers {answers} B")
            targets.append(optional)
        print(f"HTTP: {WORKERS} workers per server, {args.connections} connections, one per request,")
        print(f"{args.rounds} rounds of {args.seconds:g} s per target; no middleware; SQLite files as the")
        print(f"demo configures them (journal_mode={journal}, synchronous=NORMAL, persistent connections),")
        print(f"but for the target on Django's defaults (journal_mode={untuned_journal}, a connection per")
        print("request); mcpforms' requests", request_sizes, "B, answers", answer_sizes, "B; the bare")
        print("views' requests and answers are padded to those sizes")
        warm_up = min(2.0, args.seconds / 3)
        for target in targets:  # warm each worker: imports, caches, the first queries
            load.run(target.flow, target.server.port, seconds=warm_up, connections=args.connections)
        for turn in range(args.rounds):
            for target in targets[turn % len(targets) :] + targets[: turn % len(targets)]:
                target.turn(seconds=args.seconds, connections=args.connections)
        report(targets, notes, args.seconds * args.rounds)
    finally:
        for server in started:
            server.stop()


def report(targets: list[Target], notes: list[str], seconds: float) -> None:
    floor = targets[0].cpu_us_per_flow(sum(targets[0].ticks), sum(targets[0].flows))
    print()
    header = f"{'target':<30} {'flows':>7} {'errors':>6} {'flows/s':>8} {'CPU µs/flow':>12} {'(sys)':>6}"
    print(f"{header} {'× bare':>7}  peak RSS MiB per worker")
    for target in targets:
        flows = sum(target.flows)
        cpu = target.cpu_us_per_flow(sum(target.ticks), flows)
        system = target.cpu_us_per_flow(sum(target.system_ticks), flows)
        rss = " / ".join(f"{kib / 1024:.1f}" for kib in target.server.peak_rss_kib())
        row = f"{target.name:<30} {flows:>7} {sum(target.errors):>6} {flows / seconds:>8.0f}"
        print(f"{row} {cpu:>12.0f} {system:>6.0f} {cpu / floor:>6.2f}x  {rss}")
    print()
    for target in targets:
        per_turn = [target.cpu_us_per_flow(t, f) for t, f in zip(target.ticks, target.flows, strict=True)]
        spread = ", ".join(f"{cpu:.0f}" for cpu in per_turn)
        print(f"{target.name}: CPU µs/flow per round {spread} (median {statistics.median(per_turn):.0f})")
        if target.server.workers_changed():
            print(f"  warning: {target.name}'s workers changed during the run: its CPU figures are low")
        if target.first_error:
            print(f"  first error: {target.first_error}")
    for line in notes:
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seconds", type=float, default=10, help="length of each target's turn (10)")
    parser.add_argument("--connections", type=int, default=4, help="concurrent connections (4)")
    parser.add_argument("--rounds", type=int, default=3, help="turns per target (3)")
    parts = ["http", "tools", "imports"]
    parser.add_argument("--parts", nargs="+", choices=parts, default=parts, help="what to run (all)")
    args = parser.parse_args()
    if "http" in args.parts:
        with tempfile.TemporaryDirectory(prefix="mcpforms-bench-") as folder:
            http_comparison(args, Path(folder))
    for part, script in (("tools", "tools_list.py"), ("imports", "import_cost.py")):
        if part in args.parts:
            print(flush=True)
            subprocess.run([sys.executable, str(ROOT / "bench" / script)], cwd=ROOT, check=True)


if __name__ == "__main__":
    main()
