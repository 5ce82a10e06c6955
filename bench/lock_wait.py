"""Lock wait per worker: the time each worker process spends in ``BEGIN`` (SQLite's ``BEGIN IMMEDIATE``
waits there for the write lock), summed in a small file per process that ``bench/http_flow.py`` reads.

``MCPFORMS_BENCH_LOCKS`` names a folder; each process maps ``<folder>/<pid>`` (two 64-bit counters:
nanoseconds in ``BEGIN``, and how many) and adds to it in memory, so counting costs no system call.
Django's targets count through an ``execute_wrapper`` that ``bench.apps`` installs on every connection;
SQLite's backend starts a transaction with ``cursor.execute("BEGIN IMMEDIATE")``, which passes through
it. On PostgreSQL Django issues no ``BEGIN`` of its own (the driver does, with the first statement): the
counters stay at zero and the table shows no figure.
"""

from __future__ import annotations

import mmap
import os
import struct
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

FORMAT = "<qq"
SIZE = struct.calcsize(FORMAT)
_counters: mmap.mmap | None = None
_pid = 0


def _mapped() -> mmap.mmap | None:
    global _counters, _pid
    if _pid != os.getpid():  # a fork (gunicorn's workers) maps a file of its own
        _pid, _counters = os.getpid(), None
        folder = os.environ.get("MCPFORMS_BENCH_LOCKS")
        if folder:
            path = Path(folder) / str(_pid)
            path.write_bytes(bytes(SIZE))
            with path.open("r+b") as file:
                _counters = mmap.mmap(file.fileno(), SIZE)
    return _counters


def add(nanoseconds: int) -> None:
    counters = _mapped()
    if counters is not None:
        total, count = struct.unpack_from(FORMAT, counters)
        struct.pack_into(FORMAT, counters, 0, total + nanoseconds, count + 1)


def timed_begin(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
    """A Django ``execute_wrapper``: times the statements that start a transaction, passes the rest on."""
    if not sql.startswith("BEGIN"):
        return execute(sql, params, many, context)
    started = time.perf_counter_ns()
    try:
        return execute(sql, params, many, context)
    finally:
        add(time.perf_counter_ns() - started)


def install(sender: Any = None, connection: Any = None, **kwargs: Any) -> None:
    """A ``connection_created`` receiver: add ``timed_begin`` to the connection's wrappers, once."""
    if connection is not None and timed_begin not in connection.execute_wrappers:
        connection.execute_wrappers.append(timed_begin)


def read(folder: Path) -> tuple[int, int]:
    """Nanoseconds in ``BEGIN`` and ``BEGIN`` count so far, summed over the processes of ``folder``."""
    total = count = 0
    for path in folder.iterdir():
        nanoseconds, begins = struct.unpack(FORMAT, path.read_bytes()[:SIZE])
        total, count = total + nanoseconds, count + begins
    return total, count
