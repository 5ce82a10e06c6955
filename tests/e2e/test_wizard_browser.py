"""A multi-step form's App in a real browser (Debian's chromium through playwright-core), hosted by
ext-apps' AppBridge, against a real server process: one step at a time under "Step k of at most N", Next
and Back, the condition decided on the server. Screenshots land in artifacts/wizard/, 1,280 px wide; with
``MCPFORMS_DOCS_IMAGES=1`` the passport step's is also docs/images/wizard-app-step.png, which
docs/howto/wizards.md shows."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.run import free_port
from tests.e2e.browser_site import browser_site
from tests.e2e.node import node_report

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
# A folder of its own: test_browser.py clears the pictures at the top of artifacts/.
ARTIFACTS = Path(os.environ.get("MCPFORMS_ARTIFACTS", ROOT / "artifacts")) / "wizard"
DOCS_IMAGE = ROOT / "docs" / "images" / "wizard-app-step.png"
SCREENSHOTS = (
    "wizard-step-1",
    "wizard-step-2-passport",
    "wizard-step-2-invalid-dark",
    "wizard-back-to-step-1",
    "wizard-step-2-dates",
    "wizard-done",
)
STATE = "_mcpforms_state"

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium: make installs it")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The test project with the wizard's URLconf behind ``runserver``, and what the host saw of it."""
    port = free_port()
    settings = (
        "ROOT_URLCONF = 'tests.e2e.wizard_urls'\n"
        f"MCPFORMS = {{'BASE_URL': 'http://127.0.0.1:{port}', 'ALLOW_ANONYMOUS': True}}"
    )
    directory = tmp_path_factory.mktemp("wizard-browser")
    superuser = ("admin", "admin@example.com", "wizard-browser-admin")
    with browser_site(directory, port=port, settings=settings, superuser=superuser) as base:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        for old in ARTIFACTS.glob("*.png"):
            old.unlink()
        made = node_report("wizard_host.mjs", base, str(ARTIFACTS), timeout=120)
        if os.environ.get("MCPFORMS_DOCS_IMAGES") == "1":  # on purpose only: a run leaves the docs alone
            shutil.copyfile(ARTIFACTS / "wizard-step-2-passport.png", DOCS_IMAGE)
        yield made


def screens(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {screen["name"]: screen for screen in report["screens"]}


def test_the_host_finds_the_wizards_app_and_its_app_only_submit_tool(report):
    assert report["tools"]["trip"]["ui"] == {"resourceUri": "ui://mcpforms/trip"}
    assert report["tools"]["trip_submit"]["ui"]["visibility"] == ["app"]
    assert report["toolResult"]["step"]["name"] == "destination"


def test_each_step_is_shown_alone_under_its_heading(report):
    shown = screens(report)
    assert [(name, screen["heading"], screen["shown"]) for name, screen in shown.items()] == [
        ("wizard-step-1", "Step 1 of at most 3: Destination", ["destination"]),
        ("wizard-step-2-passport", "Step 2 of at most 3: Passport", ["passport"]),
        ("wizard-back-to-step-1", "Step 1 of at most 3: Destination", ["destination"]),
        ("wizard-step-2-dates", "Step 2 of at most 2: Dates", ["dates"]),
    ]
    # Back only where there is a step before; the last step that can come submits.
    assert [(screen["back"], screen["next"]) for screen in shown.values()] == [
        (False, "Next"),
        (True, "Next"),
        (False, "Next"),
        (True, "Submit"),
    ]
    # Moved to a step, the focus is on its heading, for a screen reader to announce it.
    assert shown["wizard-step-2-passport"]["focused"] == "mcpforms-step"


def test_next_sends_only_the_shown_steps_values_with_the_state(report):
    calls = report["calls"]
    assert all(call["name"] == "trip_submit" and isinstance(call["arguments"][STATE], str) for call in calls)
    sent = [{key: value for key, value in call["arguments"].items() if key != STATE} for call in calls]
    assert sent == [
        {"destination": "Tokyo", "international": True},
        {"passport_number": "X1"},
        {"passport_number": "X1", "_mcpforms_back": True},  # Back: what was typed, kept for the way back
        {"destination": "Oslo", "international": False},
        {"start": "2027-01-02", "budget": 300},
    ]


def test_a_django_validation_error_is_shown_inline_and_the_step_stays(report):
    assert report["inlineError"] == "Ensure this value has at least 6 characters (it has 2)."
    assert report["stillOn"] == "Step 2 of at most 3: Passport"


def test_back_shows_the_earlier_answers_and_a_changed_one_flips_the_condition(report):
    assert report["prefilled"] == {"destination": "Tokyo", "international": True}
    # Staying at home: the passport step is skipped, and the handler got the steps that applied.
    assert report["done"] == "Trip to Oslo on 2027-01-02, steps: destination, dates."
    assert report["formHidden"] is True
    assert "consoleErrors" not in report, report.get("consoleErrors")


def test_screenshots_at_1280_px(report):
    for name in SCREENSHOTS:
        shot = ARTIFACTS / f"{name}.png"
        assert shot.exists() and shot.stat().st_size > 5000, name
        width = int.from_bytes(shot.read_bytes()[16:20], "big")  # the PNG header's IHDR width
        assert width == 1280, (name, width)
    assert json.dumps(report)  # the report is plain JSON throughout
