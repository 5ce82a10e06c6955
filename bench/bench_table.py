"""The table ``bench/http_flow.py`` prints: one row per target and variant, with ratios from the same run.

Columns, per row:
- ``r1 CPU ms``: CPU time of the server's workers per round one, from turns that send round one alone;
- ``r2 CPU ms``: ``CPU/flow`` less ``r1``: round two's share of a whole flow (``-`` for both where no
  round-one turn runs: SQLite as Django sets it, and the 2025 flow, whose rounds are not one call each);
- ``CPU/flow``: the workers' CPU time per whole flow (both rounds), from the whole-flow turns;
- ``flows/s``, ``r2 p99`` (the latency of round two's request, or of the 2025 flow's answer and resumed
  stream together), ``busy`` (the machine's CPU time in use, all cores, from ``/proc/stat`` over the
  whole-flow turns: the load generator's share included), ``lock ms`` (time in ``BEGIN`` per flow, SQLite
  only), ``RSS`` (peak resident memory per worker, of the server the row ran on);
- ``× bare`` and ``× mcpz``: ``CPU/flow`` against the bare view's and django-mcpz's of the same group
  (same database, same variant: writing or not).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from bench.procfs import TICKS_PER_SECOND
from bench.targets import Target


@dataclass
class Row:
    name: str
    group: str  # rows compare within a group: the same database and variant
    full: Target
    round_one: Target | None = None
    role: str = ""  # "bare" or "mcpz": what the group's ratios divide by; "mcpforms", "2025": for goals()


def _p99(latencies: list[float]) -> float:
    if len(latencies) < 2:
        return latencies[0] if latencies else 0.0
    return statistics.quantiles(latencies, n=100, method="inclusive")[98]


def _base(rows: list[Row], group: str, role: str) -> Row | None:
    return next((row for row in rows if row.group == group and row.role == role), None)


def _ratio(value: float, base: Row | None) -> str:
    return f"{value / base.full.cpu_ms():.2f}x" if base and base.full.cpu_ms() else "-"


def report(rows: list[Row], notes: list[str]) -> None:
    header = f"{'target':<34} {'r1 CPU ms':>9} {'r2 CPU ms':>9} {'CPU/flow':>8} {'flows/s':>7} {'r2 p99':>7}"
    header += f" {'busy':>5} {'lock ms':>7} {'RSS MiB':>7} {'× bare':>7} {'× mcpz':>7}"
    group = ""
    for row in rows:
        if row.group != group:
            group = row.group
            print(f"\n{group}\n{header}")
        base = {role: _base(rows, group, role) for role in ("bare", "mcpz")}
        full = row.full
        cpu = full.cpu_ms()
        r1 = f"{row.round_one.cpu_ms():.3f}" if row.round_one else "-"
        r2 = f"{cpu - row.round_one.cpu_ms():.3f}" if row.round_one else "-"
        busy = full.busy_ticks / max(full.machine_ticks, 1) * 100
        lock = f"{full.lock_ns / 1e6 / max(full.flows, 1):.3f}" if full.begins else "-"
        rss = statistics.mean(full.server.peak_rss_kib()) / 1024
        line = f"{row.name:<34} {r1:>9} {r2:>9} {cpu:>8.3f} {full.flows / max(full.seconds, 1e-9):>7.0f}"
        line += f" {_p99(full.latencies) * 1e3:>5.1f}ms {busy:>4.0f}% {lock:>7} {rss:>7.1f}"
        print(f"{line} {_ratio(cpu, base['bare']):>7} {_ratio(cpu, base['mcpz']):>7}")
    print()
    for row in rows:
        for target in (row.full, row.round_one):
            if target is None:
                continue
            if target.errors:
                print(f"{target.name}: {target.errors} errors; the first: {target.first_error}")
            if target.server.workers_changed():
                print(f"warning: {target.name}'s workers changed during the run: its CPU figures are low")
    for row in rows:
        per_turn = [t / max(f, 1) for t, f in zip(row.full.ticks, row.full.turn_flows, strict=True)]
        spread = ", ".join(f"{ticks * 1e3 / TICKS_PER_SECOND:.3f}" for ticks in per_turn)
        print(f"{row.name} ({row.group}): CPU ms/flow per turn {spread}")
    for line in notes:
        print(line)


def _rss(row: Row) -> float:
    return statistics.mean(row.full.server.peak_rss_kib()) / 1024


def goals(rows: list[Row]) -> None:
    """mcpforms against its performance goals, group by group: each ratio from this run, with its goal."""
    print("\nmcpforms against the goals (this run; goal in brackets)")
    for group in dict.fromkeys(row.group for row in rows):
        mine, mcpz, bare = (_base(rows, group, role) for role in ("mcpforms", "mcpz", "bare"))
        if mine and "+ write" in mine.name and mcpz and bare and mine.round_one and mcpz.round_one:
            a, b = mine.full, mcpz.full
            figures = [
                f"CPU/flow {a.cpu_ms() / b.cpu_ms():.2f}x mcpz [<= 1]",
                f"{a.cpu_ms() / bare.full.cpu_ms():.2f}x bare [<= 1.25]",
                f"r1 {mine.round_one.cpu_ms() / mcpz.round_one.cpu_ms():.2f}x mcpz [<= 1]",
                f"flows/s {(a.flows / a.seconds) / max(b.flows / b.seconds, 1e-9):.2f}x mcpz [>= 1]",
                f"r2 p99 {_p99(a.latencies) / max(_p99(b.latencies), 1e-9):.2f}x mcpz [<= 1.5]",
                f"busy {a.busy_ticks / max(a.machine_ticks, 1) * 100:.0f}% [>= 90%]",
                f"RSS {_rss(mine) - _rss(mcpz):+.1f} MiB vs mcpz [<= +15]",
            ]
            print(f"{group}:\n  " + "; ".join(figures[:3]) + "\n  " + "; ".join(figures[3:]))
        legacy = _base(rows, group, "2025")
        if legacy and mine:
            ratio = legacy.full.cpu_ms() / mine.full.cpu_ms()
            print(f"{group}: 2025-11-25 flow {ratio:.2f}x the 2026 flow's CPU [<= 2]")
