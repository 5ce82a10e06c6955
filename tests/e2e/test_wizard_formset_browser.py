"""A wizard's formset step in a real browser (Debian's chromium through playwright-core), hosted by
ext-apps' AppBridge, against a real server process: its rows, "Add a row", "Remove", Django's message for
an invalid row shown inline, and the rows sent as one list. Screenshots land in artifacts/formset/."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.run import free_port
from tests.e2e.browser_site import browser_site
from tests.e2e.node import node_report

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("MCPFORMS_ARTIFACTS", ROOT / "artifacts")) / "formset"
STATE = "_mcpforms_state"

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium: make installs it")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The test project with the crew wizard's URLconf behind ``runserver``, and what the host saw."""
    port = free_port()
    settings = (
        "ROOT_URLCONF = 'tests.e2e.formset_urls'\n"
        f"MCPFORMS = {{'BASE_URL': 'http://127.0.0.1:{port}', 'ALLOW_ANONYMOUS': True}}"
    )
    directory = tmp_path_factory.mktemp("formset-browser")
    superuser = ("admin", "admin@example.com", "formset-browser-admin")
    with browser_site(directory, port=port, settings=settings, superuser=superuser) as base:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        for old in ARTIFACTS.glob("*.png"):
            old.unlink()
        yield node_report("formset_host.mjs", base, str(ARTIFACTS), timeout=120)


def test_the_formset_step_is_one_list_argument_for_the_model(report):
    schema = report["membersSchema"]
    assert schema["type"] == "array" and schema["maxItems"] == 3
    assert set(schema["items"]["properties"]) == {"name", "age"}


def test_the_step_shows_its_rows_and_add_a_row_adds_one_up_to_max_num(report):
    assert report["heading"] == "Step 2 of at most 3: Members"
    assert report["rowsAtFirst"] == 2  # min_num 1 plus extra 1
    assert report["afterAdd"] == [
        {"number": "1", "name": "Ann", "age": "30"},
        {"number": "2", "name": "Bo", "age": ""},
        {"number": "3", "name": "Cy", "age": "-1"},
    ]
    assert report["focusedAfterAdd"] == "id_members-2-name"  # the new row's first input
    assert report["addDisabledAtMax"] is True


def test_remove_closes_up_the_rows_and_keeps_their_values(report):
    assert report["afterRemove"] == [
        {"number": "1", "name": "Ann", "age": "30"},
        {"number": "2", "name": "Cy", "age": "-1"},
    ]
    assert report["addDisabledAfterRemove"] is False


def test_an_invalid_rows_message_is_shown_under_its_input(report):
    assert report["inlineError"] == "Ensure this value is greater than or equal to 0."
    assert report["invalid"] == "true"
    assert report["stillOn"] == "Step 2 of at most 3: Members"


def test_next_sends_the_rows_as_one_list_and_the_wizard_completes(report):
    sent = [{k: v for k, v in call["arguments"].items() if k != STATE} for call in report["calls"]]
    assert sent == [
        {"crew": "Owls"},
        {"members": [{"name": "Ann", "age": 30}, {"name": "Cy", "age": -1}]},
        {"members": [{"name": "Ann", "age": 30}, {"name": "Cy"}]},
        {"remarks": "Ready"},
    ]
    assert report["done"] == "Crew Owls: Ann (30), Cy."
    assert "consoleErrors" not in report, report.get("consoleErrors")


def test_screenshots_at_1280_px(report):
    for name in ("formset-step", "formset-three-rows", "formset-invalid-row", "formset-done"):
        shot = ARTIFACTS / f"{name}.png"
        assert shot.exists() and shot.stat().st_size > 5000, name
        assert int.from_bytes(shot.read_bytes()[16:20], "big") == 1280, name
