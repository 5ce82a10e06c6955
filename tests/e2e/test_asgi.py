"""The demo under uvicorn (ASGI, one worker) on PostgreSQL, driven by the official Python client.

Under ASGI, Django runs each request's sync code (the view, the ORM) on a thread of its own, off the
event loop. These tests check what follows: a signup completes on both eras; requests stuck in sync ORM
work overlap instead of queueing behind one another, while the event loop answers another client; and
progress reaches the client while the handler still runs, not all at once with its result.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
import psycopg
import pytest
from mcp import Client

from tests.e2e.deployment import GATE, Deployment, deployment, needs_postgres

pytestmark = needs_postgres

DATABASE = f"mcpforms_asgi_{os.getpid()}"  # one per test process: the matrix runs two at once
PATIENCE = 60.0  # seconds: only a server that never gets there takes this long
BLOCKED = 4  # requests held inside sync ORM work at once
SIGNUP: dict[str, Any] = {"email": "ada@example.com", "plan": "pro"}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    settings = 'ROOT_URLCONF = "tests.e2e.asgi_urls"'
    with deployment(tmp_path_factory.mktemp("asgi"), DATABASE, settings=settings) as made:
        yield made


@pytest.fixture(scope="module")
def uvicorn(demo: Deployment) -> Iterator[str]:
    with demo.serving("uvicorn") as url:
        yield url


def waiting_on_locks(watcher: psycopg.Connection[Any]) -> int:
    """How many of the server's database sessions wait for a lock right now."""
    row = watcher.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND wait_event_type = 'Lock'", [DATABASE]
    ).fetchone()
    assert row is not None
    return int(row[0])


async def until_waiting(watcher: psycopg.Connection[Any], count: int) -> int:
    """Poll until ``count`` requests wait on a lock at the same time; return how many did."""
    deadline = asyncio.get_running_loop().time() + PATIENCE
    seen = waiting_on_locks(watcher)
    while seen < count and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.1)
        seen = waiting_on_locks(watcher)
    return seen


@asynccontextmanager
async def locked(demo: Deployment, sql: str) -> AsyncIterator[psycopg.Connection[Any]]:
    """Hold a lock (``sql``) in a transaction of the test's own until the block ends."""
    with demo.connect() as holder:
        holder.execute("BEGIN")
        holder.execute(sql)
        try:
            yield holder
        finally:
            holder.execute("ROLLBACK")


@pytest.mark.parametrize(("mode", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
def test_signup_with_an_elicitation_round(uvicorn, mode, version):
    asked: list[list[str]] = []
    answers: list[dict[str, Any]] = [{"email": "ada@example", "plan": "pro"}, {"email": "ada@example.com"}]

    async def user(context: Any, params: Any) -> types.ElicitResult:
        asked.append(list(params.requested_schema["properties"]))
        return types.ElicitResult(action="accept", content=answers.pop(0))

    async def scenario() -> types.CallToolResult:
        async with Client(uvicorn, mode=mode, elicitation_callback=user, cache=None) as client:
            assert client.protocol_version == version
            return await client.call_tool("signup", {})

    result = asyncio.run(asyncio.wait_for(scenario(), timeout=PATIENCE))
    assert not result.is_error
    assert result.structured_content == {"created": True, **SIGNUP}
    # The invalid address came back alone, with the valid plan kept from the first round.
    assert asked == [["email", "plan", "age", "newsletter"], ["email"]]


def test_requests_in_sync_orm_work_overlap(demo, uvicorn):
    """Signups whose last round is stuck in an INSERT (the exactly-once record, locked by the test) all
    wait inside the server at once, and another client is answered meanwhile: nothing is serialised."""

    async def user(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content=SIGNUP)

    async def signup(mode: str) -> types.CallToolResult:
        async with Client(uvicorn, mode=mode, elicitation_callback=user, cache=None) as client:
            return await client.call_tool("signup", {})

    async def scenario() -> tuple[int, list[str], int, list[types.CallToolResult]]:
        # SHARE mode lets the server read the table but not insert into it.
        async with locked(demo, "LOCK TABLE mcpforms_completedflow IN SHARE MODE"):
            with demo.connect() as watcher:
                modes = ["auto", "legacy"] * (BLOCKED // 2)
                calls = [asyncio.ensure_future(signup(mode)) for mode in modes]
                overlap = await until_waiting(watcher, BLOCKED)
                async with Client(uvicorn, mode="auto", cache=None) as other:
                    listed = [tool.name for tool in (await other.list_tools()).tools]
                still_waiting = waiting_on_locks(watcher)
                assert not any(call.done() for call in calls)  # the lock is still held: none can finish
        return overlap, listed, still_waiting, list(await asyncio.gather(*calls))

    overlap, listed, still_waiting, results = asyncio.run(asyncio.wait_for(scenario(), timeout=3 * PATIENCE))
    assert overlap == BLOCKED, f"only {overlap} of {BLOCKED} requests were inside the server at once"
    assert "signup" in listed
    assert still_waiting == BLOCKED  # answered while every signup still waited
    assert [result.structured_content for result in results] == [{"created": True, **SIGNUP}] * BLOCKED
    print(f"uvicorn: {overlap} requests waited in sync ORM work at once; tools/list answered meanwhile")


def test_progress_streams_while_the_handler_runs(demo, uvicorn):
    """The first progress notification reaches the client while the handler is still stuck in sync ORM
    work: the stream is sent as it is produced, not drained first (Django's fallback for a sync
    iterator under ASGI)."""
    reported: list[float] = []
    first = asyncio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reported.append(progress)
        first.set()

    async def scenario() -> tuple[list[float], int, types.CallToolResult]:
        async with Client(uvicorn, mode="auto", cache=None) as client:
            async with locked(demo, f"SELECT pg_advisory_xact_lock({GATE})"):
                call = asyncio.ensure_future(
                    client.call_tool("gated_progress", {}, progress_callback=on_progress)
                )
                await asyncio.wait_for(first.wait(), timeout=PATIENCE)
                with demo.connect() as watcher:
                    waiting = await until_waiting(watcher, 1)
                seen = list(reported)
                assert not call.done()  # the gate is still closed: the handler cannot have finished
            return seen, waiting, await call

    seen, waiting, result = asyncio.run(asyncio.wait_for(scenario(), timeout=3 * PATIENCE))
    assert seen == [0]  # received while the handler waited for the gate
    assert waiting == 1
    assert not result.is_error
    assert reported == [0, 1]
