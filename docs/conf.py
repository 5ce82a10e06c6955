"""Sphinx configuration of mcpforms' documentation: `make docs` builds it with warnings as errors."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import django

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# autodoc imports mcpforms, whose modules need configured settings: the test suite's, which install
# mcpforms, the admin and django-oauth-toolkit, so every public module imports.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
django.setup()

project = "mcpforms"
author = "The mcpforms authors"
copyright = "2026, The mcpforms authors"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.intersphinx",
    "sphinx_copybutton",
]

source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_inventories"]
# Every unresolved reference is a warning, hence an error: here as well as under `make docs`' -n, so that
# Read the Docs (which passes -W but not -n) builds as strictly.
nitpicky = True

myst_enable_extensions = ["colon_fence", "deflist", "fieldlist"]
# Headings up to ### get anchors, so a page can link to `page.md#a-heading`.
myst_heading_anchors = 3

# Offline: Sphinx reads the first location that loads, so the committed inventories are all a build reads,
# and the live ones are fetched only if a committed file cannot be read.
intersphinx_mapping = {
    "python": ("https://docs.python.org/3", ("_inventories/python.inv", None)),
    "django": (
        "https://docs.djangoproject.com/en/5.2/",
        ("_inventories/django.inv", None),
    ),
}
intersphinx_timeout = 5

autodoc_member_order = "bysource"
autodoc_typehints = "description"

html_theme = "furo"
html_title = "mcpforms"
html_static_path = ["_static"]
# Furo's "view this page" and "edit this page" links, to the page's source on GitHub.
html_theme_options = {
    "source_repository": "https://github.com/mcpforms/mcpforms/",
    "source_branch": "main",
    "source_directory": "docs/",
}
copybutton_prompt_text = r"\$ "
copybutton_prompt_is_regexp = True

# Type hints the reference's autodoc cannot link (docs/reference/; added by the reference pages) ----------

# Django documents its classes under the modules they are imported from, while autodoc names the module
# that defines them: each defining path, mapped to the one Django's inventory has.
DJANGO_DOCUMENTED_AS = {
    "django.forms.forms.BaseForm": "django.forms.Form",  # Django documents the form API on Form
    "django.forms.fields.Field": "django.forms.Field",
    "django.db.models.base.Model": "django.db.models.Model",
    "django.http.request.HttpRequest": "django.http.HttpRequest",
    "django.core.checks.messages.CheckMessage": "django.core.checks.CheckMessage",
}
# mcpforms' own types that public signatures name but that are not public themselves (the pages say in
# words what each holds), type aliases autodoc leaves unresolved, and django-ninja, which has no inventory.
nitpick_ignore = [
    ("py:class", name)
    for name in (
        "mcpforms.answers.FormOutcome",
        "mcpforms.answers.InputResponse",
        "mcpforms.approvals.Decided",
        "mcpforms.prompts.FormPrompt",
        "mcpforms.protocol.catalog.Deferred",
        "mcpforms.protocol.context.Access",
        "mcpforms.protocol.context._Progress",
        "mcpforms.protocol.reply.Reply",
        "mcpforms.protocol.state.RequestState",
        "mcpforms.protocol.tasks.TaskControl",
        "mcpforms.registry.H",
        "mcpforms.registry.Registered",
        "mcpforms.registry.ToolOptions",
        "mcpforms.task_store.Started",
        "mcpforms.ui.ElicitOptions",
        "mcpforms.ui.ShownForm",
        "Condition",
        "SessionStore",
        "StateVersion",
        "StepClass",
        "TaskTurn",
        "ToolHandler",
        "ninja.main.NinjaAPI",
    )
]


def _django_documented_as(app: object, env: object, node: dict[str, str], contnode: object) -> None:
    target = DJANGO_DOCUMENTED_AS.get(node.get("reftarget", ""))
    if target is not None:
        node["reftarget"] = target  # intersphinx, which handles the event next, resolves it


def setup(app: Any) -> None:
    app.connect("missing-reference", _django_documented_as, priority=400)
