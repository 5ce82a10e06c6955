"""Sphinx configuration of mcpforms' documentation: `make docs` builds it with warnings as errors."""

from __future__ import annotations

import os
import sys
from pathlib import Path

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
exclude_patterns = ["_build", "_inventories", "**/conftest.py"]

myst_enable_extensions = ["colon_fence", "deflist", "fieldlist"]
# Headings up to ### get anchors, so a page can link to `page.md#a-heading`.
myst_heading_anchors = 3

# Offline first: the committed inventories, then the live ones when the network allows.
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
copybutton_prompt_text = r"\$ "
copybutton_prompt_is_regexp = True
