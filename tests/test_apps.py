from __future__ import annotations

import subprocess
import sys
from io import StringIO

import pytest
from django.apps import apps
from django.core.management import call_command

import mcpforms


@pytest.mark.django_db
def test_migrations_are_up_to_date():
    out = StringIO()
    call_command("makemigrations", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()


def test_the_app_sets_its_own_auto_field():
    assert apps.get_app_config("mcpforms").default_auto_field == "django.db.models.BigAutoField"


def test_the_public_api_is_small_and_importable():
    assert set(mcpforms.__all__) == {
        "AutoFormField",
        "FormTool",
        "Option",
        "accepted_form_input",
        "display_form",
        "fields_for_form",
        "fields_for_model",
        "form_input_request",
        "form_schema",
        "input_response",
        "register",
        "validate_with_form",
    }
    for name in mcpforms.__all__:
        assert getattr(mcpforms, name)


def test_the_pure_schema_module_imports_alone():
    # Names load on first use: importing the schema brings in neither the registry nor the protocol core.
    probe = "import sys, mcpforms.schema; print(*sorted(sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    ours = [name for name in loaded.split() if name.startswith(("mcpforms", "pydantic", "ninja"))]
    assert ours == ["mcpforms", "mcpforms.conf", "mcpforms.fields", "mcpforms.schema"]
