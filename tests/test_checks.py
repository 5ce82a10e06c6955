from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest
from django.core.checks import CheckMessage, Error, Warning
from django.core.checks.registry import registry
from django.test import override_settings

from mcpforms.checks.common import SETTINGS_CHECKS, Check
from mcpforms.checks.setting import check_settings
from mcpforms.conf import MIN_JSON_DEPTH, SETTINGS, Section
from tests.system_checks import ids, manage_py_check

ROOT = Path(__file__).resolve().parent.parent


def test_defaults_pass():
    assert check_settings() == []


def test_a_valid_configuration_passes():
    with override_settings(MCPFORMS={"STATE_MAX_AGE": 60, "STATE_KEY": "k" * 40, "MAX_MODEL_CHOICES": 5}):
        assert check_settings() == []


def test_e001_not_a_dict():
    with override_settings(MCPFORMS=["STATE_MAX_AGE"]):
        (message,) = check_settings()
    assert isinstance(message, Error)
    assert message.id == "mcpforms.E001"
    assert "not list" in message.msg


@pytest.mark.parametrize("value", [0, -5, "60", 1.5, True, None])
@pytest.mark.parametrize("name", ["STATE_MAX_AGE", "MAX_MODEL_CHOICES"])
def test_e002_positive_integers(name, value):
    with override_settings(MCPFORMS={name: value}):
        assert ids(check_settings()) == ["mcpforms.E002"]


@pytest.mark.parametrize("key", ["short", 12345, ["k" * 40]])
def test_e003_state_key(key):
    with override_settings(MCPFORMS={"STATE_KEY": key}):
        assert ids(check_settings()) == ["mcpforms.E003"]


@pytest.mark.parametrize("fallbacks", ["k" * 40, [1, 2], {"k": "v"}])
def test_e004_state_key_fallbacks(fallbacks):
    with override_settings(MCPFORMS={"STATE_KEY": "k" * 40, "STATE_KEY_FALLBACKS": fallbacks}):
        assert ids(check_settings()) == ["mcpforms.E004"]


@pytest.mark.parametrize(
    ("key", "hint"),
    [
        ("STATE_MAX_AGES", "Did you mean 'STATE_MAX_AGE'?"),
        ("base_url", "Did you mean 'BASE_URL'?"),
        ("BASEURL", "Did you mean 'BASE_URL'?"),
        (
            "COLOUR_SCHEME",
            "No setting has that name; every key is listed at "
            "https://mcpforms.readthedocs.io/en/latest/reference/settings.html.",
        ),
    ],
)
def test_w001_an_unknown_key_suggests_the_nearest_setting(key, hint):
    with override_settings(MCPFORMS={key: 60}):
        (message,) = check_settings()
    assert isinstance(message, Warning)
    assert message.id == "mcpforms.W001"
    assert str(message.hint).startswith(hint)
    assert "ALLOWED_ORIGINS" not in str(message.hint)  # not a list of every key


def test_w002_fallbacks_without_a_dedicated_key():
    with override_settings(MCPFORMS={"STATE_KEY_FALLBACKS": ["k" * 40]}):
        assert ids(check_settings()) == ["mcpforms.W002"]


def test_manage_py_check_fails_on_a_bad_setting(tmp_path):
    """The check is registered with Django, not just importable."""
    result = manage_py_check(tmp_path, {"STATE_MAX_AGE": -1})
    assert result.returncode == 1
    assert "mcpforms.E002" in result.stderr


# URL-mode elicitation ------------------------------------------------------------------------------------


def url_mode_ids(**configured):
    from mcpforms.checks.url_mode import check_url_mode_settings

    with override_settings(MCPFORMS=configured):
        return ids(check_url_mode_settings())


def test_url_mode_defaults_and_a_valid_configuration_pass():
    assert url_mode_ids() == []
    assert url_mode_ids(BASE_URL="https://forms.example.com", URL_MODE_MAX_AGE=60) == []
    assert url_mode_ids(BASE_URL="http://localhost:8000/app") == []


@pytest.mark.parametrize("value", [0, -5, "900", True, None])
def test_e201_url_mode_max_age(value):
    assert url_mode_ids(URL_MODE_MAX_AGE=value) == ["mcpforms.E201"]


@pytest.mark.parametrize("value", ["forms.example.com", "ftp://example.com", "https://x.com/?a=1", 42, ""])
def test_e202_base_url(value):
    assert url_mode_ids(BASE_URL=value) == ["mcpforms.E202"]


@pytest.mark.parametrize("value", ["", 42, None, "private_files"])
def test_e203_wizard_file_storage(value):
    assert url_mode_ids(WIZARD_FILE_STORAGE=value) == ["mcpforms.E203"]


def test_e203_accepts_an_alias_storages_defines_and_the_default_without_one(settings):
    assert url_mode_ids(WIZARD_FILE_STORAGE="mcpforms_wizard_files") == []  # a private folder stands in
    settings.STORAGES = {
        **settings.STORAGES,
        "private_files": {"BACKEND": "django.core.files.storage.InMemoryStorage"},
    }
    assert url_mode_ids(WIZARD_FILE_STORAGE="private_files") == []


def test_w201_plain_http_outside_development():
    assert url_mode_ids(BASE_URL="http://forms.example.com") == ["mcpforms.W201"]


def test_w202_base_url_without_the_page_in_the_urlconf():
    with override_settings(ROOT_URLCONF="tests.conformance.urls"):
        assert url_mode_ids(BASE_URL="https://forms.example.com") == ["mcpforms.W202"]


# Check ids ----------------------------------------------------------------------------------------------

PACKAGE = ROOT / "mcpforms"
CHECK_ID = re.compile(r"mcpforms\.[EW]\d{3}")


def written_ids() -> list[str]:
    """Every ``id="mcpforms.…"`` in the package's source, and every ``check_id=`` handed to a helper that
    builds the message: one message each (a setting's ids are its row's)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                found += [
                    keyword.value.value
                    for keyword in node.keywords
                    if keyword.arg in ("id", "check_id")
                    and isinstance(keyword.value, ast.Constant)
                    and isinstance(keyword.value.value, str)
                    and CHECK_ID.fullmatch(keyword.value.value)
                ]
    return found


def row_ids() -> set[str]:
    """The ids the settings' rows report bad values under."""
    return {row.check for row in SETTINGS.values()} | {
        row.bounds.check for row in SETTINGS.values() if row.bounds is not None
    }


def test_every_check_id_is_declared_once():
    written = written_ids()
    assert len(written) == len(set(written)) > 10, sorted(written)
    assert set(written) & row_ids() == set()  # a setting's value is reported by its row alone


# docs/reference/checks.md has an entry for each of these ids: tests/test_docs_reference.py.


@pytest.mark.parametrize("name", SETTINGS)
def test_the_registered_checks_report_a_value_of_no_kind_under_its_rows_id(name):
    value_checks: list[Check] = [check_settings, *SETTINGS_CHECKS]
    assert set(value_checks) <= set(registry.get_checks())  # what manage.py check runs
    with override_settings(MCPFORMS={name: object()}):
        found = [message.id for check in value_checks for message in check()]
    assert SETTINGS[name].check in found


# Limits --------------------------------------------------------------------------------------------------


def limit_ids(**configured):
    from mcpforms.checks.limits import check_limits

    with override_settings(MCPFORMS=configured):
        return ids(check_limits())


def test_limit_defaults_and_a_valid_configuration_pass():
    assert limit_ids() == []
    small = {
        "MAX_BODY_BYTES": 10_000,
        "MAX_JSON_DEPTH": 16,
        "MAX_STRING_LENGTH": 5_000,
        "MAX_FORM_FIELDS": 1,
        "MAX_ROUNDS": 1,
        "MAX_STATE_BYTES": 5_000,
    }
    assert limit_ids(**small) == []


@pytest.mark.parametrize("value", [0, -5, "64", 1.5, True, None])
@pytest.mark.parametrize("name", [row.name for row in SETTINGS.values() if row.section is Section.LIMITS])
def test_e011_limits_are_positive_integers(name, value):
    assert limit_ids(**{name: value}) == ["mcpforms.E011"]


def test_e012_json_depth_within_what_python_can_recurse_through():
    deepest = sys.getrecursionlimit() // 2
    assert limit_ids(MAX_JSON_DEPTH=MIN_JSON_DEPTH) == []
    assert limit_ids(MAX_JSON_DEPTH=MIN_JSON_DEPTH - 1) == ["mcpforms.E012"]
    assert limit_ids(MAX_JSON_DEPTH=deepest) == []
    assert limit_ids(MAX_JSON_DEPTH=deepest + 1) == ["mcpforms.E012"]


@pytest.mark.parametrize(
    ("configured", "expected"),
    [
        ({"MAX_STATE_BYTES": 5_000, "MAX_STRING_LENGTH": 5_000}, []),
        ({"MAX_STATE_BYTES": 5_001, "MAX_STRING_LENGTH": 5_000}, ["mcpforms.E013"]),
        ({"MAX_STATE_BYTES": 5_000, "MAX_BODY_BYTES": 5_000}, []),
        ({"MAX_STATE_BYTES": 5_001, "MAX_BODY_BYTES": 5_000}, ["mcpforms.E013"]),
        ({"MAX_STATE_BYTES": 200_000}, ["mcpforms.E013"]),  # longer than the default string
    ],
)
def test_e013_a_state_the_server_mints_can_come_back(configured, expected):
    assert limit_ids(**configured) == expected


def test_manage_py_check_fails_on_a_nonsense_limit(tmp_path):
    """The limits' check is registered with Django too."""
    result = manage_py_check(tmp_path, {"MAX_JSON_DEPTH": 100_000})
    assert result.returncode == 1
    assert "mcpforms.E012" in result.stderr


# The 2025 era's budgets -------------------------------------------------------------------------------------

BUDGETS = [
    "SESSIONS_PER_PRINCIPAL",
    "ANONYMOUS_SESSIONS_PER_ADDRESS",
    "ANONYMOUS_SESSIONS",
    "CALLS_PER_SESSION",
]


def endpoint_ids(**configured):
    from mcpforms.checks.endpoint import check_endpoint_settings

    with override_settings(MCPFORMS=configured):
        return [i for i in ids(check_endpoint_settings()) if i != "mcpforms.W003"]


@pytest.mark.parametrize("name", BUDGETS)
def test_budgets_are_positive_integers_or_none(name):
    assert endpoint_ids(**{name: 1}) == []
    assert endpoint_ids(**{name: None}) == []


@pytest.mark.parametrize("value", [0, -5, "20", 1.5, True])
@pytest.mark.parametrize("name", BUDGETS)
def test_e014_a_budget_that_is_no_count(name, value):
    assert endpoint_ids(**{name: value}) == ["mcpforms.E014"]


TASK_BUDGETS = ["TASKS_PER_PRINCIPAL", "ANONYMOUS_TASKS_PER_ADDRESS", "ANONYMOUS_TASKS"]


@pytest.mark.parametrize("value", [0, -5, "20", 1.5, True])
@pytest.mark.parametrize("name", TASK_BUDGETS)
def test_e021_a_task_budget_that_is_no_count(name, value):
    with override_settings(MCPFORMS={name: value}):
        assert ids(check_settings()) == ["mcpforms.E021"]
    with override_settings(MCPFORMS={name: None}):
        assert check_settings() == []


class CountlessStore:
    """A session store written before stores counted what they hold."""


def test_e015_a_session_store_that_cannot_count_cannot_keep_the_budgets():
    assert endpoint_ids(SESSION_STORE="tests.test_checks.CountlessStore") == ["mcpforms.E015"]
    assert endpoint_ids(SESSION_STORE="mcpforms.session_stores.CacheSessions") == []
    assert endpoint_ids(SESSION_STORE="mcpforms.protocol.era2025.sessions.MemorySessions") == []


class StoreThatCannotAdopt:
    """A session store written before a client could sign in on the session it opened anonymously."""

    def count_sessions(self, *, principal: str, address: str | None = None) -> object: ...

    def count_calls(self, session_id: str) -> object: ...


def test_e015_a_session_store_that_cannot_adopt_a_session_cannot_let_its_client_sign_in():
    messages = [
        message
        for message in check_endpoint_settings_with(SESSION_STORE="tests.test_checks.StoreThatCannotAdopt")
        if message.id != "mcpforms.W003"
    ]
    assert [message.id for message in messages] == ["mcpforms.E015"]
    assert "has no adopt" in messages[0].msg
    assert endpoint_ids(SESSION_STORE="mcpforms.session_stores.DatabaseSessions") == []


def check_endpoint_settings_with(**configured: object) -> list[CheckMessage]:
    from mcpforms.checks.endpoint import check_endpoint_settings

    with override_settings(MCPFORMS=configured):
        return list(check_endpoint_settings())


# OAuth (mcpforms.oauth): what a resource server needs to judge a token ----------------------------------

OAUTH = ["mcpforms.auth.AccessTokenAuth", "mcpforms.oauth.OAuth2Auth"]
OFFERS_MCP = {"SCOPES": {"mcp": "Use the forms", "read": "Reading scope"}}


def oauth_ids(**configured):
    from mcpforms.checks.auth import check_auth_settings

    with override_settings(MCPFORMS={"AUTHENTICATION": OAUTH, **configured}, OAUTH2_PROVIDER=OFFERS_MCP):
        return ids(check_auth_settings())


def test_oauth_with_a_base_url_and_the_scope_on_offer_passes():
    assert oauth_ids(BASE_URL="https://forms.example.com") == []
    assert oauth_ids(BASE_URL="https://forms.example.com", OAUTH_ACCEPT_ORIGIN_AUDIENCE=True) == []


@pytest.mark.parametrize(
    ("login_url", "problem"),
    [
        ("login", "names no URL of the URLconf ('login')"),
        ("/accounts/login/", "is the path '/accounts/login/', which no view of the URLconf serves"),
    ],
)
def test_e316_sign_in_with_a_login_url_nothing_serves(login_url, problem):
    from mcpforms.checks.auth import check_auth_settings

    # The tests' URLconf serves django.contrib.auth.urls: this one, as a new project's, does not.
    with (
        override_settings(LOGIN_URL=login_url, ROOT_URLCONF="tests.urls_without_login"),
        override_settings(MCPFORMS={"AUTHENTICATION": OAUTH, "BASE_URL": "https://forms.example.com"}),
        override_settings(OAUTH2_PROVIDER=OFFERS_MCP),
    ):
        (message,) = check_auth_settings()
    assert message.id == "mcpforms.E316"
    assert message.msg == (
        f"Sign-in is configured, but LOGIN_URL {problem}: the consent page sends people there first, so "
        "nobody could sign in."
    )
    assert "LOGIN_URL = 'admin:login'" in str(message.hint)


@pytest.mark.parametrize("login_url", ["admin:login", "/admin/login/", "https://sso.example.com/login"])
def test_a_login_url_the_site_or_another_serves_passes(login_url):
    with override_settings(LOGIN_URL=login_url):
        assert oauth_ids(BASE_URL="https://forms.example.com") == []


def test_e305_oauth_without_a_base_url():
    # Tokens are then refused: no URL says what their audience must be.
    assert oauth_ids() == ["mcpforms.E305"]
    assert oauth_ids(BASE_URL=None) == ["mcpforms.E305"]


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_e306_accept_origin_audience_is_a_bool(value):
    assert oauth_ids(BASE_URL="https://forms.example.com", OAUTH_ACCEPT_ORIGIN_AUDIENCE=value) == [
        "mcpforms.E306"
    ]


def test_w302_a_required_scope_the_authorization_server_does_not_offer():
    # django-oauth-toolkit's default scopes are read and write: a token could never carry "mcp".
    from mcpforms.checks.auth import check_auth_settings

    configured = {"AUTHENTICATION": OAUTH, "BASE_URL": "https://forms.example.com"}
    with override_settings(MCPFORMS=configured, OAUTH2_PROVIDER={}):
        (warning,) = check_auth_settings()
    assert warning.id == "mcpforms.W302"
    assert "'mcp'" in warning.msg and "OAUTH2_PROVIDER" in (warning.hint or "")
    assert oauth_ids(BASE_URL="https://forms.example.com", OAUTH_SCOPES=["read"]) == []
    assert oauth_ids(BASE_URL="https://forms.example.com", OAUTH_SCOPES=["mcp", "admin"]) == ["mcpforms.W302"]
