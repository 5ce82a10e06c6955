"""``mcpforms.oauth.settings()``, the recommended ``OAUTH2_PROVIDER``, and the checks that compare with it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core.checks import Error, Warning, run_checks
from django.test import override_settings
from oauth2_provider.settings import DEFAULTS

import mcpforms.oauth
from mcpforms.checks import oauth_provider
from mcpforms.oauth.validator import Validator

ROOT = Path(__file__).resolve().parent.parent
PRESET = mcpforms.oauth.settings()
OAUTH: dict[str, Any] = {"AUTHENTICATION": ["mcpforms.oauth.OAuth2Auth"], "BASE_URL": "https://forms.example"}


def test_every_key_is_one_django_oauth_toolkit_reads():
    # An upgrade that renames a setting fails here, rather than the preset silently losing it.
    assert sorted(set(PRESET) - set(DEFAULTS)) == []


def test_overrides_replace_keys_and_leave_the_rest():
    changed = mcpforms.oauth.settings(ACCESS_TOKEN_EXPIRE_SECONDS=900, DCR_ENABLED=False)
    assert changed["ACCESS_TOKEN_EXPIRE_SECONDS"] == 900
    assert changed["DCR_ENABLED"] is False
    assert {
        key: value
        for key, value in changed.items()
        if key not in ("ACCESS_TOKEN_EXPIRE_SECONDS", "DCR_ENABLED")
    } == {
        key: value
        for key, value in PRESET.items()
        if key not in ("ACCESS_TOKEN_EXPIRE_SECONDS", "DCR_ENABLED")
    }
    assert mcpforms.oauth.settings() == PRESET  # each call is a fresh dict


def test_a_settings_module_can_call_it_before_django_has_loaded_its_apps():
    code = "import mcpforms.oauth; assert mcpforms.oauth.settings()['CIMD_ENABLED']; print('ok')"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


@pytest.mark.django_db  # every check runs, and those of registered forms may read their choices
def test_the_preset_passes_the_toolkits_own_checks_deploy_included():
    with override_settings(OAUTH2_PROVIDER=PRESET, MCPFORMS=OAUTH):
        found = run_checks(include_deployment_checks=True)
    toolkit = {message.id for message in found if str(message.id).startswith("oauth2_provider.")}
    # Deliberate: tokens stored in plaintext (hashed storage rules out the refresh grace period concurrent
    # assistants need, E001), and http redirect URIs (loopback callbacks of desktop clients, RFC 8252).
    assert toolkit == {"oauth2_provider.W006", "oauth2_provider.W008"}
    mine = [message.id for message in found if message.id in oauth_provider.OAUTH_PROVIDER_CHECK_IDS]
    assert mine == []


# The checks -----------------------------------------------------------------------------------------------


def advice(oauth2_provider: dict[str, Any], mcpforms_settings: dict[str, Any] = OAUTH) -> list[str | None]:
    with override_settings(OAUTH2_PROVIDER=oauth2_provider, MCPFORMS=mcpforms_settings):
        return [message.id for message in oauth_provider.check_oauth_provider()]


def test_the_preset_draws_no_advice():
    assert advice(PRESET) == []


def test_without_oauth_configured_there_is_nothing_to_compare():
    assert advice({}, {"AUTHENTICATION": ["mcpforms.auth.AccessTokenAuth"]}) == []


def test_the_toolkits_defaults_draw_a_warning_per_item_that_matters_to_hosts():
    found = advice({})
    assert found == [
        "mcpforms.W303",  # CIMD off
        "mcpforms.W307",  # DCR off
        "mcpforms.W309",  # implicit, password, client credentials and device grants advertised
        "mcpforms.W312",  # plain PKCE
        "mcpforms.W313",  # no `iss`
        "mcpforms.W314",  # implicit grant
        "mcpforms.W315",  # password grant
        "mcpforms.W316",  # no localhost loopback
        "mcpforms.W317",  # 10-hour access tokens
        "mcpforms.W319",  # unbound tokens, tokens for anything
    ]


@pytest.mark.parametrize(
    ("override", "check_id", "says"),
    [
        ({"CIMD_ENABLED": False}, "mcpforms.W303", "dynamic registration"),
        ({"CIMD_METADATA_FETCHER": "oauth2_provider.cimd.SafeMetadataFetcher"}, "mcpforms.W304", "claude.ai"),
        (
            {"CIMD_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.cimd.AllowAllCIMDPermission",)},
            "mcpforms.W305",
            "token endpoint",
        ),
        (
            {"OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["client_secret_post", "client_secret_basic"]},
            "mcpforms.W306",
            "Claude falls back to dynamic registration",
        ),
        ({"DCR_ENABLED": False}, "mcpforms.W307", "Cursor"),
        (
            {"DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",)},
            "mcpforms.W308",
            "throttle",
        ),
        (
            {"OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token", "password"]},
            "mcpforms.W309",
            "grant",
        ),
        ({"OAUTH2_BACKEND_CLASS": "oauth2_provider.oauth2_backends.OAuthLibCore"}, "mcpforms.W310", "iss"),
        ({"PKCE_REQUIRED": False}, "mcpforms.W311", "PKCE"),
        ({"COMPLIANT_BCP_RFC9700_PKCE_METHOD": False}, "mcpforms.W312", "S256"),
        ({"COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": False}, "mcpforms.W313", "ChatGPT"),
        ({"COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": False}, "mcpforms.W314", "implicit"),
        ({"COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": False}, "mcpforms.W315", "password"),
        ({"ALLOW_LOCALHOST_LOOPBACK": False}, "mcpforms.W316", "Claude Code"),
        ({"ACCESS_TOKEN_EXPIRE_SECONDS": 36000}, "mcpforms.W317", "36000"),
        ({"ROTATE_REFRESH_TOKEN": False}, "mcpforms.W318", "rotate"),
        (
            {"OAUTH2_VALIDATOR_CLASS": "oauth2_provider.oauth2_validators.OAuth2Validator"},
            "mcpforms.W319",
            "resource",
        ),
    ],
)
def test_each_item_that_falls_short_is_named_with_what_a_host_then_does(override, check_id, says):
    with override_settings(OAUTH2_PROVIDER={**PRESET, **override}, MCPFORMS=OAUTH):
        (message,) = oauth_provider.check_oauth_provider()
    assert isinstance(message, Warning)
    assert message.id == check_id
    assert says in message.msg
    assert "mcpforms.oauth.settings()" in str(message.hint)


def test_subclasses_of_mcpforms_classes_are_fine():
    with override_settings(
        OAUTH2_PROVIDER={**PRESET, "OAUTH2_VALIDATOR_CLASS": "tests.test_oauth_preset.MyValidator"},
        MCPFORMS=OAUTH,
    ):
        assert oauth_provider.check_oauth_provider() == []


def test_a_key_django_oauth_toolkit_does_not_know_is_an_error():
    with override_settings(OAUTH2_PROVIDER={**PRESET, "ACCES_TOKEN_EXPIRE_SECONDS": 60}, MCPFORMS=OAUTH):
        (message,) = oauth_provider.check_oauth_provider()
    assert isinstance(message, Error)
    assert message.id == "mcpforms.E307"
    assert "'ACCES_TOKEN_EXPIRE_SECONDS'" in message.msg


def test_an_issuer_endpoint_other_than_the_published_issuer_is_an_error():
    with override_settings(
        OAUTH2_PROVIDER={**PRESET, "OIDC_ISS_ENDPOINT": "https://forms.example/o"}, MCPFORMS=OAUTH
    ):
        (message,) = oauth_provider.check_oauth_provider()
    assert isinstance(message, Error)
    assert message.id == "mcpforms.E308"
    assert "https://forms.example/oauth" in message.msg
    with override_settings(
        OAUTH2_PROVIDER={**PRESET, "OIDC_ISS_ENDPOINT": "https://forms.example/oauth"}, MCPFORMS=OAUTH
    ):
        assert oauth_provider.check_oauth_provider() == []


def test_manage_py_check_reports_them():
    code = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'tests.settings'\n"
        "from django.conf import settings\n"
        "settings.MCPFORMS = {'AUTHENTICATION': ['mcpforms.oauth.OAuth2Auth'], 'BASE_URL': 'https://forms.example'}\n"
        "django.setup()\n"
        "from django.core.management import call_command\n"
        "call_command('check')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert "mcpforms.W303" in result.stderr + result.stdout


class MyValidator(Validator):
    """A project's own refinement of mcpforms' validator."""
