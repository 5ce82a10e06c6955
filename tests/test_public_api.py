"""The public surface, pinned: ``mcpforms.__all__``, the table of public modules and the autodoc entries of
the API reference (``docs/reference/``), and what importing ``mcpforms`` costs. A name added to or dropped
from any of them is a decision, made here on purpose."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest

import mcpforms

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "reference"
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# An autodoc entry of a page: ``.. autofunction:: mcpforms.register`` in an ``{eval-rst}`` block.
AUTODOC = re.compile(
    r"^\.\. auto(?:function|class|exception|data|attribute|decorator):: ([\w.]+)", re.MULTILINE
)

PUBLIC = [
    "AutoFormField",
    "FormTool",
    "Option",
    "WizardTool",
    "accepted_form_input",
    "display_form",
    "fields_for_form",
    "fields_for_model",
    "form_input_request",
    "form_schema",
    "input_response",
    "register",
    "register_prompt",
    "register_wizard",
    "tool",
    "validate_with_form",
]


def documented() -> dict[str, list[str]]:
    """The API reference's table of public modules and names: ``{module: [name, ...]}``."""
    section = (REFERENCE / "api.md").read_text().split("\n## Public modules\n", 1)[1].split("\n## ", 1)[0]
    table: dict[str, list[str]] = {}
    for row in re.findall(r"^\| `(mcpforms[\w.]*)` \| (.*) \|$", section, flags=re.MULTILINE):
        module, names = row
        table[module] = [name for name in re.findall(r"`([^`]+)`", names) if IDENTIFIER.fullmatch(name)]
    return table


def autodoc_entries() -> list[str]:
    """What the reference pages document with autodoc, as the dotted names they give."""
    return [name for page in sorted(REFERENCE.glob("*.md")) for name in AUTODOC.findall(page.read_text())]


def test_the_package_exports_exactly_the_public_names():
    assert mcpforms.__all__ == PUBLIC
    assert documented()["mcpforms"] == PUBLIC


def test_the_api_page_documents_exactly_what_the_package_exports():
    entries = AUTODOC.findall((REFERENCE / "api.md").read_text())
    of_the_package = [name.removeprefix("mcpforms.") for name in entries if name.count(".") == 1]
    assert len(of_the_package) == len(set(of_the_package)), "a name is documented twice"
    assert {
        "not documented": set(PUBLIC) - set(of_the_package),
        "not exported": set(of_the_package) - set(PUBLIC),
    } == {
        "not documented": set(),
        "not exported": set(),
    }


def test_every_name_of_the_table_has_an_autodoc_entry():
    # A name the package re-exports is documented once, under ``mcpforms``.
    entries = set(autodoc_entries())
    missing = [
        f"{module}.{name}"
        for module, names in documented().items()
        for name in names
        if f"{module}.{name}" not in entries
        and not (name in PUBLIC and getattr(mcpforms, name) is getattr(import_module(module), name))
    ]
    assert missing == []


def test_each_public_name_imports_from_the_package_and_is_listed_by_dir():
    for name in PUBLIC:
        assert getattr(mcpforms, name) is getattr(import_module(mcpforms._HOMES[name]), name)
    assert set(PUBLIC) <= set(dir(mcpforms))
    with pytest.raises(AttributeError, match="has no attribute 'check_name'"):
        mcpforms.check_name  # noqa: B018  (an internal name is not reachable from the package)


def test_every_documented_name_imports_from_its_module():
    table = documented()
    assert len(table) > 10
    missing = [
        f"{module}.{name}"
        for module, names in table.items()
        for name in names
        if not hasattr(import_module(module), name)
    ]
    assert missing == []


def test_a_module_that_declares_all_declares_exactly_its_documented_names():
    declared = {
        module: sorted(import_module(module).__all__)
        for module in documented()
        if hasattr(import_module(module), "__all__")
    }
    assert {"mcpforms", "mcpforms.fields", "mcpforms.tools", "mcpforms.protocol"} <= set(declared)
    assert {module: sorted(documented()[module]) for module in declared} == declared


def loaded_by(code: str) -> list[str]:
    """The modules of mcpforms, pydantic, ninja and Django's ORM that ``code`` loads in a fresh process."""
    probe = f"import sys; {code}; print(*sorted(sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return [name for name in out.split() if name.startswith(("mcpforms", "pydantic", "ninja", "django.db"))]


def test_importing_the_package_loads_nothing_else():
    # No settings are configured in the probe: the package must import before Django is set up.
    assert loaded_by("import mcpforms") == ["mcpforms"]


def test_the_pure_names_load_no_models_registry_or_protocol_core():
    loaded = loaded_by("from mcpforms import AutoFormField, accepted_form_input, form_schema")
    assert not [name for name in loaded if name.startswith(("mcpforms.protocol", "pydantic", "ninja"))]
    assert "mcpforms.models" not in loaded and "mcpforms.registry" not in loaded


def test_the_pure_schema_module_imports_alone():
    # Names load on first use: importing the schema brings in neither the registry nor the protocol core.
    probe = "import sys, mcpforms.schema; print(*sorted(sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    ours = [name for name in loaded.split() if name.startswith(("mcpforms", "pydantic", "ninja"))]
    assert ours == ["mcpforms", "mcpforms.conf", "mcpforms.fields", "mcpforms.schema"]
