"""What ``/proc`` (Linux) tells of a process: its children, its CPU time, its memory.

A worker is a child of the server's master process; its CPU time is ``utime + stime`` of
``/proc/<pid>/stat`` in clock ticks, its peak resident memory ``VmHWM`` of ``/proc/<pid>/status``. Only
``os`` and ``pathlib``, so that ``bench/import_cost.py`` can read its own memory without changing it much.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[str]:
    # The command name (field 2) may hold spaces and parentheses: split after its closing one.
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2 :].split()


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``, minus multiprocessing's resource tracker."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int(_stat_fields(int(entry.name))[1])
            command = (entry / "cmdline").read_bytes()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if parent == pid and b"resource_tracker" not in command:
            found.append(int(entry.name))
    return sorted(found)


def cpu_ticks(pids: Sequence[int]) -> tuple[int, int]:
    """User and system CPU time of ``pids`` so far, in clock ticks (``TICKS_PER_SECOND``)."""
    # Fields 14 and 15 of /proc/<pid>/stat; _stat_fields starts at field 3.
    stats = [_stat_fields(pid) for pid in pids]
    return sum(int(fields[11]) for fields in stats), sum(int(fields[12]) for fields in stats)


def status_kib(pid: int | str, name: str = "VmHWM") -> int:
    """A memory figure of ``/proc/<pid>/status`` in KiB: by default the peak resident set, ``VmHWM``."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{name}:"):
            return int(line.split()[1])
    raise LookupError(f"no {name} for process {pid}")


def machine_ticks() -> tuple[int, int]:
    """The whole machine's busy and total CPU time so far, in clock ticks, from ``/proc/stat``: busy is all
    but ``idle`` and ``iowait``; ``guest`` time is already counted in ``user``."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)
