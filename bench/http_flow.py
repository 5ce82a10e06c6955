"""What a two-round form flow costs a real server, per flow, against a bare Django view and django-mcpz on
the same job, in one run: one command.

Run: ``make bench``, or ``.venv/bin/python bench/http_flow.py [--seconds N] [--connections C] [--rounds R]
[--postgres | --no-postgres]`` (Linux: it reads ``/proc``); about six minutes with the defaults. It
prints a table per database and variant (``bench/bench_table.py`` says what each column is), then how
mcpforms stands against its performance goals (docs/internals/performance.md), and asserts nothing:

- **HTTP**: each server runs 2 worker processes on a free local port, with ``bench.http_settings`` (a plain
  project: Django's six contrib apps, mcpforms and the bench's app, no middleware, on a SQLite file
  configured as docs/howto/deploying.md recommends: WAL, ``synchronous=NORMAL``, IMMEDIATE transactions,
  timeout 20, persistent connections); the bare view and django-mcpz run on the same settings less mcpforms:
  - ``bare view``: gunicorn (2 sync workers), a view binding ``SignupForm`` to the posted JSON, in a
    URLconf that imports nothing of mcpforms (``bench.bare_settings``); its requests and answers are
    padded to the byte sizes of mcpforms' in the same round: the floor; ``+ record`` (on a server of its
    own, with mcpforms installed) also records the reply in ``CompletedFlow`` as mcpforms records a
    completed flow;
  - ``mcpforms``: the same gunicorn and settings, the ``signup`` tool at ``/mcp``: round one asks
    (``input_required``), round two answers with the ``requestState`` of that flow's round one and
    completes (recorded in the database); ``SQLite as Django sets`` runs it on a second file left at
    Django's defaults (rollback journal, a connection per request); ``2025-11-25 flow`` sends the older
    era's session flow to the same server (``bench/legacy_flow.py``); ``demo settings`` runs it on the
    demo's settings (``bench.demo_settings``: OAuth, django-tasks, the demo's app and tools);
  - ``MCPServer``, optional: the official SDK's server with an equivalent tool (``bench/sdk_server.py``)
    under uvicorn with 2 workers; skipped, with the reason, when ``mcp`` does not import;
  - ``django-mcpz 1.2``, optional: its ``MCPServer`` with an equivalent tool binding the same form
    (``bench/mcpz_server.py``), under the same gunicorn and settings less mcpforms, from a virtualenv
    made on the first run in ``bench/.venvs/mcpz`` (pip, from the registry); skipped when that fails.
  - ``+ write``: the same servers' ``signup_write`` tool (``/bare-write`` for the bare view), whose
    handler inserts the signup into a bench table through a raw cursor (``bench/writes.py``);
  - on **PostgreSQL** (``--postgres``; by default whenever ``postgres@127.0.0.1:5432`` answers): the
    bare view, django-mcpz and mcpforms, writing, on a throwaway database dropped afterwards.

  Every target takes turns with all the others, ``--rounds`` times ``--seconds`` each, so the machine's
  noise hits them all; ``--connections`` threads run flows back to back, one connection per request. A
  flow with an unexpected status or answer is an error. The CPU time (user + system) of a server's
  workers is read from ``/proc`` before and after each turn and divided by the flows completed; round
  one is measured by turns of its own, round two is the whole flow less round one. Lock wait is the time
  the workers spend in ``BEGIN`` (``bench/lock_wait.py``).
- **tools/list** at 10, 100 and 1,000 form tools, in process (``bench/tools_list.py``).
- **Import costs** of mcpforms' dependencies and of mcpforms itself, in fresh processes
  (``bench/import_cost.py``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import load, postgres  # noqa: E402
from bench.bench_table import Row, goals, report  # noqa: E402
from bench.flows import WRITE_TOOL, FlowError  # noqa: E402
from bench.legacy_flow import legacy_flow  # noqa: E402
from bench.servers import ROOT  # noqa: E402
from bench.targets import (  # noqa: E402
    WORKERS,
    BenchServer,
    Target,
    bare_flow,
    bare_server,
    demo_server,
    gunicorn,
    mcp_flow,
    mcp_round_one,
    mcpz_server,
    message_sizes,
    migrate,
    prepare_database,
    sdk_server,
    with_locks,
)

__all__ = ["gunicorn", "http_comparison", "prepare_database"]  # bench/profile_server.py uses the first two


class Run:
    """The servers of one run, started as they are added and stopped at the end, and why any is missing."""

    def __init__(self, folder: Path, stack: ExitStack) -> None:
        self.folder, self.stack = folder, stack
        self.notes: list[str] = []

    def start(self, server: BenchServer | str, label: str, checked: list[load.Flow]) -> BenchServer | None:
        """Start ``server``, and send each of ``checked`` once: a server that fails here is skipped."""
        if isinstance(server, str):
            self.notes.append(f"{label}: skipped, {server}")
            return None
        self.stack.callback(server.stop)
        try:
            server.start(self.folder / f"{server.name}.log")
            for flow in checked:
                flow(load.Poster(server.port))
        except (RuntimeError, FlowError, OSError, KeyError, ValueError) as error:
            self.notes.append(f"{label}: skipped, {error}")
            return None
        return server


def mcp_rows(server: BenchServer | None, name: str, groups: tuple[str, str], role: str = "") -> list[Row]:
    """The plain row (if ``groups[0]`` names its group) and the writing row of ``server``, sharing one
    round-one turn: round one is the same call for both tools."""
    if server is None:
        return []
    round_one = Target(f"{name}, round one", server, mcp_round_one)
    rows = []
    for group, tool, suffix in ((groups[0], "signup", ""), (groups[1], WRITE_TOOL, " + write")):
        if group:
            target = Target(f"{name}{suffix} ({group})", server, mcp_flow(tool))
            rows.append(Row(f"{name}{suffix}", group, target, round_one, role))
    return rows


def bare_rows(
    server: BenchServer, sizes: list[int], groups: tuple[str, str], recording: BenchServer | None = None
) -> list[Row]:
    """The bare view's rows; ``+ record`` on ``recording``, a server with mcpforms installed (its model)."""
    round_one = Target(f"bare view, round one ({groups[1]})", server, bare_flow(sizes, rounds=1))
    rows = []
    if groups[0]:
        plain = Target("bare view", server, bare_flow(sizes))
        rows.append(Row("bare view", groups[0], plain, round_one, "bare"))
    if groups[0] and recording is not None:
        recorded = Target("bare view + record", recording, bare_flow(sizes, "/bare-recorded"))
        rows.append(Row("bare view + record", groups[0], recorded, round_one))
    written = Target(f"bare view + write ({groups[1]})", server, bare_flow(sizes, "/bare-write"))
    rows.append(Row("bare view + write", groups[1], written, round_one, "bare"))
    return rows


def sqlite_rows(run: Run) -> tuple[list[Row], list[int], str]:
    """The rows on SQLite; the byte sizes of mcpforms' requests, and of its answers as the bare view's
    ``MCPFORMS_BENCH_SIZES``."""
    env, journal = prepare_database(run.folder / "tuned.sqlite3", tuned=True)
    untuned_env, untuned_journal = prepare_database(run.folder / "django.sqlite3", tuned=False)
    plain, writing = f"SQLite ({journal}), no write", f"SQLite ({journal}), + write"
    mcpforms = run.start(gunicorn("mcpforms", with_locks(env, run.folder, "mcpforms")), "mcpforms", [])
    if mcpforms is None:
        raise RuntimeError(f"mcpforms did not start: {run.notes}")
    request_sizes, answer_sizes = message_sizes(mcpforms.port)
    run.notes.append(f"mcpforms' requests {request_sizes} B, answers {answer_sizes} B (the bare view's too)")
    answers = ",".join(map(str, answer_sizes))
    sized = with_locks({**env, "MCPFORMS_BENCH_SIZES": answers}, run.folder, "bare")
    bare = run.start(bare_server("bare", sized), "bare view", [])
    recording = run.start(gunicorn("bare-recorded", {**env, "MCPFORMS_BENCH_SIZES": answers}), "+ record", [])
    demo = run.start(demo_server("mcpforms-demo", env), "mcpforms, demo settings", [mcp_flow()])
    untuned = run.start(gunicorn("untuned", untuned_env), "mcpforms on Django's SQLite", [mcp_flow()])
    both = [mcp_flow(), mcp_flow(WRITE_TOOL)]
    sdk = run.start(sdk_server(with_locks(env, run.folder, "sdk")), "MCPServer", both)
    mcpz = run.start(mcpz_server("mcpz", with_locks(env, run.folder, "mcpz")), "django-mcpz", both)
    if bare is None:
        raise RuntimeError(f"the bare view did not start: {run.notes}")
    rows = bare_rows(bare, request_sizes, (plain, writing), recording)
    rows += mcp_rows(sdk, "MCPServer (mcp SDK, uvicorn)", (plain, writing))
    rows += mcp_rows(mcpz, "django-mcpz 1.2", (plain, writing), "mcpz")
    rows += mcp_rows(mcpforms, "mcpforms", (plain, writing), "mcpforms")
    if untuned is not None:
        name = f"mcpforms, SQLite as Django sets it ({untuned_journal}, a connection per request)"
        rows.append(Row("mcpforms, SQLite as Django sets it", plain, Target(name, untuned, mcp_flow())))
    if demo is not None:
        name = "mcpforms, demo settings (OAuth, django-tasks, the demo's app and tools)"
        rows.append(Row("mcpforms, demo settings", plain, Target(name, demo, mcp_flow())))
    legacy = Target("2025 flow", mcpforms, legacy_flow)
    rows.append(Row("mcpforms, 2025-11-25 flow", plain, legacy, None, "2025"))
    return rows, request_sizes, answers


def postgres_rows(run: Run, sizes: list[int], answer_sizes: str) -> list[Row]:
    """The writing rows on a throwaway PostgreSQL database, dropped when the run ends."""
    database = run.stack.enter_context(postgres.throwaway_database())
    env = {"DJANGO_SETTINGS_MODULE": "bench.http_settings", "MCPFORMS_BENCH_POSTGRES": database}
    migrate(env)
    group = "PostgreSQL, + write"
    sized = {**env, "MCPFORMS_BENCH_SIZES": answer_sizes}
    bare = run.start(bare_server("bare-pg", sized), "bare view on PostgreSQL", [])
    mcpz = run.start(mcpz_server("mcpz-pg", env), "django-mcpz on PostgreSQL", [mcp_flow(WRITE_TOOL)])
    mcpforms = run.start(gunicorn("mcpforms-pg", env), "mcpforms on PostgreSQL", [mcp_flow(WRITE_TOOL)])
    rows = bare_rows(bare, sizes, ("", group)) if bare else []
    rows += mcp_rows(mcpz, "django-mcpz 1.2", ("", group), "mcpz")
    return rows + mcp_rows(mcpforms, "mcpforms", ("", group), "mcpforms")


def http_comparison(args: argparse.Namespace, folder: Path) -> None:
    with ExitStack() as stack:
        run = Run(folder, stack)
        rows, request_sizes, answer_sizes = sqlite_rows(run)
        reason = postgres.unavailable() if args.postgres is not False else "--no-postgres"
        if reason and args.postgres:
            raise SystemExit(f"--postgres: {reason}")
        if reason:
            run.notes.append(f"PostgreSQL: skipped, {reason}")
        else:
            rows += postgres_rows(run, request_sizes, answer_sizes)
        targets = list(dict.fromkeys(t for row in rows for t in (row.full, row.round_one) if t is not None))
        print(f"HTTP: {WORKERS} workers per server, {args.connections} connections, one per request,")
        print(f"{args.rounds} turns of {args.seconds:g} s per target ({len(targets)} targets, alternated)")
        warm_up = min(1.5, args.seconds / 3)
        for target in targets:  # warm each worker: imports, caches, the first queries
            load.run(target.flow, target.server.port, seconds=warm_up, connections=args.connections)
        for turn in range(args.rounds):
            for target in targets[turn % len(targets) :] + targets[: turn % len(targets)]:
                target.turn(seconds=args.seconds, connections=args.connections)
        groups = list(dict.fromkeys(row.group for row in rows))
        report(sorted(rows, key=lambda row: groups.index(row.group)), run.notes)
        goals(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seconds", type=float, default=5, help="length of each target's turn (5)")
    parser.add_argument("--connections", type=int, default=16, help="concurrent connections (16)")
    parser.add_argument("--rounds", type=int, default=3, help="turns per target (3)")
    parser.add_argument(
        "--postgres",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="also run on the local PostgreSQL server (default: when it answers)",
    )
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
