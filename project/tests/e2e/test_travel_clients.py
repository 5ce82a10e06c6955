"""The demo's multi-step ``travel_request`` completed by real clients against the demo under
``runserver``, as the staff user: the official Python client on 2026-07-28 (each step an input_required
round) and in legacy mode (2025-11-25: each step a server-sent ``elicitation/create``), and the
TypeScript SDK v1 client, on both paths (abroad, the passport asked; at home, skipped). A refused answer
is asked again with Django's message; a decline mid-wizard stores nothing. The docs' transcript of the two
paths is what the demo does today."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from tests.e2e.demo_server import DemoServer, demo_server
from tests.e2e.node import node_report
from tests.e2e.travel_transcript import TRANSCRIPT, transcript

HERE = Path(__file__).resolve().parent
Answer = dict[str, Any]
PASSPORT = {"passport_number": "X1234567", "passport_expiry": "2030-05-31"}
# The budget is a number, as the step's schema says (the TypeScript client checks its answers against it).
DATES = {"departure": "2027-03-01", "return_date": "2027-03-08", "budget": 1800}
CONFIRMED = {"confirmed": True}
# What each path asks, round by round: the message and the fields of each step.
ASKED_ABROAD = [
    ("Step 1 of at most 4: Destination", ["destination", "international"]),
    ("Step 2 of at most 4: Passport", ["passport_number", "passport_expiry"]),
    ("Step 3 of at most 4: Dates and budget", ["departure", "return_date", "budget"]),
    ("Step 4 of at most 4: Confirmation", ["confirmed"]),
]
ASKED_AT_HOME = [
    ("Step 1 of at most 4: Destination", ["destination", "international"]),
    ("Step 2 of at most 3: Dates and budget", ["departure", "return_date", "budget"]),
    ("Step 3 of at most 3: Confirmation", ["confirmed"]),
]
TRAVEL = (
    "SELECT id, international, passport_number, passport_expiry, departure, return_date, budget"
    " FROM demo_travelrequest WHERE destination = ?"
)


def accept(content: Answer) -> Answer:
    return {"action": "accept", "content": content}


def abroad(destination: str) -> list[Answer]:
    trip = {"destination": destination, "international": True}
    return [accept(trip), accept(PASSPORT), accept(DATES), accept(CONFIRMED)]


def at_home(destination: str) -> list[Answer]:
    return [accept({"destination": destination, "international": False}), accept(DATES), accept(CONFIRMED)]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoServer]:
    with demo_server(tmp_path_factory.mktemp("travel")) as server:
        yield server


def python_call(demo: DemoServer, mode: str, answers: list[Answer]) -> tuple[str | None, dict[str, Any]]:
    """The official Python client in ``mode`` calls ``travel_request`` with nothing and answers each step
    from ``answers``, in order; its protocol version, and what it was asked and the result, as
    ts_travel_client.mjs reports them."""
    asked: list[dict[str, Any]] = []
    script = list(answers)

    async def answer(context: Any, params: Any) -> types.ElicitResult:
        asked.append({"message": params.message, "fields": list(params.requested_schema["properties"])})
        return types.ElicitResult(**(script.pop(0) if script else {"action": "cancel"}))

    async def scenario() -> tuple[str | None, types.CallToolResult]:
        async with demo.client(mode=mode, elicitation_callback=answer, cache=None) as client:
            return client.protocol_version, await client.call_tool("travel_request", {})

    version, result = asyncio.run(scenario())
    texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
    return version, {"asked": asked, "isError": result.is_error, "text": "\n".join(texts)}


def typescript_call(demo: DemoServer, answers: list[Answer]) -> tuple[str | None, dict[str, Any]]:
    report = node_report(HERE / "ts_travel_client.mjs", demo.url, demo.token, json.dumps(answers))
    return report["protocolVersion"], report


CLIENTS = {
    "python-2026": lambda demo, answers: python_call(demo, "auto", answers),
    "python-legacy": lambda demo, answers: python_call(demo, "legacy", answers),
    "typescript-v1": typescript_call,
}
VERSIONS = {"python-2026": "2026-07-28", "python-legacy": "2025-11-25", "typescript-v1": "2025-11-25"}


def steps(report: dict[str, Any]) -> list[tuple[str, list[str]]]:
    return [(asked["message"], asked["fields"]) for asked in report["asked"]]


@pytest.mark.parametrize("client", CLIENTS)
def test_a_trip_abroad_is_asked_every_step_and_stored_once(demo, client):
    destination = f"Tokyo ({client})"
    version, report = CLIENTS[client](demo, abroad(destination))
    assert version == VERSIONS[client]
    assert steps(report) == ASKED_ABROAD
    assert not report["isError"], report
    ((pk, *stored),) = demo.rows(TRAVEL, destination)
    assert stored == [1, "X1234567", "2030-05-31", "2027-03-01", "2027-03-08", 1800]
    assert report["text"] == f"Travel request #{pk} to {destination}, 2027-03-01 to 2027-03-08, is recorded."


@pytest.mark.parametrize("client", CLIENTS)
def test_a_domestic_trip_is_never_asked_for_a_passport(demo, client):
    destination = f"Bergen ({client})"
    version, report = CLIENTS[client](demo, at_home(destination))
    assert version == VERSIONS[client]
    assert steps(report) == ASKED_AT_HOME
    assert not report["isError"], report
    ((pk, *stored),) = demo.rows(TRAVEL, destination)
    assert stored == [0, "", None, "2027-03-01", "2027-03-08", 1800]
    assert report["text"] == f"Travel request #{pk} to {destination}, 2027-03-01 to 2027-03-08, is recorded."


@pytest.mark.parametrize("client", ["python-legacy", "typescript-v1"])
def test_a_return_before_the_departure_is_asked_again_with_djangos_message(demo, client):
    destination = f"Oslo ({client})"
    backwards = accept({**DATES, "departure": "2027-03-08", "return_date": "2027-03-01"})
    answers = at_home(destination)
    _, report = CLIENTS[client](demo, [answers[0], backwards, *answers[1:]])
    messages = [asked["message"] for asked in report["asked"]]
    assert messages[:2] == ["Step 1 of at most 4: Destination", "Step 2 of at most 3: Dates and budget"]
    assert messages[2].splitlines() == [
        "Step 2 of at most 3: Dates and budget",
        "Please correct:",
        "- The return date cannot be before the departure.",
    ]
    assert report["asked"][2]["fields"] == ["departure", "return_date", "budget"]  # the whole step again
    assert messages[3:] == ["Step 3 of at most 3: Confirmation"]
    assert not report["isError"], report
    ((_, *stored),) = demo.rows(TRAVEL, destination)
    assert stored[3:5] == ["2027-03-01", "2027-03-08"]


@pytest.mark.parametrize("client", ["python-legacy", "typescript-v1"])
@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_a_user_who_declines_or_cancels_mid_wizard_stores_nothing(demo, client, action):
    destination = f"Lisbon ({client}, {action})"
    _, report = CLIENTS[client](demo, [*abroad(destination)[:2], {"action": action}])
    assert steps(report) == ASKED_ABROAD[:3]
    assert report["isError"]
    verb = "declined to fill in" if action == "decline" else "cancelled"
    assert report["text"] == f"The user {verb} the Request travel form; nothing was submitted."
    assert demo.rows(TRAVEL, destination) == []


def test_the_docs_wizard_transcript_is_what_the_demo_does_today(tmp_path):
    # On a database of its own, where the two requests it stores are #1 and #2, as the file says.
    with demo_server(tmp_path) as fresh:
        made = transcript(fresh)
    assert made == TRANSCRIPT.read_text(), "stale: run python -m tests.e2e.travel_transcript"
