"""A throwaway database on the local PostgreSQL server (``postgres@127.0.0.1:5432``), as the test suite
uses it: whether the server answers, and a database made for one run, with the bench table, then dropped.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bench.writes import CREATE

SERVER = "postgresql://postgres@127.0.0.1:5432"


def _connect(database: str) -> Any:
    import psycopg

    return psycopg.connect(f"{SERVER}/{database}", connect_timeout=3, autocommit=True)


def unavailable() -> str:
    """Why the server cannot be used (psycopg missing, no answer), or ``""`` when it can."""
    try:
        with _connect("postgres"):
            return ""
    except ImportError:
        return "psycopg is not installed"
    except Exception as error:  # noqa: BLE001 — psycopg.OperationalError and kin: the reason is the report
        return f"{SERVER} does not answer ({type(error).__name__})"


@contextmanager
def throwaway_database() -> Iterator[str]:
    """Create ``mcpforms_bench_<pid>`` with the bench table; yield its name; drop it."""
    name = f"mcpforms_bench_{os.getpid()}"
    with _connect("postgres") as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {name}")
        connection.execute(f"CREATE DATABASE {name}")
    try:
        with _connect(name) as connection:
            connection.execute(CREATE["postgresql"])
        yield name
    finally:
        with _connect("postgres") as connection:
            connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
