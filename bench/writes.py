"""The write every target's ``signup_write`` handler does: one row into a bench table, through a raw cursor.

What a real signup does (it stores the account), kept out of the shipped package and of migrations:
``bench/http_flow.py`` creates the table with ``CREATE TABLE IF NOT EXISTS`` before the servers start.
Django targets insert through ``django.db.connection`` (inside mcpforms' own transaction, or a
``transaction.atomic()`` of their own, so that every target takes SQLite's write lock the same way); the
SDK's server has no Django and inserts through ``sqlite3`` with the same settings.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Mapping
from typing import Any

TABLE = "bench_signup"
CREATE = {
    "sqlite": f"CREATE TABLE IF NOT EXISTS {TABLE} (id INTEGER PRIMARY KEY AUTOINCREMENT, email VARCHAR(320) "
    "NOT NULL, plan VARCHAR(10) NOT NULL, age INTEGER NULL, newsletter BOOLEAN NOT NULL)",
    "postgresql": f"CREATE TABLE IF NOT EXISTS {TABLE} (id BIGSERIAL PRIMARY KEY, email VARCHAR(320) "
    "NOT NULL, plan VARCHAR(10) NOT NULL, age INTEGER NULL, newsletter BOOLEAN NOT NULL)",
}
INSERT = f"INSERT INTO {TABLE} (email, plan, age, newsletter) VALUES (%s, %s, %s, %s)"


def row_of(data: Mapping[str, Any]) -> list[Any]:
    return [data["email"], data["plan"], data.get("age"), bool(data.get("newsletter"))]


def insert_signup(data: Mapping[str, Any]) -> None:
    """Insert the cleaned ``data`` through Django's connection, in the caller's transaction."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(INSERT, row_of(data))


_sqlite: sqlite3.Connection | None = None


def insert_signup_sqlite(path: str, data: Mapping[str, Any]) -> None:
    """The same row through ``sqlite3`` on a connection kept per process (WAL, ``synchronous=NORMAL``,
    timeout 20, ``BEGIN IMMEDIATE``), the time in ``BEGIN`` counted as Django's targets count it."""
    from bench import lock_wait

    global _sqlite
    if _sqlite is None:
        _sqlite = sqlite3.connect(path, timeout=20, isolation_level=None, check_same_thread=False)
        _sqlite.execute("PRAGMA journal_mode=WAL")
        _sqlite.execute("PRAGMA synchronous=NORMAL")
    started = time.perf_counter_ns()
    _sqlite.execute("BEGIN IMMEDIATE")
    lock_wait.add(time.perf_counter_ns() - started)
    try:
        _sqlite.execute(INSERT.replace("%s", "?"), row_of(data))
    except BaseException:
        _sqlite.execute("ROLLBACK")
        raise
    _sqlite.execute("COMMIT")
