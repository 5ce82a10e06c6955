"""A waiting user holds no worker: the demo under gunicorn with 2 sync workers on PostgreSQL serves six
2025-era signups whose users each take 3 seconds to answer, and answers another client's tools/list
while all six wait. With a stream held open per waiting user, two workers could serve two of them."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from tests.e2e.deployment import deployment, needs_postgres

USERS = 6
THINKING = 3.0  # seconds each user takes to answer

pytestmark = needs_postgres


@pytest.fixture(scope="module")
def gunicorn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # One database per test process: the matrix runs two at once.
    with (
        deployment(tmp_path_factory.mktemp("workers"), f"mcpforms_workers_{os.getpid()}") as demo,
        demo.serving("gunicorn") as url,
    ):
        yield url


def test_six_users_thinking_at_once_pin_no_worker(gunicorn):
    answered_at: list[float] = []

    async def thoughtful_user(context: Any, params: Any) -> types.ElicitResult:
        await asyncio.sleep(THINKING)
        answered_at.append(time.monotonic())
        return types.ElicitResult(action="accept", content={"email": "ada@example.com", "plan": "pro"})

    async def signup() -> types.CallToolResult:
        async with Client(
            gunicorn, mode="legacy", elicitation_callback=thoughtful_user, cache=None
        ) as client:
            assert client.protocol_version == "2025-11-25"
            return await client.call_tool("signup", {})

    async def meanwhile() -> float:
        await asyncio.sleep(1.0)  # every user has been asked by now, and is thinking
        async with Client(gunicorn, mode="legacy", cache=None) as client:
            listed = await client.list_tools()
        assert "signup" in [tool.name for tool in listed.tools]
        return time.monotonic()

    async def scenario() -> tuple[list[types.CallToolResult], float]:
        listing = asyncio.ensure_future(meanwhile())
        results = await asyncio.gather(*(signup() for _ in range(USERS)))
        return list(results), await listing

    started = time.monotonic()
    results, listed_at = asyncio.run(asyncio.wait_for(scenario(), timeout=60))
    assert [result.is_error for result in results] == [False] * USERS
    assert all(
        result.structured_content == {"created": True, "email": "ada@example.com", "plan": "pro"}
        for result in results
    )
    # Answered while every user was still thinking: no worker was waiting on one of them.
    assert listed_at < min(answered_at), (listed_at - started, [at - started for at in answered_at])
    print(
        f"{USERS} flows done in {max(answered_at) - started:.1f} s; tools/list answered after "
        f"{listed_at - started:.1f} s, before the first user answered at {min(answered_at) - started:.1f} s"
    )
