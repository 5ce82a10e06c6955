"""Where a real mcpforms server spends a request's time: py-spy on one gunicorn worker under load.

Run: ``.venv/bin/python bench/profile_server.py [--round 1|2|legacy] [--seconds N] [--connections C]``
(Linux).
It serves the demo's ``signup`` tool as ``bench/http_flow.py`` serves its ``mcpforms`` target (the same
gunicorn, settings and SQLite file), but with one sync worker, and samples that worker with
``py-spy record --rate 200`` while ``bench/load.py`` drives it with one round of the flow:

- round 1: the call with the model's arguments, answered ``input_required``;
- round 2: the answers, each request with a ``requestState`` of its own (a pool of round ones is made
  before sampling starts), answered complete and recorded as a completed flow;
- legacy: the 2025-11-25 era's session flow of ``bench/legacy_flow.py`` (initialize, initialized, the call
  answered on SSE, the answer POST, the GET resume, DELETE), with the shares also by request kind.

It writes the collapsed stacks (``py-spy --format raw``) and a speedscope profile made from them
(open it at speedscope.app, "Left Heavy" for a flame graph) to ``artifacts/profile/``, and prints the
request rate reached, then, as shares of the samples inside the MCP view (``mcpforms.api``'s ``mcp``),
the inclusive share of the main parts of a request and the top self-time frames, by ``file:function``.
py-spy is not a dependency of the project: the first run installs it into ``bench/.venvs/pyspy``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import load  # noqa: E402
from bench.flows import HEADERS, FlowError, answers_for, call_body, check_done, result_of  # noqa: E402
from bench.legacy_flow import legacy_flow  # noqa: E402
from bench.servers import ROOT, ServerProcess  # noqa: E402
from bench.targets import gunicorn, prepare_database  # noqa: E402

VENV = ROOT / "bench" / ".venvs" / "pyspy"
OUT = ROOT / "artifacts" / "profile"
RATE = 200
VIEW = "mcpforms/api.py:build_api.<locals>.mcp"  # the endpoint's Django view
# A call that may stream (every 2025-era tools/call) runs on a thread of its own: its samples count too.
WORK = "mcpforms/api.py:_streamed.<locals>.work"
SHIM = "mcpforms/protocol/era2025/shim.py"
# The 2025 flow's request kinds, by a frame only that kind's stacks hold; the first that matches wins.
KINDS: list[tuple[str, tuple[str, ...]]] = [
    ("initialize", (f"{SHIM}:_initialize",)),
    ("tools/call (on its thread)", (WORK, "mcpforms/api.py:_streamed")),
    ("the answer POST", (f"{SHIM}:_client_answer",)),
    ("GET resume", (f"{SHIM}:resume",)),
    ("DELETE", (f"{SHIM}:end",)),
    ("the rest (notifications/initialized, the edge)", ("*",)),
]
# How the worker's samples nest, outermost first: what gunicorn, Django and django-ninja add around the view.
LAYERS = [
    ("gunicorn's handle_request", "gunicorn/workers/sync.py:SyncWorker.handle_request"),
    ("Django's WSGIHandler", "django/core/handlers/wsgi.py:WSGIHandler.__call__"),
    ("django-ninja's operation", "ninja/operation.py:PathView._sync_view"),
    ("the MCP view", VIEW),
]
# The main parts of a request: a label, and fnmatch patterns of "file:function" (py-spy's short file name,
# the qualified function name). A sample counts for a part when a frame of its stack inside the view matches.
PARTS: list[tuple[str, tuple[str, ...]]] = [
    ("Server.handle (the protocol core)", ("mcpforms/protocol/server.py:Server.handle",)),
    ("mcp_types validation (validate_params)", ("mcpforms/protocol/methods.py:validate_params",)),
    ("capability checks (protocol/capabilities.py)", ("mcpforms/protocol/capabilities.py:*",)),
    ("access: visible_to, may_use, ways", ("*:Tool.visible_to", "*:FormTool.may_use", "mcpforms/ways.py:*")),
    ("authenticate + access (auth.py)", ("mcpforms/auth.py:authenticate", "mcpforms/auth.py:access")),
    ("verify requestState (load_state)", ("mcpforms/protocol/state.py:load_state",)),
    ("flow.run", ("mcpforms/flow.py:run",)),
    ("  binding the form (_Round.bind)", ("mcpforms/flow.py:_Round.bind",)),
    ("    BaseForm.__init__", ("django/forms/forms.py:BaseForm.__init__",)),
    ("    BaseForm.full_clean", ("django/forms/forms.py:BaseForm.full_clean",)),
    ("  get_json_data (error dict)", ("django/forms/utils.py:*get_json_data*",)),
    ("  gettext", ("django/utils/translation/__init__.py:gettext",)),
    ("  deepcopy", ("copy.py:deepcopy",)),
    ("  form_input_request (asked schema)", ("mcpforms/schema.py:form_input_request",)),
    ("mint requestState (mint_state)", ("mcpforms/protocol/context.py:RequestContext.mint_state",)),
    ("  arguments HMAC (arguments_digest)", ("mcpforms/protocol/state.py:arguments_digest",)),
    ("Django signing (django/core/signing.py)", ("django/core/signing.py:*",)),
    (
        "HMACs (tokens.keyed_hmac, salted_hmac)",
        ("mcpforms/protocol/tokens.py:keyed_hmac", "django/utils/crypto.py:salted_hmac"),
    ),
    ("JSON decode + strict checks (jsonrpc.decode)", ("mcpforms/protocol/jsonrpc.py:decode",)),
    ("JSON encode of the reply (api._json)", ("mcpforms/api.py:_json",)),
    ("json.dumps, any", ("json/__init__.py:dumps",)),
    ("running.complete (record + handler)", ("mcpforms/running.py:complete",)),
    ("  transaction.atomic enter/exit", ("django/db/transaction.py:*",)),
    ("  BEGIN (start transaction)", ("*:*_start_transaction_under_autocommit",)),
    ("  COMMIT", ("django/db/backends/base/base.py:*.commit", "django/db/backends/base/base.py:*._commit")),
    ("  CompletedFlow insert + keep_result", ("mcpforms/models.py:CompletedFlow.*",)),
    ("  the handler (run_handler)", ("mcpforms/running.py:run_handler",)),
    ("  tool_completed signal", ("mcpforms/signals.py:*",)),
    ("SQL execute, any", ("django/db/backends/utils.py:*execute*",)),
    ("2025: the session stores (DatabaseSessions)", ("mcpforms/session_stores.py:DatabaseSessions.*",)),
    ("2025: the session budgets (protocol/budgets.py)", ("mcpforms/protocol/budgets.py:*",)),
    ("2025: sweep of expired rows", ("mcpforms/models.py:sweep",)),
    ("2025: a thread per streamed call (start)", ("threading.py:Thread.start",)),
    ("2025: opening a DB connection", ("django/db/backends/base/base.py:*.connect",)),
    ("2025: closing DB connections", ("django/db/utils.py:*close_all*", "django/db/__init__.py:close_*")),
    ("2025: the ORM's delete collector", ("django/db/models/deletion.py:*",)),
    ("2025: SSE events (api._event)", ("mcpforms/api.py:_event",)),
]


def py_spy() -> Path:
    """The py-spy executable, installed into a virtualenv of its own on the first run."""
    binary = VENV / "bin" / "py-spy"
    if not binary.exists():
        print("Installing py-spy into bench/.venvs/pyspy (once)...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True)
        pip = [str(VENV / "bin" / "python"), "-m", "pip", "install", "--quiet", "py-spy"]
        subprocess.run(pip, check=True)
    return binary


def one_worker(env: dict[str, str]) -> ServerProcess:
    """``bench/http_flow.py``'s mcpforms server, with one sync worker: the process py-spy samples."""
    server = gunicorn("mcpforms", env)
    server.argv[server.argv.index("--workers") + 1] = "1"
    server.workers = 1
    return server


def round_one(post: load.Poster) -> None:
    result_of(post("/mcp", call_body(1), HEADERS))


class StatePool:
    """Round-one answers, each handed out once: round two with a fresh ``requestState`` every time."""

    def __init__(self) -> None:
        self.answers: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def fill(self, post: load.Poster) -> None:
        answers = answers_for(result_of(post("/mcp", call_body(1), HEADERS)))
        with self.lock:
            self.answers.append(answers)

    def round_two(self, post: load.Poster) -> None:
        with self.lock:
            if not self.answers:
                raise FlowError("the pool of round-one states ran out: raise --pool-seconds")
            answers = self.answers.pop()
        check_done(result_of(post("/mcp", call_body(2, answers), HEADERS)))


def frame_key(frame: str) -> str:
    """``function (file:line)`` as py-spy writes a frame, as ``file:function``."""
    function, _, where = frame.rpartition(" (")
    if not function:
        return frame
    return f"{where.rstrip(')').rpartition(':')[0]}:{function}"


def read_stacks(raw: Path) -> Counter[tuple[str, ...]]:
    """The collapsed stacks, by ``file:function`` from the outermost frame, with their sample counts."""
    stacks: Counter[tuple[str, ...]] = Counter()
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            stacks[tuple(frame_key(frame) for frame in stack.split(";"))] += int(count)
    return stacks


def inside_view(stacks: Counter[tuple[str, ...]]) -> Counter[tuple[str, ...]]:
    """Each stack's part from the MCP view (or a streamed call's thread) inwards; others are left out."""
    inner: Counter[tuple[str, ...]] = Counter()
    for stack, count in stacks.items():
        for root in (VIEW, WORK):
            if root in stack:
                inner[stack[stack.index(root) :]] += count
                break
    return inner


def kind_of(stack: tuple[str, ...]) -> str:
    return next(
        label
        for label, patterns in KINDS
        if any(fnmatchcase(frame, pattern) for frame in stack for pattern in patterns)
    )


def write_speedscope(stacks: Counter[tuple[str, ...]], path: Path, name: str) -> None:
    """The stacks as a speedscope "sampled" profile, one sample of weight ``count`` per stack."""
    frames: dict[str, int] = {}
    samples = [[frames.setdefault(frame, len(frames)) for frame in stack] for stack in stacks]
    weights = list(stacks.values())
    profile = {
        "$schema": "https://www.speedscope.app/file-format-schema.json",
        "shared": {"frames": [{"name": frame} for frame in frames]},
        "profiles": [
            {
                "type": "sampled",
                "name": name,
                "unit": "none",
                "startValue": 0,
                "endValue": sum(weights),
                "samples": samples,
                "weights": weights,
            }
        ],
        "name": name,
        "exporter": "bench/profile_server.py",
    }
    path.write_text(json.dumps(profile))


def write_flame_graph(stacks: Counter[tuple[str, ...]], path: Path, title: str) -> None:
    """The stacks as an SVG flame graph: a frame's width is its share of the samples, callees above
    callers; frames narrower than a pixel are left out, and hovering one shows its name and share."""
    tree: dict[str, Any] = {}
    for stack, count in stacks.items():
        node = tree
        for frame in stack:
            entry = node.setdefault(frame, [0, {}])
            entry[0] += count
            node = entry[1]
    total, width, row = max(sum(stacks.values()), 1), 1200.0, 16
    depth = max((len(stack) for stack in stacks), default=0)
    height = (depth + 2) * row
    shapes = [f'<text x="4" y="{row - 4}" font-size="12">{escape(title)}</text>']

    def draw(node: dict[str, Any], x: float, level: int) -> None:
        for frame, (count, children) in sorted(node.items()):
            w = count / total * width
            if w >= 1:
                y = height - (level + 1) * row
                hue = 20 + sum(map(ord, frame.split(":")[0])) % 40
                label = escape(frame.rpartition(":")[2])[: int(w / 7)]
                shapes.append(
                    f'<g><title>{escape(frame)} ({count / total:.1%})</title><rect x="{x:.1f}" y="{y}" '
                    f'width="{w:.1f}" height="{row - 1}" fill="hsl({hue},90%,60%)"/>'
                    f'<text x="{x + 2:.1f}" y="{y + row - 4}" font-size="11">{label}</text></g>'
                )
                draw(children, x, level + 1)
            x += w

    draw(tree, 0, 0)
    size = f'width="{width:.0f}" height="{height}"'
    svg = f'<svg xmlns="http://www.w3.org/2000/svg" {size} font-family="monospace">'
    path.write_text(svg + "".join(shapes) + "</svg>\n")


def report(stacks: Counter[tuple[str, ...]], top: int, *, legacy: bool = False) -> None:
    total = sum(stacks.values())
    inner = inside_view(stacks)
    in_view = sum(inner.values())
    print(f"{'share of the worker samples inside':<46} {'share':>6}   ({total} samples)")
    for label, frame in LAYERS:
        inside = sum(count for stack, count in stacks.items() if frame in stack)
        print(f"{label:<46} {inside / max(total, 1):>6.1%}")
    if not in_view:
        return
    frames = {frame for stack in inner for frame in stack}
    print(f"\n{'inclusive share of the view':<46} {'share':>6}")
    for label, patterns in PARTS:
        matching = {frame for frame in frames if any(fnmatchcase(frame, pattern) for pattern in patterns)}
        hits = sum(count for stack, count in inner.items() if not matching.isdisjoint(stack))
        print(f"{label:<46} {hits / in_view:>6.1%}")
    if legacy:
        kinds: Counter[str] = Counter()
        for stack, count in inner.items():
            kinds[kind_of(stack)] += count
        print(f"\n{'2025 flow: share of the view by request kind':<46} {'share':>6}")
        for label, _ in KINDS:
            print(f"{label:<46} {kinds[label] / in_view:>6.1%}")
    self_time: Counter[str] = Counter()
    for stack, count in inner.items():
        self_time[stack[-1]] += count
    print(f"\n{'top self time (file:function)':<80} {'share':>6}")
    for frame, count in self_time.most_common(top):
        print(f"{frame[-80:]:<80} {count / in_view:>6.1%}")


def profile(args: argparse.Namespace, folder: Path) -> None:
    spy = py_spy()
    env, _ = prepare_database(folder / "tuned.sqlite3", tuned=True)
    server = one_worker(env)
    server.start(folder / "mcpforms.log")
    try:
        load.run(round_one, server.port, seconds=2, connections=args.connections)  # warm the worker
        flow: load.Flow = round_one
        if args.round == "legacy":
            flow = legacy_flow
        elif args.round == "2":
            pool = StatePool()
            filled = load.run(pool.fill, server.port, seconds=args.pool_seconds, connections=args.connections)
            print(f"pool: {len(pool.answers)} round-one states in {args.pool_seconds:g} s", flush=True)
            if filled.errors:
                raise SystemExit(f"filling the pool failed: {filled.first_error}")
            flow = pool.round_two
        OUT.mkdir(parents=True, exist_ok=True)
        raw = OUT / f"round{args.round}.txt"
        record = [str(spy), "record", "--pid", str(server.worker_pids[0]), "--rate", str(RATE)]
        record += ["--format", "raw", "--output", str(raw), "--duration", str(int(args.seconds) + 1)]
        sampler = subprocess.Popen(record, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)  # py-spy attaches
        started = time.monotonic()
        tally = load.run(flow, server.port, seconds=args.seconds, connections=args.connections)
        elapsed = time.monotonic() - started
        _, errors = sampler.communicate(timeout=60)
        if sampler.returncode != 0 or not raw.exists():
            raise SystemExit(f"py-spy failed ({sampler.returncode}): {errors.strip()[-500:]}")
    finally:
        server.stop()
    print(f"round {args.round}, 1 sync worker, {args.connections} connections, {elapsed:.1f} s:", end=" ")
    what = "flows" if args.round == "legacy" else "requests"
    print(f"{tally.flows} {what}, {tally.flows / elapsed:.0f} {what}/s, {tally.errors} errors")
    if tally.first_error:
        print(f"first error: {tally.first_error}")
    stacks = read_stacks(raw)
    speedscope = OUT / f"round{args.round}.speedscope.json"
    title = f"mcpforms, one gunicorn worker, round {args.round}, {tally.flows / elapsed:.0f} {what}/s"
    write_speedscope(stacks, speedscope, title)
    svg = OUT / f"round{args.round}.svg"
    write_flame_graph(stacks, svg, title)
    print(f"collapsed stacks {raw.relative_to(ROOT)}, flame graphs {svg.relative_to(ROOT)} {speedscope.name}")
    print()
    report(stacks, args.top, legacy=args.round == "legacy")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    help = "which round to send (1), or legacy: the 2025-11-25 session flow"
    parser.add_argument("--round", choices=("1", "2", "legacy"), default="1", help=help)
    parser.add_argument("--seconds", type=float, default=15, help="how long to sample under load (15)")
    parser.add_argument("--connections", type=int, default=4, help="concurrent connections (4)")
    help = "round 2: how long to make round-one states for the pool (1.25 × --seconds)"
    parser.add_argument("--pool-seconds", type=float, help=help)
    parser.add_argument("--top", type=int, default=25, help="self-time frames to print (25)")
    parser.add_argument("--from-raw", type=Path, help="only report on collapsed stacks recorded before")
    args = parser.parse_args()
    args.pool_seconds = args.pool_seconds or 1.25 * args.seconds
    if args.from_raw:
        report(read_stacks(args.from_raw), args.top, legacy=args.round == "legacy")
        return
    with tempfile.TemporaryDirectory(prefix="mcpforms-profile-") as folder:
        profile(args, Path(folder))


if __name__ == "__main__":
    main()
