"""The demo's multi-step ``travel_request`` as an MCP App: a real AppBridge host (ext-apps) in a real
browser (Debian's chromium through playwright-core), whose client declares MCP Apps and calls as the demo's
staff user, against the demo under ``runserver``. A user walks both paths in the App (travel_app_host.mjs):
abroad, with Back to the first step and a return date the form refuses; at home, where the passport step
never comes. What the server stored is read from the demo's database. Screenshots land in
artifacts/travel-app/, 1,280 px wide; with ``MCPFORMS_DOCS_IMAGES=1`` the passport step's is also
docs/images/wizard-app-step.png, which docs/howto/wizards.md shows."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.demo_server import DemoServer, demo_server
from tests.e2e.node import node_report

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
CHROMIUM = Path("/usr/bin/chromium")
# A folder of its own: other browser tests clear the pictures of theirs.
ARTIFACTS = Path(os.environ.get("MCPFORMS_ARTIFACTS", ROOT / "artifacts")) / "travel-app"
SCREENSHOTS = ("travel-app-passport", "travel-app-dates-invalid", "travel-app-confirmation")
DOCS_IMAGE = ROOT / "docs" / "images" / "wizard-app-step.png"
STATE, BACK = "_mcpforms_state", "_mcpforms_back"
TRAVEL = (
    "SELECT id, international, passport_number, passport_expiry, departure, return_date, budget"
    " FROM demo_travelrequest WHERE destination = ?"
)

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium: make installs it")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoServer]:
    with demo_server(tmp_path_factory.mktemp("travel-app")) as server:
        yield server


@pytest.fixture(scope="module")
def report(demo: DemoServer) -> dict[str, Any]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob("*.png"):
        old.unlink()
    made = node_report(HERE / "travel_app_host.mjs", demo.url, demo.token, str(ARTIFACTS), timeout=180)
    if os.environ.get("MCPFORMS_DOCS_IMAGES") == "1":  # only on purpose: a normal run leaves the docs alone
        DOCS_IMAGE.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ARTIFACTS / "travel-app-passport.png", DOCS_IMAGE)
    return made


def headings(flow: dict[str, Any]) -> list[tuple[str, list[str]]]:
    return [(screen["heading"], screen["shown"]) for screen in flow["screens"]]


def sent(flow: dict[str, Any]) -> list[dict[str, Any]]:
    """What the App's Next and Back sent to the submit tool, without the state."""
    return [
        {key: value for key, value in call["arguments"].items() if key != STATE} for call in flow["calls"]
    ]


def text(result: dict[str, Any]) -> str:
    return "\n".join(block.get("text", "") for block in result.get("content", []))


def test_the_host_declares_apps_and_opens_the_ui_resource_the_tool_names(report):
    assert report["protocolVersion"] == "2026-07-28"
    assert report["tools"]["travel_request"]["ui"] == {"resourceUri": "ui://mcpforms/travel_request"}
    assert report["tools"]["travel_request_submit"]["ui"]["visibility"] == ["app"]
    assert report["resource"] == {
        "uri": "ui://mcpforms/travel_request",
        "mimeType": "text/html;profile=mcp-app",
    }
    # The call's result is the first step as the form UI, not an elicitation.
    for flow in (report["abroad"], report["atHome"]):
        assert flow["toolResult"]["step"] == {
            "name": "destination",
            "title": "Destination",
            "k": 1,
            "at_most": 4,
            "can_go_back": False,
        }
        assert all(call["name"] == "travel_request_submit" for call in flow["calls"])
        assert all(isinstance(call["arguments"][STATE], str) for call in flow["calls"])
    assert report["consoleErrors"] == []


def test_abroad_each_step_is_shown_alone_under_its_heading_back_included(report):
    assert headings(report["abroad"]) == [
        ("Step 1 of at most 4: Destination", ["destination"]),
        ("Step 2 of at most 4: Passport", ["passport"]),
        ("Step 1 of at most 4: Destination", ["destination"]),  # Back
        ("Step 2 of at most 4: Passport", ["passport"]),
        ("Step 2 of at most 4: Passport", ["passport"]),  # filled in, photographed
        ("Step 3 of at most 4: Dates and budget", ["dates_and_budget"]),
        ("Step 3 of at most 4: Dates and budget", ["dates_and_budget"]),  # refused
        ("Step 4 of at most 4: Confirmation", ["confirmation"]),
        ("Step 4 of at most 4: Confirmation", ["confirmation"]),  # ticked, photographed
    ]
    screens = report["abroad"]["screens"]
    assert [(screen["back"], screen["next"]) for screen in screens[:2]] == [(False, "Next"), (True, "Next")]
    assert (screens[-1]["back"], screens[-1]["next"]) == (True, "Submit")
    assert screens[1]["focused"] == "mcpforms-step"  # a new step: its heading, for a screen reader


def test_back_shows_the_first_step_again_with_the_users_answers(report):
    abroad = report["abroad"]
    assert abroad["prefilled"] == {"destination": "Tokyo", "international": True}
    assert sent(abroad)[:3] == [
        {"destination": "Tokyo", "international": True},
        {BACK: True},  # nothing typed on the passport step yet
        {"destination": "Tokyo", "international": True},
    ]


def test_a_return_before_the_departure_is_refused_in_the_form_and_then_fixed(report):
    abroad = report["abroad"]
    refused = abroad["screens"][6]
    assert refused["formErrors"] == "The return date cannot be before the departure."
    assert sent(abroad)[4:6] == [
        {"departure": "2027-03-08", "return_date": "2027-03-01", "budget": 1800},
        {"departure": "2027-03-01", "return_date": "2027-03-08", "budget": 1800},
    ]
    assert abroad["calls"][4]["result"]["isError"] is True
    # Corrected, the message is gone on the next step.
    assert abroad["screens"][7]["formErrors"] == ""


def test_abroad_the_result_reaches_the_host_and_one_request_is_stored_with_the_passport(demo, report):
    abroad = report["abroad"]
    assert sent(abroad)[3] == {"passport_number": "X1234567", "passport_expiry": "2030-05-31"}
    assert sent(abroad)[-1] == {"confirmed": True}
    ((pk, *stored),) = demo.rows(TRAVEL, "Tokyo")
    assert stored == [1, "X1234567", "2030-05-31", "2027-03-01", "2027-03-08", 1800]
    said = f"Travel request #{pk} to Tokyo, 2027-03-01 to 2027-03-08, is recorded."
    final = abroad["calls"][-1]["result"]
    assert not final.get("isError") and text(final) == said  # what the host got back from its tools/call
    assert abroad["done"] == said and abroad["formHidden"] is True  # and what the App shows


def test_at_home_the_passport_step_never_comes_and_one_request_is_stored_without_it(demo, report):
    at_home = report["atHome"]
    assert headings(at_home) == [
        ("Step 1 of at most 4: Destination", ["destination"]),
        ("Step 2 of at most 3: Dates and budget", ["dates_and_budget"]),
        ("Step 3 of at most 3: Confirmation", ["confirmation"]),
        ("Step 3 of at most 3: Confirmation", ["confirmation"]),  # Submit unconfirmed: refused
        ("Step 2 of at most 3: Dates and budget", ["dates_and_budget"]),  # Back
        ("Step 3 of at most 3: Confirmation", ["confirmation"]),
    ]
    dates = {"departure": "2027-04-01", "return_date": "2027-04-03", "budget": 250.5}
    assert sent(at_home) == [
        {"destination": "Bergen", "international": False},
        dates,
        {"confirmed": False},  # the box left unticked
        {"confirmed": False, BACK: True},
        dates,
        {"confirmed": True},
    ]
    ((pk, *stored),) = demo.rows(TRAVEL, "Bergen")
    assert stored == [0, "", None, "2027-04-01", "2027-04-03", 250.5]
    said = f"Travel request #{pk} to Bergen, 2027-04-01 to 2027-04-03, is recorded."
    assert text(at_home["calls"][-1]["result"]) == said and at_home["done"] == said


def test_the_confirmation_is_the_users_to_give_and_back_keeps_the_dates(report):
    at_home = report["atHome"]
    assert at_home["unconfirmed"] == "This field is required."
    assert at_home["calls"][2]["result"]["isError"] is True
    assert at_home["prefilled"] == {"departure": "2027-04-01", "return_date": "2027-04-03", "budget": "250.5"}


def test_screenshots_at_1280_px(report):
    for name in SCREENSHOTS:
        shot = ARTIFACTS / f"{name}.png"
        assert shot.exists() and shot.stat().st_size > 5000, name
        width = int.from_bytes(shot.read_bytes()[16:20], "big")  # the PNG header's IHDR width
        assert width == 1280, (name, width)
