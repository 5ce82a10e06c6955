"""Staff define a form in the admin, in a real browser (Debian's chromium through playwright-core) at
1,280 × 800, against a real server: the page fits the window and a field's error shows next to the field.
Screenshots land in artifacts/admin/."""

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
# A folder of its own: test_browser.py clears the screenshots at the top of artifacts/.
ARTIFACTS = Path(os.environ.get("MCPFORMS_ARTIFACTS", ROOT / "artifacts")) / "admin"
WIDTH = 1280
USERNAME, PASSWORD = "staff", "admin-browser-test-password"

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium: make installs it")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The test project on a fresh SQLite file behind ``runserver``, with a superuser and the admin's CSS."""
    directory = tmp_path_factory.mktemp("admin-browser")
    staff = (USERNAME, "staff@example.com", PASSWORD)
    settings = "MCPFORMS = {'ALLOW_ANONYMOUS': True}"
    with browser_site(directory, port=free_port(), settings=settings, superuser=staff) as url:
        yield url


@pytest.fixture(scope="module")
def report(site: str) -> dict[str, Any]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob("admin-definition-*.png"):  # the steps' test has its own in the folder
        old.unlink()
    return node_report("admin_browser.mjs", site, USERNAME, PASSWORD, str(ARTIFACTS), timeout=120)


def test_the_admin_css_loads_and_nothing_fails_in_the_page(report):
    assert report["stylesheets"] > 0
    assert report["consoleErrors"] == []


@pytest.mark.parametrize("page", ["add", "invalid", "saved"])
def test_the_page_fits_the_window(report, page):
    assert report[page]["scrollWidth"] <= WIDTH, report[page]


def test_a_new_field_folds_its_less_used_options_and_unfolds_them_in_place(report):
    assert report["optionsFolded"] and report["optionsOpened"]


def test_a_field_error_is_visible_next_to_its_field(report):
    invalid = report["invalid"]
    error, field = invalid["error"], invalid["input"]
    assert invalid["errorText"] == "Min (5) is greater than max (1)."
    assert invalid["errorCount"] == 1
    assert error["shown"] and field["shown"]
    for box in (error, field):  # inside the window: no scrolling sideways to find either
        assert box["left"] >= 0 and box["right"] <= WIDTH, invalid
    # Right above the input it is about, starting in the same column.
    assert 0 <= field["top"] - error["bottom"] <= 40, invalid
    assert abs(field["left"] - error["left"]) <= 200, invalid


def test_a_saved_field_shows_the_options_it_has_and_folds_the_empty_ones(report):
    assert report["optionsShown"] == [True, False]  # the saved field, then the extra empty one
    assert report["saved"]["input"]["shown"]


def test_a_new_definition_is_version_1_and_its_whole_numbers_stay_whole(report):
    assert report["version"] == "1"
    assert (report["min"], report["max"]) == ("5", "10")


def test_screenshots(report):
    for name in ("admin-definition-1280", "admin-definition-error-1280", "admin-definition-saved-1280"):
        shot = ARTIFACTS / f"{name}.png"
        assert shot.exists() and shot.stat().st_size > 5000, name
