"""Dynamic client registration (RFC 7591/7592) as the hosts send it, and as an attacker would: every
registration below is the payload a real client sends, followed where it matters by a real sign-in
(authorize, consent, token) on django-oauth-toolkit's views.

The views are the site's own: ``tests/urls.py`` mounts ``mcpforms.oauth.urls`` at the root, whose
``oauth/register/`` is ``mcpforms.oauth.dcr.RegistrationView``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client, override_settings
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application

pytestmark = pytest.mark.django_db

REGISTER = "/oauth/register/"
ADDRESS = "203.0.113.5"
DOT = {
    "DCR_ENABLED": True,
    "DCR_REGISTRATION_PERMISSION_CLASSES": ["mcpforms.oauth.dcr.RegistrationPermission"],
    # What mcpforms.oauth.settings() sets: Cursor's scheme is one a consent may redirect to, and
    # localhost redirects match on any port (RFC 8252 §7.3).
    "ALLOWED_REDIRECT_URI_SCHEMES": ["https", "http", "cursor"],
    "ALLOW_LOCALHOST_LOOPBACK": True,
    "PKCE_REQUIRED": True,
    "SCOPES": {"mcp": "Use this site's forms"},
    "DEFAULT_SCOPES": ["mcp"],
}

CLAUDE = {
    "client_name": "Claude",
    "redirect_uris": ["https://claude.ai/api/mcp/auth_callback"],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "client_secret_post",
}
CURSOR_CALLBACK = "cursor://anysphere.cursor-mcp/oauth/callback"
CURSOR = {
    "client_name": "Cursor",
    "redirect_uris": [CURSOR_CALLBACK, "http://localhost:54213/callback"],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
}
MCP_REMOTE = {
    "client_name": "MCP CLI Proxy",
    "redirect_uris": ["http://localhost:3334/oauth/callback"],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
    "application_type": "native",
    "software_id": "2e6dc280-f3c3-4e01-99a7-8181dbd1d23d",
    "software_version": "0.15.1",
}
VSCODE = {
    "client_name": "Visual Studio Code",
    "redirect_uris": ["http://127.0.0.1:33418/", "https://vscode.dev/redirect"],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
    "application_type": "native",
}
INSPECTOR = {  # the Inspector CLI names no token_endpoint_auth_method: RFC 7591's default, a secret
    "redirect_uris": ["http://127.0.0.1:6276/oauth/callback"],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "client_name": "MCP Inspector",
    "client_uri": "https://github.com/modelcontextprotocol/inspector",
    "scope": "",
    "application_type": "native",
}


@pytest.fixture(autouse=True)
def dcr() -> Iterator[None]:
    cache.clear()  # the per-address counters live in the cache
    with override_settings(OAUTH2_PROVIDER=DOT):
        yield
    cache.clear()


def register(payload: Any, *, address: str = ADDRESS, client: Client | None = None) -> Any:
    body = payload if isinstance(payload, str | bytes) else json.dumps(payload)
    return (client or Client()).post(REGISTER, body, content_type="application/json", REMOTE_ADDR=address)


def registered(payload: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    response = register(payload, **kwargs)
    assert response.status_code == 201, response.content
    body: dict[str, Any] = response.json()
    return body


def refused(payload: Any, *, status: int = 400, error: str | None = None) -> dict[str, Any]:
    before = Application.objects.count()
    response = register(payload)
    assert response.status_code == status, response.content
    body: dict[str, Any] = response.json()
    if error is not None:
        assert body["error"] == error, body
    assert body["error_description"]
    assert Application.objects.count() == before  # nothing stored
    return body


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def consent(client_id: str, redirect_uri: str, challenge: str) -> str:
    """Sign in, see the consent page, allow: the Location the browser is sent to."""
    browser = Client()
    browser.force_login(User.objects.get_or_create(username="ada")[0])
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "scope": "mcp",
        "state": "s1",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    page = browser.get("/oauth/authorize/", query)
    assert page.status_code == 200, page.content  # the consent page: a registered client always asks
    answer = browser.post("/oauth/authorize/", {**query, "allow": "Authorize"})
    assert answer.status_code == 302, answer.content
    location: str = answer["Location"]
    return location


def code_of(location: str) -> str:
    return parse_qs(urlsplit(location).query)["code"][0]


# The hosts, as they register ------------------------------------------------------------------------------


def test_claude_registers_with_client_secret_post_and_signs_in_with_it():
    client = registered(CLAUDE)
    assert client["token_endpoint_auth_method"] == "client_secret_post"
    assert client["redirect_uris"] == CLAUDE["redirect_uris"]
    assert client["grant_types"] == ["authorization_code", "refresh_token"]
    assert client["client_name"] == "Claude"
    # RFC 7591 §3.2.1: REQUIRED when a secret is issued; 0 says it never expires.
    assert client["client_secret"] and client["client_secret_expires_at"] == 0
    assert isinstance(client["client_id_issued_at"], int)
    assert client["registration_client_uri"] == (f"http://testserver/oauth/register/{client['client_id']}/")

    verifier, challenge = pkce()
    location = consent(client["client_id"], CLAUDE["redirect_uris"][0], challenge)
    assert location.startswith("https://claude.ai/api/mcp/auth_callback?")
    token = Client().post(
        "/oauth/token/",
        {
            "grant_type": "authorization_code",
            "code": code_of(location),
            "redirect_uri": CLAUDE["redirect_uris"][0],
            "code_verifier": verifier,
            "client_id": client["client_id"],
            "client_secret": client["client_secret"],  # client_secret_post: in the body
        },
    )
    assert token.status_code == 200, token.content
    assert token.json()["access_token"]


def test_the_registration_response_is_never_cached():
    # It carries a client secret and a registration access token (RFC 7591 §3.2.1's example).
    response = register(CLAUDE)
    assert response.status_code == 201
    assert response["Cache-Control"] == "no-store"


def test_cursor_registers_its_mixed_list_and_a_consent_can_reach_its_scheme():
    client = registered(CURSOR)
    assert client["redirect_uris"] == CURSOR["redirect_uris"]
    assert "client_secret" not in client and "client_secret_expires_at" not in client
    _, challenge = pkce()
    assert consent(client["client_id"], CURSOR_CALLBACK, challenge).startswith(CURSOR_CALLBACK + "?")


def test_a_disallowed_extra_uri_is_dropped_and_the_rest_registers():
    payload = {**CURSOR, "redirect_uris": [*CURSOR["redirect_uris"], "http://evil.example/cb"]}
    client = registered(payload)
    assert client["redirect_uris"] == CURSOR["redirect_uris"]  # the response lists what was kept
    app = Application.objects.get(client_id=client["client_id"])
    assert "evil.example" not in app.redirect_uris


def test_mcp_remote_registers_as_a_native_client_and_signs_in_on_any_port():
    client = registered(MCP_REMOTE)
    assert client["token_endpoint_auth_method"] == "none"
    assert client["redirect_uris"] == MCP_REMOTE["redirect_uris"]
    verifier, challenge = pkce()
    # It registered port 3334 and may listen on the next free one (RFC 8252 §7.3).
    moved = "http://localhost:3336/oauth/callback"
    location = consent(client["client_id"], moved, challenge)
    assert location.startswith(moved + "?")
    token = Client().post(
        "/oauth/token/",
        {
            "grant_type": "authorization_code",
            "code": code_of(location),
            "redirect_uri": moved,
            "code_verifier": verifier,
            "client_id": client["client_id"],
        },
    )
    assert token.status_code == 200, token.content


def test_vscode_registers_its_loopback_and_web_redirects():
    client = registered(VSCODE)
    assert client["redirect_uris"] == VSCODE["redirect_uris"]
    _, challenge = pkce()
    # VS Code takes another port when 33418 is busy.
    assert consent(client["client_id"], "http://127.0.0.1:40001/", challenge).startswith(
        "http://127.0.0.1:40001/?"
    )


def test_the_inspector_registers_with_the_default_auth_method():
    client = registered(INSPECTOR)
    assert client["token_endpoint_auth_method"] == "client_secret_basic"
    assert client["client_secret"] and client["client_secret_expires_at"] == 0
    assert client["redirect_uris"] == INSPECTOR["redirect_uris"]


def test_a_null_field_reads_as_absent():
    nulls = {"client_name": None, "token_endpoint_auth_method": None, "grant_types": None}
    client = registered({**CLAUDE, **nulls})
    assert client["token_endpoint_auth_method"] == "client_secret_basic"  # RFC 7591 §2's default
    assert "client_name" not in client


def test_ipv6_loopback_registers():
    assert registered({**MCP_REMOTE, "redirect_uris": ["http://[::1]:8080/cb"]})["redirect_uris"] == [
        "http://[::1]:8080/cb"
    ]


def test_the_site_mounts_these_views_with_and_without_the_slash():
    from django.urls import resolve, reverse

    from mcpforms.oauth.dcr import RegistrationManagementView, RegistrationView

    assert reverse("mcpforms-oauth-register") == REGISTER
    assert resolve(REGISTER).func.view_class is RegistrationView  # type: ignore[attr-defined]
    assert resolve(REGISTER.rstrip("/")).func.view_class is RegistrationView  # type: ignore[attr-defined]
    manage_view = resolve("/oauth/register/abc/").func.view_class  # type: ignore[attr-defined]
    assert manage_view is RegistrationManagementView
    assert register(CLAUDE).status_code == 201
    assert (
        Client().post(REGISTER.rstrip("/"), json.dumps(CLAUDE), content_type="application/json").status_code
        == 201
    )


# Attacks --------------------------------------------------------------------------------------------------


def test_a_plain_http_redirect_to_another_host_is_refused():
    body = refused({**CLAUDE, "redirect_uris": ["http://evil.example/cb"]}, error="invalid_redirect_uri")
    assert "http://evil.example/cb" in body["error_description"]
    assert "https" in body["error_description"] and "127.0.0.1" in body["error_description"]


@pytest.mark.parametrize(
    "uri",
    [
        "javascript:alert(document.cookie)",
        "javascript://claude.ai/%0aalert(1)",
        "data:text/html,<script>alert(1)</script>",
        "file:///etc/passwd",
        "http://localhost.evil.example/cb",  # looks like loopback, is not
        "http://127.0.0.1.nip.io/cb",
        "http://0x7f000001/cb",
        "https://claude.ai/api/mcp/auth_callback#frag",  # RFC 6749 §3.1.2: no fragment
        "https://claude.ai@evil.example/cb",  # userinfo: the host is evil.example
        "https://claude.ai/cb http://evil.example/cb",  # one string smuggling a second URI past the check
        "vbscript:msgbox(1)",
        "ftp://files.example/cb",
        "https:///cb",  # no host
        "https://" + "a" * 3000 + ".example/cb",
        "",
    ],
)
def test_a_dangerous_uri_is_refused_alone_and_dropped_in_a_list(uri):
    refused({**CLAUDE, "redirect_uris": [uri]}, error="invalid_redirect_uri")
    client = registered({**CLAUDE, "redirect_uris": [uri, *CLAUDE["redirect_uris"]]})
    assert client["redirect_uris"] == CLAUDE["redirect_uris"]
    stored = Application.objects.get(client_id=client["client_id"]).redirect_uris.split()
    assert stored == CLAUDE["redirect_uris"]


def test_a_custom_scheme_not_in_the_allowlist_is_dropped():
    refused({**CURSOR, "redirect_uris": ["vscode://ms.vscode/cb"]}, error="invalid_redirect_uri")
    with override_settings(MCPFORMS={"OAUTH_REDIRECT_SCHEMES": []}):
        client = registered(CURSOR)
    assert client["redirect_uris"] == ["http://localhost:54213/callback"]


def test_redirect_uris_must_be_a_list_of_strings():
    refused({**CLAUDE, "redirect_uris": "https://claude.ai/api/mcp/auth_callback"})
    refused({**CLAUDE, "redirect_uris": [42]})
    refused({**CLAUDE, "redirect_uris": []})
    refused({k: v for k, v in CLAUDE.items() if k != "redirect_uris"})


def test_a_thousand_redirect_uris_are_refused():
    many = [f"https://claude.ai/cb/{n}" for n in range(1000)]
    body = refused({**CLAUDE, "redirect_uris": many}, error="invalid_redirect_uri")
    assert "at most 10" in body["error_description"]
    assert registered({**CLAUDE, "redirect_uris": many[:10]})["redirect_uris"] == many[:10]


def test_a_huge_client_name_is_refused():
    body = refused({**CLAUDE, "client_name": "C" * 10_000}, error="invalid_client_metadata")
    assert "200" in body["error_description"]
    assert registered({**CLAUDE, "client_name": "C" * 200})["client_name"] == "C" * 200


def test_an_html_client_name_is_kept_as_text():
    # Stored and answered as the text it is; every page that shows it escapes it (the consent page does).
    name = '<script>alert("x")</script><b>Claude</b>'
    client = registered({**CLAUDE, "client_name": name})
    assert client["client_name"] == name
    assert Application.objects.get(client_id=client["client_id"]).name == name


def test_an_html_client_name_is_escaped_on_the_consent_page():
    name = "<script>alert(1)</script>Claude"
    client = registered({**CLAUDE, "client_name": name})
    browser = Client()
    browser.force_login(User.objects.create_user("ada"))
    _, challenge = pkce()
    page = browser.get(
        "/oauth/authorize/",
        {
            "response_type": "code",
            "client_id": client["client_id"],
            "redirect_uri": CLAUDE["redirect_uris"][0],
            "scope": "mcp",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        },
    )
    assert page.status_code == 200
    assert b"<script>alert(1)</script>" not in page.content
    assert b"&lt;script&gt;alert(1)&lt;/script&gt;Claude" in page.content


def test_control_and_bidi_characters_leave_the_client_name():
    # U+202E would show "Claude" reversed text on a consent page; a newline could fake a second line.
    client = registered({**CLAUDE, "client_name": "Cla\u202eude\n\tOfficial\x00"})
    assert client["client_name"] == "Claude Official"


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"client_name": "Cla\ud800ude"}, "client_name"),
        ({"redirect_uris": ["https://claude.ai/api/mcp/auth_\udfffcallback"]}, "redirect_uris"),
        (
            {"redirect_uris": ["https://claude.ai/api/mcp/auth_callback", "https://x.example/\ud800"]},
            "redirect_uris",
        ),
        ({"software_id": "\udc00\ud800"}, "software_id"),
    ],
)
def test_a_lone_surrogate_is_refused_as_client_metadata(changes, named):
    # JSON can spell a lone surrogate (\ud800), which is no Unicode text: no database column stores it
    # (SQLite and PostgreSQL both refused it at INSERT, a 500).
    body = refused({**CLAUDE, **changes}, error="invalid_client_metadata")
    assert named in body["error_description"] and "surrogate" in body["error_description"]


def test_a_nul_in_a_redirect_uri_is_refused_alone_and_dropped_in_a_list():
    # PostgreSQL cannot store a NUL in text (a 500 there); no browser could follow such a URI anyway.
    body = refused({**CLAUDE, "redirect_uris": ["https://claude.ai/api/mcp/auth_callback\x00"]})
    assert body["error"] == "invalid_redirect_uri" and "U+0000" in body["error_description"]
    kept = registered({**CLAUDE, "redirect_uris": ["https://x.example/\x00cb", *CLAUDE["redirect_uris"]]})
    assert kept["redirect_uris"] == CLAUDE["redirect_uris"]


def test_a_client_name_that_is_no_string_is_refused():
    refused({**CLAUDE, "client_name": ["Claude"]}, error="invalid_client_metadata")


def test_unknown_grant_types_are_dropped_when_authorization_code_remains():
    # Claude's CIMD document lists a jwt-bearer grant; a DCR payload may too.
    grants = [
        "authorization_code",
        "refresh_token",
        "urn:ietf:params:oauth:grant-type:jwt-bearer",
        "password",
    ]
    client = registered({**CLAUDE, "grant_types": grants})
    assert client["grant_types"] == ["authorization_code", "refresh_token"]
    app = Application.objects.get(client_id=client["client_id"])
    assert app.authorization_grant_type == Application.GRANT_AUTHORIZATION_CODE


@pytest.mark.parametrize(
    "grants",
    [["client_credentials"], ["implicit"], ["refresh_token"], ["urn:x:unknown"], "authorization_code"],
)
def test_registration_without_the_authorization_code_grant_is_refused(grants):
    body = refused({**CLAUDE, "grant_types": grants}, error="invalid_client_metadata")
    assert "authorization_code" in body["error_description"]


def test_an_unsupported_auth_method_is_refused_with_the_valid_ones():
    body = refused(
        {**CLAUDE, "token_endpoint_auth_method": "private_key_jwt"}, error="invalid_client_metadata"
    )
    assert "client_secret_post" in body["error_description"] and "none" in body["error_description"]


@pytest.mark.parametrize(
    "body", ["not json", "[1, 2]", '"a string"', '{"a": NaN}', "[" * 30_000 + "]" * 30_000, b"\xff\xfe"]
)
def test_a_body_that_is_no_json_object_is_refused(body):
    refused(body, error="invalid_client_metadata")


def test_an_oversized_body_is_refused():
    refused({**CLAUDE, "software_statement": "x" * 100_000}, status=413, error="invalid_client_metadata")


def test_a_signed_in_browser_cannot_be_made_to_own_a_registration():
    # The endpoint takes anonymous registrations without CSRF, so a page on another site can make a
    # signed-in visitor's browser post one: it must not become that user's application.
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(User.objects.create_user("ada"))
    client = registered(CLAUDE, client=browser)
    assert Application.objects.get(client_id=client["client_id"]).user is None


def test_registration_works_under_login_required_middleware():
    from django.conf import settings

    middleware = [*settings.MIDDLEWARE, "django.contrib.auth.middleware.LoginRequiredMiddleware"]
    with override_settings(MIDDLEWARE=middleware):
        assert register(CLAUDE).status_code == 201


def test_mcpforms_dcr_off_answers_404():
    with override_settings(MCPFORMS={"OAUTH_DCR": False}):
        response = register(CLAUDE)
    assert response.status_code == 404
    assert Application.objects.count() == 0


# Throttle and cap -----------------------------------------------------------------------------------------


@override_settings(MCPFORMS={"OAUTH_DCR_PER_ADDRESS": 2})
def test_registrations_are_throttled_per_address():
    registered(CLAUDE)
    registered(CLAUDE)
    response = register(CLAUDE)
    assert response.status_code == 429
    assert 0 < int(response["Retry-After"]) <= 3600
    body = response.json()
    assert body["error"] == "too_many_requests"
    assert "hour" in body["error_description"]
    assert Application.objects.count() == 2
    registered(CLAUDE, address="198.51.100.7")  # another address is not throttled


@override_settings(MCPFORMS={"OAUTH_DCR_PER_ADDRESS": 2})
def test_an_ipv6_client_is_throttled_per_64():
    registered(CLAUDE, address="2001:db8:1:2::10")
    registered(CLAUDE, address="2001:db8:1:2::11")
    assert register(CLAUDE, address="2001:db8:1:2:ffff::1").status_code == 429  # same /64
    registered(CLAUDE, address="2001:db8:1:3::10")  # the next /64


@override_settings(MCPFORMS={"OAUTH_DCR_PER_ADDRESS": None})
def test_the_throttle_can_be_turned_off():
    for _ in range(5):
        registered(CLAUDE)


@override_settings(MCPFORMS={"OAUTH_DCR_UNUSED": 2})
def test_never_used_registrations_are_capped():
    first = registered(CLAUDE, address="198.51.100.1")
    registered(CLAUDE, address="198.51.100.2")
    Application.objects.create(  # a manual application is never counted
        name="manual",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="https://app.example/cb",
    )
    response = register(CLAUDE, address="198.51.100.3")
    assert response.status_code == 429
    assert response["Retry-After"]
    assert response.json()["error"] == "too_many_requests"
    # Once a registration got a token, it no longer counts against the cap.
    AccessToken.objects.create(
        application=Application.objects.get(client_id=first["client_id"]),
        token="used",
        scope="mcp",
        expires=timezone.now() + timedelta(hours=1),
    )
    registered(CLAUDE, address="198.51.100.3")


# RFC 7592: the registration's own management ---------------------------------------------------------------


def manage(client: dict[str, Any], method: str, payload: dict[str, Any] | None = None) -> Any:
    url = urlsplit(client["registration_client_uri"]).path
    auth: Any = {"HTTP_AUTHORIZATION": f"Bearer {client['registration_access_token']}"}
    browser = Client()
    if method == "get":
        return browser.get(url, **auth)
    return browser.put(url, json.dumps(payload), content_type="application/json", **auth)


def test_the_registration_access_token_reads_the_registration_and_expires():
    client = registered(CLAUDE)
    read = manage(client, "get")
    assert read.status_code == 200, read.content
    assert read.json()["client_secret_expires_at"] == 0
    assert read.json()["redirect_uris"] == CLAUDE["redirect_uris"]
    # django-oauth-toolkit's default is a token valid until the year 9999.
    token = AccessToken.objects.get(application__client_id=client["client_id"])
    assert token.expires < timezone.now() + timedelta(days=31)
    token.expires = timezone.now() - timedelta(seconds=1)
    token.save()
    assert manage(client, "get").status_code == 401


def test_an_update_keeps_to_the_same_redirect_policy():
    client = registered(CLAUDE)
    evil = manage(
        client,
        "put",
        {**CLAUDE, "client_id": client["client_id"], "redirect_uris": ["http://evil.example/cb"]},
    )
    assert evil.status_code == 400 and evil.json()["error"] == "invalid_redirect_uri"
    app = Application.objects.get(client_id=client["client_id"])
    assert app.redirect_uris == CLAUDE["redirect_uris"][0]
    mixed = [*CLAUDE["redirect_uris"], "javascript:alert(1)"]
    updated = manage(client, "put", {**CLAUDE, "redirect_uris": mixed})
    assert updated.status_code == 200, updated.content
    assert updated.json()["redirect_uris"] == CLAUDE["redirect_uris"]
    rotated = AccessToken.objects.get(application=app)
    assert rotated.expires < timezone.now() + timedelta(days=31)


def test_an_update_refuses_what_a_registration_refuses_and_changes_nothing():
    client = registered(CLAUDE)
    for changes in (
        {"client_name": "\ud800"},
        {"redirect_uris": ["https://claude.ai/\udfff"]},
        {"redirect_uris": ["https://claude.ai/api/mcp/auth_callback\x00"]},
    ):
        response = manage(client, "put", {**CLAUDE, **changes})
        assert response.status_code == 400, response.content
        assert response.json()["error"] in ("invalid_client_metadata", "invalid_redirect_uri")
    app = Application.objects.get(client_id=client["client_id"])
    assert (app.name, app.redirect_uris) == ("Claude", CLAUDE["redirect_uris"][0])


# System checks --------------------------------------------------------------------------------------------


def dcr_ids(dot: dict[str, Any] | None = None, **configured: Any) -> list[str]:
    from mcpforms.checks.oauth_clients import check_dcr_settings

    with override_settings(MCPFORMS=configured, OAUTH2_PROVIDER=DOT if dot is None else dot):
        return [str(message.id) for message in check_dcr_settings()]


def test_the_defaults_and_the_preset_pass():
    assert dcr_ids() == []
    assert dcr_ids(OAUTH_DCR_PER_ADDRESS=None, OAUTH_DCR_UNUSED=None, OAUTH_REDIRECT_SCHEMES=[]) == []
    assert (
        dcr_ids(
            OAUTH_REDIRECT_SCHEMES=["cursor", "com.example.app"],
            dot={**DOT, "ALLOWED_REDIRECT_URI_SCHEMES": ["https", "http", "cursor", "com.example.app"]},
        )
        == []
    )
    assert dcr_ids(dot={}) == []  # registration off in django-oauth-toolkit: nothing to judge but the values


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_e313_dcr_is_a_bool(value):
    assert dcr_ids(OAUTH_DCR=value) == ["mcpforms.E313"]


@pytest.mark.parametrize("value", [0, -1, "5", 1.5, True])
@pytest.mark.parametrize("name", ["OAUTH_DCR_PER_ADDRESS", "OAUTH_DCR_UNUSED", "OAUTH_DCR_UNUSED_DAYS"])
def test_e314_counts_are_positive_integers(name, value):
    assert dcr_ids(**{name: value}) == ["mcpforms.E314"]


def test_e314_the_prune_horizon_cannot_be_none():
    assert dcr_ids(OAUTH_DCR_UNUSED_DAYS=None) == ["mcpforms.E314"]


@pytest.mark.parametrize("value", ["cursor", ["cur sor"], [1], ["javascript"], ["DATA"], ["https"], ["http"]])
def test_e315_redirect_schemes(value):
    assert dcr_ids(OAUTH_REDIRECT_SCHEMES=value) == ["mcpforms.E315"]


def test_w323_registration_without_mcpforms_permission():
    # The toolkit's AllowAll takes every registration without limit; its default refuses the anonymous
    # registrations hosted assistants make.
    for permission in (
        "oauth2_provider.dcr.AllowAllDCRPermission",
        "oauth2_provider.dcr.IsAuthenticatedDCRPermission",
    ):
        assert dcr_ids(dot={**DOT, "DCR_REGISTRATION_PERMISSION_CLASSES": [permission]}) == ["mcpforms.W323"]


def test_w324_a_custom_scheme_the_toolkit_would_not_redirect_to():
    from mcpforms.checks.oauth_clients import check_dcr_settings

    with override_settings(OAUTH2_PROVIDER={**DOT, "ALLOWED_REDIRECT_URI_SCHEMES": ["https", "http"]}):
        (warning,) = check_dcr_settings()
    assert warning.id == "mcpforms.W324" and "'cursor'" in warning.msg
    assert "ALLOWED_REDIRECT_URI_SCHEMES" in (warning.hint or "")


def test_w325_the_toolkit_advertises_a_registration_mcpforms_refuses():
    assert dcr_ids(OAUTH_DCR=False) == ["mcpforms.W325"]
    assert dcr_ids(OAUTH_DCR=False, dot={**DOT, "DCR_ENABLED": False}) == []


LOCMEM = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
DUMMY = {"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}
REDIS = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://x:6379"}}


def deploy_ids(caches: dict[str, Any], dot: dict[str, Any] | None = None, **configured: Any) -> list[str]:
    from mcpforms.checks.oauth_clients import check_dcr_counter

    settings = {"CACHES": caches, "MCPFORMS": configured, "OAUTH2_PROVIDER": DOT if dot is None else dot}
    with override_settings(**settings):
        return [str(message.id) for message in check_dcr_counter()]


def test_w327_the_per_address_limit_needs_a_cache_every_worker_shares():
    assert deploy_ids(REDIS) == []
    assert (
        deploy_ids({"default": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "t"}})
        == []
    )
    assert deploy_ids(LOCMEM) == ["mcpforms.W327"]
    assert deploy_ids(DUMMY) == ["mcpforms.W327"]
    # Nothing to count: no limit per address, or no registration.
    assert deploy_ids(LOCMEM, OAUTH_DCR_PER_ADDRESS=None) == []
    assert deploy_ids(LOCMEM, OAUTH_DCR=False) == []
    assert deploy_ids(LOCMEM, dot={**DOT, "DCR_ENABLED": False}) == []
    assert deploy_ids(LOCMEM, dot={**DOT, "DCR_REGISTRATION_PERMISSION_CLASSES": []}) == []


def test_w327_says_what_each_cache_does_to_the_limit():
    from mcpforms.checks.oauth_clients import check_dcr_counter

    with override_settings(CACHES=LOCMEM, OAUTH2_PROVIDER=DOT):
        [per_process] = check_dcr_counter()
    with override_settings(CACHES=DUMMY, OAUTH2_PROVIDER=DOT):
        [nowhere] = check_dcr_counter()
    assert "each worker process counts for itself" in per_process.msg
    assert "no address is ever refused" in nowhere.msg
    assert "CACHES['default']" in (per_process.hint or "") and "OAUTH_DCR_PER_ADDRESS" in (nowhere.hint or "")


def test_w327_is_a_deployment_check(tmp_path):
    from tests.system_checks import ROOT

    (tmp_path / "deploy_settings.py").write_text(
        "from tests.settings import *\nimport mcpforms.oauth\nOAUTH2_PROVIDER = mcpforms.oauth.settings()\n"
    )
    env = {"PYTHONPATH": f"{tmp_path}:{ROOT}", "DJANGO_SETTINGS_MODULE": "deploy_settings", "PATH": ""}
    plain, deploy = (
        subprocess.run(
            [sys.executable, "-m", "django", "check", *flags],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        for flags in ([], ["--deploy"])
    )
    assert "mcpforms.W327" not in plain.stdout + plain.stderr  # runserver's one process counts alone
    assert "mcpforms.W327" in deploy.stdout + deploy.stderr


def test_manage_py_check_fails_on_a_bad_dcr_setting(tmp_path):
    """The check is registered with Django."""
    from tests.system_checks import manage_py_check

    result = manage_py_check(tmp_path, {"OAUTH_DCR_UNUSED": 0})
    assert result.returncode == 1
    assert "mcpforms.E314" in result.stderr
