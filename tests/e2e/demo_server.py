"""The demo project behind a real ``runserver`` process, on a fresh SQLite database, migrated and seeded."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conformance.run import running_server

# The demo's tools (project/demo/mcp_tools.py and the admin-defined ones seed_demo makes).
DEMO_TOOLS = {
    "create_ticket",
    "event_rsvp",
    "export_tickets",
    "feedback",
    "refund_request",
    "signup",
    "travel_request",
}

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class DemoServer:
    url: str
    database: Path
    env: dict[str, str]

    def client(self, **options: Any) -> Client:
        """The official Python client, calling as the staff user through their token."""
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {self.token}"}, timeout=60)
        return Client(streamable_http_client(self.url, http_client=http), **options)

    def manage(self, *arguments: str) -> str:
        """Run a management command against the same database, in another process."""
        run = subprocess.run(
            [sys.executable, "manage.py", *arguments], cwd=ROOT, env=self.env, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        return run.stdout

    @cached_property
    def token(self) -> str:
        """A personal access token of the demo's staff user, made as docs/tutorials/demo.md says."""
        return self.manage("mcpforms_token", "create", "staff", "--quiet").strip()

    def rows(self, sql: str, *params: object) -> list[tuple[object, ...]]:
        """Read the demo database directly: what the server stored, not what it said."""
        with sqlite3.connect(self.database) as connection:
            return connection.execute(sql, params).fetchall()


@contextmanager
def demo_server(directory: Path) -> Iterator[DemoServer]:
    database = directory / "demo.sqlite3"
    (directory / "e2e_demo_settings.py").write_text(
        f"from project.settings import *\nDATABASES['default']['NAME'] = {str(database)!r}\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": f"{directory}{os.pathsep}{ROOT}",
        "DJANGO_SETTINGS_MODULE": "e2e_demo_settings",
        "PYTHONUNBUFFERED": "1",
    }
    for command in (["migrate", "--noinput"], ["seed_demo"]):
        subprocess.run(
            [sys.executable, "manage.py", *command], cwd=ROOT, env=env, check=True, capture_output=True
        )
    with running_server(directory / "server.log", env=env) as port:
        yield DemoServer(f"http://127.0.0.1:{port}/mcp", database, env)
