from __future__ import annotations

from io import StringIO

import pytest
from django.apps import apps
from django.core.checks.registry import registry
from django.core.management import call_command

from mcpforms.registry import check_form_tools


@pytest.mark.django_db
def test_migrations_are_up_to_date():
    out = StringIO()
    call_command("makemigrations", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()


def test_the_app_sets_its_own_auto_field():
    assert apps.get_app_config("mcpforms").default_auto_field == "django.db.models.BigAutoField"


def test_ready_registers_the_checks_of_the_form_tools_options():
    registered: list[object] = list(registry.get_checks())
    assert check_form_tools in registered
