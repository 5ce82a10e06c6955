"""Staff build a conditional multi-step form in the admin, in a real browser (Debian's chromium through
playwright-core) at 1,280 × 800, against a real server; then the official Python client completes it on
both paths of its condition, and the submissions are read from the server's database. Screenshots land in
artifacts/admin/."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from tests.conformance.run import free_port
from tests.e2e.browser_site import browser_site
from tests.e2e.node import node_report
from tests.e2e.test_admin_browser import ARTIFACTS, CHROMIUM, PASSWORD, USERNAME, WIDTH

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium: make installs it")

TRIP_STEPS = ["Trip", "Passport", "Dates"]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The test project on a fresh SQLite file behind ``runserver``: its URL and its database file."""
    directory = tmp_path_factory.mktemp("admin-steps")
    staff = (USERNAME, "staff@example.com", PASSWORD)
    with browser_site(
        directory, port=free_port(), settings="MCPFORMS = {'ALLOW_ANONYMOUS': True}", superuser=staff
    ) as url:
        yield url, directory / "db.sqlite3"


@pytest.fixture(scope="module")
def report(site: tuple[str, Path]) -> dict[str, Any]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob("admin-steps-*.png"):
        old.unlink()
    return node_report("admin_steps_browser.mjs", site[0], USERNAME, PASSWORD, str(ARTIFACTS), timeout=120)


def complete(
    url: str, mode: str, *, international: bool
) -> tuple[str | None, list[str], types.CallToolResult]:
    """Call ``trip_request`` with the official client, answering each step it is asked; the protocol
    version, the messages asked, and the result."""
    answers: dict[str, str | bool] = {
        "destination": "Tokyo" if international else "Oslo",
        "international": international,
    }
    answers |= {"passport_number": "X1234567", "start": "2027-03-04"}
    asked: list[str] = []

    async def answer(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        content: dict[str, str | int | float | bool | list[str] | None] = {
            name: answers[name] for name in params.requested_schema["properties"]
        }
        return types.ElicitResult(action="accept", content=content)

    async def scenario() -> tuple[str | None, types.CallToolResult]:
        async with Client(f"{url}/mcp", mode=mode, elicitation_callback=answer, cache=None) as client:
            return client.protocol_version, await client.call_tool("trip_request", {})

    version, result = asyncio.run(scenario())
    return version, asked, result


def stored(database: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(database) as connection:
        rows = connection.execute("SELECT data FROM mcpforms_submission ORDER BY id").fetchall()
    return [json.loads(data) for (data,) in rows]


def test_nothing_fails_in_the_pages_and_they_fit_the_window(report):
    assert report["consoleErrors"] == []
    assert report["invalid"]["scrollWidth"] <= WIDTH and report["saved"]["scrollWidth"] <= WIDTH, report


def test_a_condition_on_a_field_of_its_own_step_is_refused_next_to_the_field(report):
    assert report["stepFolded"]  # a new field's step options start folded
    assert report["invalid"]["error"] == (
        "'passport_number' is in this step or a later one: a condition reads a field of an earlier step "
        "(destination, international)."
    )
    assert report["invalid"]["shown"]


def test_the_saved_definition_previews_each_step_with_its_condition(report):
    saved = report["saved"]
    # The rows that start a step show their step options unfolded and name the step in their heading;
    # the others (and the extra empty row) keep them folded.
    assert saved["stepShown"] == [True, False, True, True, False]
    assert saved["stepHeadings"] == [
        "starts the step “Trip”",
        "",
        "starts the step “Passport”",
        "starts the step “Dates”",
        "",
    ]
    assert saved["steps"] == [
        {"heading": "Step 1 of 3: Trip", "asked": "Always asked", "fields": ["destination", "international"]},
        {
            "heading": "Step 2 of 3: Passport",
            "asked": "Asked when international is true",
            "fields": ["passport_number"],
        },
        {"heading": "Step 3 of 3: Dates", "asked": "Always asked", "fields": ["start"]},
    ]
    assert saved["schemaSteps"] == 3
    shot = ARTIFACTS / "admin-steps-1280.png"
    assert shot.exists() and shot.stat().st_size > 5000


def test_a_client_completes_it_on_both_paths_and_each_is_one_submission(report, site):
    url, database = site
    version, asked, result = complete(url, "2026-07-28", international=True)
    assert version == "2026-07-28"
    assert [message.splitlines()[0] for message in asked] == [
        "Step 1 of at most 3: Trip",
        "Step 2 of at most 3: Passport",
        "Step 3 of at most 3: Dates",
    ]
    assert not result.is_error, result
    _, asked, result = complete(url, "2026-07-28", international=False)
    assert [message.splitlines()[0] for message in asked] == [
        "Step 1 of at most 3: Trip",
        "Step 2 of at most 2: Dates",
    ]
    assert not result.is_error, result
    assert stored(database) == [
        {"destination": "Tokyo", "international": True, "passport_number": "X1234567", "start": "2027-03-04"},
        {"destination": "Oslo", "international": False, "start": "2027-03-04"},
    ]


def test_a_2025_client_walks_the_same_steps_through_server_requests(report, site):
    url, database = site
    before = len(stored(database))
    version, asked, result = complete(url, "legacy", international=True)
    assert version == "2025-11-25"
    assert [message.splitlines()[0] for message in asked] == [
        "Step 1 of at most 3: Trip",
        "Step 2 of at most 3: Passport",
        "Step 3 of at most 3: Dates",
    ]
    assert not result.is_error, result
    assert stored(database)[before:] == [
        {"destination": "Tokyo", "international": True, "passport_number": "X1234567", "start": "2027-03-04"}
    ]
