"""The checks of the MCP endpoint's settings: one test per id, and proof ``manage.py check`` runs them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from django.core.checks import Error, Warning
from django.test import override_settings

from mcpforms.checks.endpoint import check_endpoint_settings
from tests.system_checks import ids

ROOT = Path(__file__).resolve().parent.parent


def test_defaults_pass():
    assert check_endpoint_settings() == []


def test_a_valid_configuration_passes():
    valid = {
        "ALLOWED_ORIGINS": ["https://app.example.com", "http://localhost:3000"],
        "PAGE_SIZE": 20,
        "CACHE_TTL_MS": 0,
        "SERVER_NAME": "shop",
        "SERVER_VERSION": None,
        "INSTRUCTIONS": "Use the order tools.",
    }
    with override_settings(MCPFORMS=valid):
        assert check_endpoint_settings() == []


def test_not_a_dict_is_left_to_e001():
    with override_settings(MCPFORMS=["PAGE_SIZE"]):
        assert check_endpoint_settings() == []


@pytest.mark.parametrize(
    "origins",
    [
        "https://app.example.com",
        ["https://app.example.com/"],
        ["app.example.com"],
        ["https://a.com/path"],
        [1],
    ],
)
def test_e005_allowed_origins(origins):
    with override_settings(MCPFORMS={"ALLOWED_ORIGINS": origins}):
        (message,) = check_endpoint_settings()
    assert isinstance(message, Error) and message.id == "mcpforms.E005"
    assert message.hint and "trailing slash" in message.hint


@pytest.mark.parametrize("value", [0, -1, "10", 2.5, True])
def test_e006_page_size(value):
    with override_settings(MCPFORMS={"PAGE_SIZE": value}):
        assert ids(check_endpoint_settings()) == ["mcpforms.E006"]


@pytest.mark.parametrize("value", [-1, "60000", 1.5, False, None])
def test_e007_cache_ttl(value):
    with override_settings(MCPFORMS={"CACHE_TTL_MS": value}):
        assert ids(check_endpoint_settings()) == ["mcpforms.E007"]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SERVER_NAME", None),
        ("SERVER_NAME", ""),
        ("SERVER_VERSION", 3),
        ("INSTRUCTIONS", ""),
        ("INSTRUCTIONS", []),
    ],
)
def test_e008_strings(name, value):
    with override_settings(MCPFORMS={name: value}):
        (message,) = check_endpoint_settings()
    assert message.id == "mcpforms.E008"
    assert name in message.msg


def test_w003_any_host():
    with override_settings(ALLOWED_HOSTS=["*"]):
        (message,) = check_endpoint_settings()
    assert isinstance(message, Warning) and message.id == "mcpforms.W003"


def test_manage_py_check_reports_them():
    code = (
        "import django, sys; from django.conf import settings;"
        "settings.configure("
        "INSTALLED_APPS=['django.contrib.contenttypes', 'django.contrib.auth', 'mcpforms'],"
        "MCPFORMS={'PAGE_SIZE': 0}, SECRET_KEY='x' * 50, ALLOWED_HOSTS=['*']);"
        "django.setup(); from django.core.management import call_command; call_command('check')"
    )
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    assert run.returncode != 0
    assert "mcpforms.E006" in run.stderr
    assert "mcpforms.W003" in run.stderr


@pytest.mark.parametrize(
    ("configured", "expected"),
    [
        (
            {
                "SESSION_STORE": "mcpforms.session_stores.CacheSessions",
                "SESSION_MAX_AGE": 60,
                "RETRY_MS": 500,
            },
            [],
        ),
        ({"SESSION_STORE": "mcpforms.session_stores.Nowhere"}, ["mcpforms.E009"]),
        ({"SESSION_STORE": 3}, ["mcpforms.E009"]),
        ({"SESSION_MAX_AGE": 0}, ["mcpforms.E010"]),
        ({"RETRY_MS": "soon"}, ["mcpforms.E010"]),
    ],
)
def test_the_2025_era_settings_are_checked(configured, expected):
    with override_settings(MCPFORMS=configured):
        assert ids(check_endpoint_settings()) == expected
