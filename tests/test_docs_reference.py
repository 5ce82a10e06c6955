"""The reference pages list what the code declares, completely: every check id on the checks page and every
setting on the settings page, and nothing the code does not have."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcpforms.conf import SETTINGS, Section
from tests.test_checks import row_ids, written_ids

REFERENCE = Path(__file__).resolve().parent.parent / "docs" / "reference"
CHECK_HEADING = re.compile(r"^### `(mcpforms\.[EW]\d{3})`$", flags=re.MULTILINE)
SETTING_HEADING = re.compile(r"^### `([A-Z][A-Z0-9_]*)`$", flags=re.MULTILINE)


def page(name: str) -> str:
    return (REFERENCE / name).read_text()


def setting_anchor(name: str) -> str:
    """The anchor of a setting's heading: its name in lower case, numbered after the section heading it
    shares it with (``#authentication`` is the section, ``#authentication-1`` the setting)."""
    sections = {section.value.lower().replace(" ", "-") for section in Section}
    return name.lower() + ("-1" if name.lower() in sections else "")


def check_entries() -> dict[str, str]:
    """Each check id the checks page documents, with the text of its entry (up to the next heading)."""
    text = page("checks.md")
    found = list(CHECK_HEADING.finditer(text))
    ids = [match.group(1) for match in found]
    assert len(ids) == len(set(ids)), "an id has two entries"
    ends = [match.start() for match in found[1:]] + [len(text)]
    return {match.group(1): text[match.end() : end] for match, end in zip(found, ends, strict=True)}


def test_the_checks_page_documents_exactly_the_check_ids_the_code_emits():
    documented = set(check_entries())
    emitted = set(written_ids()) | row_ids()
    assert {"undocumented": emitted - documented, "not emitted": documented - emitted} == {
        "undocumented": set(),
        "not emitted": set(),
    }


def test_each_check_entry_says_its_level_and_is_a_link_target():
    text = page("checks.md")
    for check_id, entry in check_entries().items():
        level = "**Error.**" if check_id.split(".")[1].startswith("E") else "**Warning.**"
        assert entry.lstrip().startswith(level), check_id
        # The label other pages link to with {ref}`mcpforms.E002`.
        assert f"({check_id})=\n### `{check_id}`" in text, check_id


@pytest.mark.parametrize("name", SETTINGS)
def test_the_entry_of_a_settings_value_check_names_the_setting(name):
    row = SETTINGS[name]
    entries = check_entries()
    for check_id in [row.check, *([row.bounds.check] if row.bounds else [])]:
        assert f"[`{name}`](settings.md#{setting_anchor(name)})" in entries[check_id], check_id


def test_a_related_check_of_a_setting_is_one_the_code_emits():
    emitted = set(written_ids())
    assert {check for row in SETTINGS.values() for check in row.related} <= emitted


def test_the_settings_page_has_a_heading_for_exactly_the_settings():
    documented = SETTING_HEADING.findall(page("settings.md"))
    assert len(documented) == len(set(documented)), "a setting has two headings"
    assert {
        "undocumented": set(SETTINGS) - set(documented),
        "not a setting": set(documented) - set(SETTINGS),
    } == {
        "undocumented": set(),
        "not a setting": set(),
    }
