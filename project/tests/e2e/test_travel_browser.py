"""The demo's home page walks the multi-step ``travel_request`` one round at a time, in a real browser
(Debian's chromium through playwright-core) against a real demo server, as the staff user: each round
shows the step the tool asks, alone, under "Step k of at most N"; a trip abroad is asked for the passport,
a domestic one is not; a refused answer is asked again with Django's message; a decline stores nothing.
Screenshots land in artifacts/travel/."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.demo_server import DemoServer, demo_server
from tests.e2e.node import node_report

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
CHROMIUM = Path("/usr/bin/chromium")
# A folder of its own: test_demo_browser.py clears the pictures of artifacts/demo/.
ARTIFACTS = Path(os.environ.get("MCPFORMS_ARTIFACTS", ROOT / "artifacts")) / "travel"
SCREENSHOTS = ("travel-before", "travel-passport", "travel-invalid", "travel-abroad-done", "travel-skipped")
TRAVEL = "SELECT id, destination, international, passport_number, passport_expiry, departure, return_date,"
TRAVEL += " budget FROM demo_travelrequest ORDER BY id"

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium: make installs it")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoServer]:
    with demo_server(tmp_path_factory.mktemp("travel-browser")) as running:
        yield running


@pytest.fixture(scope="module")
def report(server: DemoServer) -> dict[str, Any]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob("*.png"):
        old.unlink()
    return node_report(
        HERE / "travel_browser.mjs", server.url.removesuffix("/mcp"), str(ARTIFACTS), timeout=180
    )


def headings(rounds: list[dict[str, Any]]) -> list[str]:
    return [shown["heading"] for shown in rounds]


def test_before_a_call_the_card_lists_the_steps_and_shows_no_step(report):
    before = report["before"]
    assert before["shownSteps"] == 0 and before["button"] == "Call travel_request"
    assert before["overview"] == {
        "destination": "",
        "passport": "",
        "dates_and_budget": "",
        "confirmation": "",
    }


def test_a_trip_abroad_is_asked_every_step_one_per_round_with_only_its_fields(report):
    rounds = report["abroad"]["rounds"]
    assert headings(rounds) == [
        "Step 1 of at most 4: Destination",
        "Step 2 of at most 4: Passport",
        "Step 3 of at most 4: Dates and budget",
        "Step 3 of at most 4: Dates and budget",  # asked again: the return came before the departure
        "Step 4 of at most 4: Confirmation",
    ]
    assert [shown["fields"] for shown in rounds] == [
        ["destination", "international"],
        ["passport_number", "passport_expiry"],
        ["departure", "return_date", "budget"],
        ["departure", "return_date", "budget"],
        ["confirmed"],
    ]
    assert all(shown["shownSteps"] == 1 for shown in rounds)
    assert [shown["button"] for shown in rounds] == [
        "Send step 1",
        "Send step 2",
        "Send step 3",
        "Send step 3",
        "Send step 4",
    ]
    assert rounds[1]["overview"] == {
        "destination": "answered",
        "passport": "asked now",
        "dates_and_budget": "",
        "confirmation": "",
    }


def test_an_answer_django_refuses_is_asked_again_with_its_message(report):
    refused = report["abroad"]["rounds"][3]
    assert "The return date cannot be before the departure." in refused["errors"]
    assert report["abroad"]["rounds"][4]["errors"] == ""


def test_a_domestic_trip_skips_the_passport_step_and_says_so(report):
    rounds = report["home"]["rounds"]
    assert headings(rounds) == [
        "Step 1 of at most 4: Destination",
        "Step 2 of at most 3: Dates and budget",
        "Step 3 of at most 3: Confirmation",
    ]
    assert rounds[1]["overview"]["passport"] == "skipped: not needed for these answers"
    assert report["home"]["result"]["after"]["overview"] == {
        "destination": "answered",
        "passport": "skipped: not needed for these answers",
        "dates_and_budget": "answered",
        "confirmation": "answered",
    }


def test_each_completed_walk_stores_one_travel_request_and_shows_the_tools_result(report, server):
    abroad, home = server.rows(TRAVEL)  # the declined call stored nothing
    assert abroad[1:] == ("Tokyo", 1, "X1234567", "2030-05-31", "2027-03-01", "2027-03-08", 1800)
    assert home[1:] == ("Bergen", 0, "", None, "2027-03-01", "2027-03-08", 1800)
    for trip, outcome in ((abroad, report["abroad"]["result"]), (home, report["home"]["result"])):
        assert outcome["title"] == "Request travel: done"
        assert (
            f"Travel request #{trip[0]} to {trip[1]}, 2027-03-01 to 2027-03-08, is recorded."
            in outcome["text"]
        )
        assert outcome["after"]["shownSteps"] == 0 and outcome["after"]["button"] == "Call travel_request"
    assert report["abroad"]["result"]["after"]["overview"]["passport"] == "answered"


def test_a_user_who_declines_mid_wizard_ends_the_call(report, server):
    assert report["declineOffered"] == "Send step 2"
    declined = report["declined"]
    assert declined["title"] == "Request travel: declined"
    assert "nothing was submitted" in declined["text"]
    assert declined["after"]["shownSteps"] == 0
    assert [row[1] for row in server.rows(TRAVEL)] == ["Tokyo", "Bergen"]


def test_no_console_errors(report):
    assert report["consoleErrors"] == []
    assert report["pageErrors"] == []


def test_screenshots(report):
    for name in SCREENSHOTS:
        picture = ARTIFACTS / f"{name}.png"
        assert picture.exists() and picture.stat().st_size > 5000, name
