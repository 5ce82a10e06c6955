"""The demo deployed the way production runs it: a PostgreSQL database of its own, migrated and seeded,
served by gunicorn (WSGI) or uvicorn (ASGI) in real processes on free ports."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.conformance.run import free_port, stop_process, wait_until_listening

if TYPE_CHECKING:
    import psycopg

ROOT = Path(__file__).resolve().parents[2]
POSTGRES = ("127.0.0.1", 5432)
REDIS = ("127.0.0.1", 6379)
# The PostgreSQL advisory lock the ASGI test holds while its gated tool (tests/e2e/asgi_urls.py) waits.
GATE = 714_2026
# One server process per command: gunicorn with 2 sync workers, as a small WSGI deployment runs; uvicorn
# with its single event loop, where every sync view runs on a thread of its own.
SERVERS = {
    "gunicorn": ["gunicorn", "project.wsgi:application", "--workers", "2", "--worker-class", "sync"],
    "uvicorn": ["uvicorn", "project.asgi:application", "--workers", "1", "--lifespan", "off"],
}


def answers(address: tuple[str, int]) -> bool:
    try:
        socket.create_connection(address, timeout=1).close()
        return True
    except OSError:
        return False


needs_postgres = pytest.mark.skipif(
    not answers(POSTGRES), reason="PostgreSQL does not answer on 127.0.0.1:5432"
)


def admin(sql: str, database: str = "postgres", *, port: int = POSTGRES[1]) -> None:
    """Run one statement as PostgreSQL's superuser, outside any transaction."""
    import psycopg

    with psycopg.connect(
        f"host=127.0.0.1 port={port} user=postgres dbname={database}", autocommit=True
    ) as db:
        db.execute(sql)


@dataclass
class Deployment:
    """The demo's settings on a database of its own: what every server process of the deployment shares."""

    directory: Path
    database: str
    env: dict[str, str]
    port: int = POSTGRES[1]  # of the PostgreSQL server holding ``database``

    def manage(self, *arguments: str) -> str:
        run = subprocess.run(
            [sys.executable, "manage.py", *arguments], cwd=ROOT, env=self.env, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        return run.stdout

    def connect(self) -> psycopg.Connection[Any]:
        """A connection of the test's own to the deployment's database, outside any transaction."""
        import psycopg

        return psycopg.connect(
            f"host=127.0.0.1 port={self.port} user=postgres dbname={self.database}", autocommit=True
        )

    def rows(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        """What the servers stored, read straight from the database."""
        with self.connect() as db:
            return db.execute(sql, params).fetchall()

    @contextmanager
    def serving(self, server: str, *, name: str | None = None) -> Iterator[str]:
        """Serve the deployment with ``server`` (a key of SERVERS) until the block ends; yield the URL."""
        port = free_port()
        log_path = self.directory / f"{name or server}-{port}.log"
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", *SERVERS[server], *_bind(server, port)],
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            try:
                wait_until_listening(port, process, log_path, timeout=60)
                yield f"http://127.0.0.1:{port}/mcp"
            finally:
                stop_process(process, timeout=30)


def _bind(server: str, port: int) -> list[str]:
    if server == "gunicorn":
        # A generous worker timeout: the machine may be busy with other test runs.
        return ["--bind", f"127.0.0.1:{port}", "--timeout", "60"]
    return ["--host", "127.0.0.1", "--port", str(port)]


@contextmanager
def deployment(
    directory: Path, database: str, *, settings: str = "", port: int = POSTGRES[1]
) -> Iterator[Deployment]:
    """Create ``database`` (on the PostgreSQL server at ``port``), write a settings module (the demo's,
    DEBUG off, on that database, then the lines of ``settings``), migrate and seed; drop the database when
    the block ends."""
    config = {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": database,
        "USER": "postgres",
        "HOST": "127.0.0.1",
        "PORT": str(port),
    }
    module = f"{database}_settings"
    (directory / f"{module}.py").write_text(
        f"from project.settings import *\nDEBUG = False\nDATABASES = {{'default': {config!r}}}\n{settings}\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": f"{directory}{os.pathsep}{ROOT}",
        "DJANGO_SETTINGS_MODULE": module,
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("DATABASE_URL", None)
    admin(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)", port=port)
    admin(f"CREATE DATABASE {database}", port=port)
    try:
        made = Deployment(directory, database, env, port)
        made.manage("migrate", "--noinput")
        made.manage("seed_demo")
        yield made
    finally:
        admin(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)", port=port)
