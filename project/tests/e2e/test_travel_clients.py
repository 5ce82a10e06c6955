"""The demo's multi-step ``travel_request`` completed by the official Python client on 2026-07-28 against
the demo under ``runserver``: each step comes to the client's elicitation callback as a round of its own."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import mcp_types as types
import pytest

from tests.e2e.demo_server import DemoServer, demo_server

STEPS: dict[str, dict[str, str | int | float | bool | list[str] | None]] = {
    "Destination": {"destination": "Tokyo", "international": True},
    "Passport": {"passport_number": "X1234567", "passport_expiry": "2030-05-31"},
    "Dates and budget": {"departure": "2027-03-01", "return_date": "2027-03-08", "budget": "1800.00"},
    "Confirmation": {"confirmed": True},
}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoServer]:
    with demo_server(tmp_path_factory.mktemp("travel")) as server:
        yield server


def test_the_python_client_answers_each_step_and_one_travel_request_is_stored(demo):
    asked: list[tuple[str, list[str]]] = []

    async def answer(context: Any, params: Any) -> types.ElicitResult:
        asked.append((params.message, list(params.requested_schema["properties"])))
        title = params.message.split(": ", 1)[1]
        return types.ElicitResult(action="accept", content=STEPS[title])

    async def scenario() -> tuple[str | None, types.CallToolResult]:
        async with demo.client(mode="auto", elicitation_callback=answer, cache=None) as client:
            return client.protocol_version, await client.call_tool("travel_request", {})

    version, result = asyncio.run(scenario())
    assert version == "2026-07-28"
    assert not result.is_error, result
    assert asked == [
        ("Step 1 of at most 4: Destination", ["destination", "international"]),
        ("Step 2 of at most 4: Passport", ["passport_number", "passport_expiry"]),
        ("Step 3 of at most 4: Dates and budget", ["departure", "return_date", "budget"]),
        ("Step 4 of at most 4: Confirmation", ["confirmed"]),
    ]
    rows = demo.rows(
        "select id, destination, international, passport_number, departure, return_date, budget"
        " from demo_travelrequest"
    )
    assert [row[1:] for row in rows] == [("Tokyo", 1, "X1234567", "2027-03-01", "2027-03-08", 1800)]
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    assert block.text == f"Travel request #{rows[0][0]} to Tokyo, 2027-03-01 to 2027-03-08, is recorded."
