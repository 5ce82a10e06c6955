from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.test import override_settings

from mcpforms.conf import DEFAULTS, REFERENCE_END, REFERENCE_START, SETTINGS, conf, reference, write_reference

ROOT = Path(__file__).resolve().parent.parent
SETTINGS_PAGE = ROOT / "docs" / "reference" / "settings.md"


def test_defaults_apply_without_a_setting():
    assert DEFAULTS["STATE_MAX_AGE"] == conf.STATE_MAX_AGE


def test_a_setting_changed_by_override_settings_is_read_again():
    with override_settings(MCPFORMS={"STATE_MAX_AGE": 5}):
        assert conf.STATE_MAX_AGE == 5
    assert DEFAULTS["STATE_MAX_AGE"] == conf.STATE_MAX_AGE


def test_a_malformed_setting_falls_back_to_defaults_and_is_left_to_the_checks():
    with override_settings(MCPFORMS="nonsense"):
        assert DEFAULTS["MAX_MODEL_CHOICES"] == conf.MAX_MODEL_CHOICES


def test_unknown_names_list_the_valid_ones():
    with pytest.raises(AttributeError, match="valid: STATE_MAX_AGE"):
        conf.STATE_MAX_AGES  # noqa: B018


@pytest.mark.parametrize("name", SETTINGS)
def test_every_row_is_an_attribute_that_follows_override_settings(name):
    before, configured = getattr(conf, name), object()
    with override_settings(MCPFORMS={name: configured}):
        assert getattr(conf, name) is configured  # as is: the checks judge it, conf never coerces it
    with override_settings(MCPFORMS={}):
        assert getattr(conf, name) == SETTINGS[name].default
    assert getattr(conf, name) == before


def test_a_value_is_kept_until_the_setting_changes():
    with override_settings(MCPFORMS={"PAGE_SIZE": 7}):
        assert conf.PAGE_SIZE == 7
        settings.MCPFORMS = {"PAGE_SIZE": 8}  # changed without setting_changed: the kept value stands
        assert conf.PAGE_SIZE == 7
    assert DEFAULTS["PAGE_SIZE"] == conf.PAGE_SIZE  # leaving override_settings sent setting_changed


@pytest.mark.parametrize("name", SETTINGS)
def test_every_default_is_a_value_its_own_row_accepts(name):
    row = SETTINGS[name]
    assert row.kind.problem(row.default) is None
    assert row.bounds is None or row.bounds.contains(row.default)
    assert row.help.endswith(".") and "\n" not in row.help


def test_the_settings_page_is_what_the_rows_render():
    text = SETTINGS_PAGE.read_text()
    assert text.count(REFERENCE_START) == text.count(REFERENCE_END) == 1
    block = text.split(REFERENCE_START + "\n")[1].split(REFERENCE_END)[0]
    assert block == reference(), (
        "docs/reference/settings.md is not what the rows of mcpforms/conf.py render; regenerate it: "
        "python -m mcpforms.conf --write docs/reference/settings.md"
    )


def test_writing_the_reference_replaces_only_what_is_between_the_markers(tmp_path):
    page = tmp_path / "settings.md"
    page.write_text(f"# Settings\n\n{REFERENCE_START}\nstale\n{REFERENCE_END}\n\nAfter.\n")
    write_reference(str(page))
    assert page.read_text() == f"# Settings\n\n{REFERENCE_START}\n{reference()}{REFERENCE_END}\n\nAfter.\n"
    page.write_text("# No markers\n")
    with pytest.raises(SystemExit, match="no '% settings-reference:start"):
        write_reference(str(page))


def test_the_reference_has_a_row_per_setting_and_prints_from_the_command_line():
    printed = subprocess.run(
        [sys.executable, "-m", "mcpforms.conf"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert printed == reference()
    assert [line.split("`")[1] for line in printed.splitlines() if line.startswith("### `")] == list(SETTINGS)
    depth = printed.split("### `MAX_JSON_DEPTH`")[1].split("###")[0]
    assert ":Type: `int`\n:Default: `64`\n" in depth
    assert ":Valid: a positive integer; 16 to half of Python's recursion limit" in depth
    assert ":Checks: {ref}`mcpforms.E011`, {ref}`mcpforms.E012`\n" in depth
    assert "{ref}`mcpforms.E013`" in printed.split("### `MAX_STATE_BYTES`")[1].split("###")[0]
