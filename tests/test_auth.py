"""Who may call the endpoint: personal access tokens, the Django session, anonymous callers where a setting
allows them, and what each caller can see. OAuth has its own file, tests/test_oauth.py."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import CommandError, call_command
from django.db import connection
from django.http import HttpResponse
from django.test import Client, RequestFactory, override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from mcpforms.api import serve
from mcpforms.models import AccessToken
from mcpforms.protocol.server import Server
from mcpforms.registry import register
from tests import wire
from tests.forms import SignupForm
from tests.wire import APPS, whoami

pytestmark = pytest.mark.django_db


def serving(server: Server) -> Server:
    register(SignupForm, server=server, name="signup")
    register(SignupForm, server=server, name="members")
    register(SignupForm, server=server, name="staff_only", permission="auth.view_user")
    server.tool()(whoami)
    return server


# One server follows MCPFORMS['ALLOW_ANONYMOUS'] (a True or False there is every server's policy); the
# other names the tools it opens to anonymous callers itself, as a server other than the default must.
server = serving(Server(key="auth"))
signup_only = serving(Server(key="auth-signup-only", allow_anonymous=["signup"]))


def post(method: str, params: dict[str, Any] | None = None, **options: Any) -> HttpResponse:
    return post_to(server, method, params, **options)


def open_post(method: str, params: dict[str, Any] | None = None, **options: Any) -> HttpResponse:
    return post_to(signup_only, method, params, **options)


def post_to(
    on: Server,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    token: str | None = None,
    capabilities: dict[str, Any] | None = None,
    **extra: str,
) -> HttpResponse:
    request = wire.http_request(wire.message(method, params, capabilities=capabilities), token=token, **extra)
    response = serve(on, request)
    assert isinstance(response, HttpResponse)
    return response


def body(response: HttpResponse) -> Any:
    return json.loads(response.content)


def tool_names(response: HttpResponse) -> list[str]:
    assert response.status_code == 200, response.content
    return [tool["name"] for tool in body(response)["result"]["tools"]]


@pytest.fixture
def token(ada: User) -> str:
    return AccessToken.objects.issue(ada, "laptop")[1]


# Nobody: refused unless a setting lets them in -------------------------------------------------------------


@override_settings(MCPFORMS={})
@pytest.mark.parametrize("method", ["tools/list", "server/discover", "tools/call"])
def test_by_default_an_anonymous_caller_gets_401_with_a_bearer_challenge(method):
    response = post(method, {"name": "whoami"} if method == "tools/call" else None)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="mcp"'
    assert body(response) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32600,
            "message": "Unauthorized: send an access token as 'Authorization: Bearer <token>'",
        },
    }


@override_settings(MCPFORMS={})
def test_a_2025_era_handshake_needs_credentials_too(token):
    payload = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        },
    }
    for authorization, status in ((None, 401), (f"Bearer {token}", 200)):
        extra: dict[str, Any] = {"HTTP_AUTHORIZATION": authorization} if authorization else {}
        request = RequestFactory().post("/mcp", json.dumps(payload), content_type="application/json", **extra)
        assert serve(server, request).status_code == status


def test_anonymous_callers_see_and_use_only_the_tools_the_server_names(ada, token):
    apps = APPS | {"elicitation": {}}
    assert tool_names(open_post("tools/list", capabilities=apps)) == ["signup", "signup_submit", "whoami"]
    assert tool_names(open_post("tools/list", token=token, capabilities=apps)) == [
        "members",
        "members_submit",
        "signup",
        "signup_submit",
        "whoami",
    ]
    # Calling or reading a tool one may not use is indistinguishable from an unknown name.
    for name in ("members", "members_submit", "staff_only", "no_such_tool"):
        error = body(open_post("tools/call", {"name": name, "arguments": {}}))["error"]
        assert error == {"code": -32602, "message": f"Unknown tool: {name}"}
    for uri in ("ui://mcpforms/members", "ui://mcpforms/no_such_tool"):
        error = body(open_post("resources/read", {"uri": uri}, capabilities=apps))["error"]
        assert (error["code"], error["message"]) == (-32602, "Resource not found")
    signup = body(open_post("resources/read", {"uri": "ui://mcpforms/signup"}, capabilities=apps))["result"]
    assert "<form" in signup["contents"][0]["text"]
    asked = body(
        open_post("tools/call", {"name": "signup", "arguments": {}}, capabilities={"elicitation": {}})
    )
    assert asked["result"]["resultType"] == "input_required"


def test_a_listing_that_depends_on_the_caller_is_private(token):
    for credentials in (None, token):
        assert body(open_post("tools/list", token=credentials))["result"]["cacheScope"] == "private"
    assert body(open_post("server/discover"))["result"]["cacheScope"] == "public"


@override_settings(MCPFORMS={"ALLOW_ANONYMOUS": True})
def test_a_caller_who_sends_a_bad_token_is_refused_not_treated_as_anonymous():
    response = post("tools/list", token="mcpf_not-a-token")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="mcp", error="invalid_token"'
    assert (
        body(response)["error"]["message"] == "Unauthorized: the credentials are unknown, expired or revoked"
    )
    assert post("tools/list").status_code == 200  # no credentials at all: anonymous, as allowed


# Personal access tokens ---------------------------------------------------------------------------------


@override_settings(MCPFORMS={})
def test_a_token_acts_as_its_user_and_sees_what_its_permissions_allow(ada, token):
    whoami_text = body(post("tools/call", {"name": "whoami", "arguments": {}}, token=token))
    assert whoami_text["result"]["content"][0]["text"] == f"user:{ada.pk}"
    assert "staff_only" not in tool_names(post("tools/list", token=token))
    ada.user_permissions.add(Permission.objects.get(codename="view_user"))
    fresh = AccessToken.objects.issue(User.objects.get(pk=ada.pk), "again")[
        1
    ]  # permissions are cached per user
    assert "staff_only" in tool_names(post("tools/list", token=fresh))


@override_settings(MCPFORMS={})
def test_only_a_digest_of_the_token_is_stored(token):
    row = AccessToken.objects.get()
    stored = json.dumps(list(AccessToken.objects.values_list().get()), default=str)
    assert token not in stored and token[len(row.prefix) :] not in stored
    assert row.prefix == token[:12] and token.startswith("mcpf_") and len(token) > 40


@override_settings(MCPFORMS={})
@pytest.mark.parametrize("spoil", ["revoke", "expire", "deactivate", "truncate", "other_prefix"])
def test_revoked_expired_foreign_or_mangled_tokens_get_401(ada, token, spoil):
    row = AccessToken.objects.get()
    if spoil == "revoke":
        row.revoke()
    elif spoil == "expire":
        row.expires_at = timezone.now() - timedelta(seconds=1)
        row.save()
    elif spoil == "deactivate":
        ada.is_active = False
        ada.save()
    elif spoil == "truncate":
        token = token[:-1]
    else:
        token = "ghp_" + token[5:]
    response = post("tools/list", token=token)
    assert response.status_code == 401
    assert 'error="invalid_token"' in response["WWW-Authenticate"]


@override_settings(MCPFORMS={})
def test_a_token_with_an_expiry_in_the_future_works(ada):
    raw = AccessToken.objects.issue(ada, "short", expires_at=timezone.now() + timedelta(hours=1))[1]
    assert post("tools/list", token=raw).status_code == 200


@override_settings(MCPFORMS={})
def test_last_used_is_recorded_without_a_write_on_every_call(token):
    assert AccessToken.objects.get().last_used_at is None
    post("tools/list", token=token)
    first = AccessToken.objects.get().last_used_at
    assert first is not None and timezone.now() - first < timedelta(seconds=30)
    with CaptureQueriesContext(connection) as queries:
        post("tools/list", token=token)
    assert not [q for q in queries.captured_queries if q["sql"].startswith("UPDATE")]
    AccessToken.objects.update(last_used_at=first - timedelta(minutes=5))
    post("tools/list", token=token)
    later = AccessToken.objects.get().last_used_at
    assert later is not None and later > first


# The Django session, for pages of the same site --------------------------------------------------------


@override_settings(MCPFORMS={})
def test_a_signed_in_session_works_with_the_csrf_token_and_is_refused_without_it(ada):
    client = Client(enforce_csrf_checks=True)
    client.force_login(ada)
    client.get("/admin/login/")  # any page that renders a form sets the CSRF cookie
    csrf = client.cookies["csrftoken"].value
    listing = wire.message("tools/list")
    payload, headers = json.dumps(listing), wire.headers(listing)
    refused = client.post("/mcp", payload, content_type="application/json", headers=headers)
    assert refused.status_code == 403
    assert refused.json()["error"]["message"] == "Forbidden: CSRF check failed for the signed-in session"
    allowed = client.post(
        "/mcp", payload, content_type="application/json", headers=headers | {"X-CSRFToken": csrf}
    )
    assert allowed.status_code == 200
    assert "testapp_signup" in [tool["name"] for tool in allowed.json()["result"]["tools"]]


@override_settings(MCPFORMS={"AUTHENTICATION": ["mcpforms.auth.SessionAuth"]})
def test_the_setting_chooses_the_methods(token):
    # Tokens are not among them here, so a valid one is just unknown credentials.
    assert post("tools/list", token=token).status_code == 401


def test_an_endpoint_can_take_its_own_auth_callables():
    from mcpforms.api import build_api

    def api_key(request):
        return User.objects.filter(username=request.headers.get("X-Api-Key")).first()

    User.objects.create_user("robot")
    api = build_api(server, namespace="auth-test", auth=[api_key])
    view: Any = api.urls[0][0].callback
    call = wire.message("tools/call", {"name": "whoami"})
    with override_settings(MCPFORMS={}):
        for key, status in (("robot", 200), ("nobody", 401)):
            assert view(wire.http_request(call, HTTP_X_API_KEY=key)).status_code == status


# Creating, listing and revoking tokens ------------------------------------------------------------------


@override_settings(MCPFORMS={})
def test_the_management_command_creates_lists_and_revokes(ada, capsys):
    call_command("mcpforms_token", "create", "ada", "--name", "Claude Desktop", "--expires-in-days", "30")
    printed = capsys.readouterr().out
    raw = next(word for word in printed.split() if word.startswith("mcpf_"))
    row = AccessToken.objects.get(name="Claude Desktop")
    assert row.expires_at is not None and timedelta(days=29) < row.expires_at - timezone.now() <= timedelta(
        days=30
    )
    assert "cannot be shown again" in printed
    assert post("tools/list", token=raw).status_code == 200

    call_command("mcpforms_token", "create", "ada", "--quiet")
    quiet = capsys.readouterr().out.strip()
    assert quiet.startswith("mcpf_") and " " not in quiet

    call_command("mcpforms_token", "list", "ada")
    listed = capsys.readouterr().out
    assert f"{row.prefix}…" in listed and "active" in listed and raw not in listed

    call_command("mcpforms_token", "revoke", row.prefix)
    assert AccessToken.objects.get(pk=row.pk).status == "revoked"
    assert post("tools/list", token=raw).status_code == 401
    assert post("tools/list", token=quiet).status_code == 200


def test_the_management_command_names_what_is_wrong(ada):
    with pytest.raises(CommandError, match="No user named 'bob'"):
        call_command("mcpforms_token", "create", "bob")
    with pytest.raises(CommandError, match="--expires-in-days must be 1 or more"):
        call_command("mcpforms_token", "create", "ada", "--expires-in-days", "0")
    with pytest.raises(CommandError, match="No token matches"):
        call_command("mcpforms_token", "revoke", "mcpf_nothing")


@override_settings(MCPFORMS={})
def test_the_admin_shows_a_new_token_once_and_revokes_tokens(ada):
    admin = User.objects.create_superuser("root", password="pw")
    client = Client()
    client.force_login(admin)
    page = client.post(
        "/admin/mcpforms/accesstoken/add/", {"user": ada.pk, "name": "Cursor", "expires_at": ""}, follow=True
    )
    text = page.content.decode()
    shown = re.search(r"mcpf_[A-Za-z0-9_-]+", text)  # on the page that answers the save, and only there
    raw = shown.group() if shown else ""
    assert raw.startswith("mcpf_"), text
    assert "cannot be shown again" in text
    row = AccessToken.objects.get(name="Cursor")
    assert row.user == ada
    assert post("tools/list", token=raw).status_code == 200

    change = client.get(f"/admin/mcpforms/accesstoken/{row.pk}/change/").content.decode()
    assert raw not in change and f"{row.prefix}…" in change
    assert 'name="user"' not in change  # a token stays with the user it was made for

    client.post(
        "/admin/mcpforms/accesstoken/", {"action": "revoke", "_selected_action": [row.pk]}, follow=True
    )
    assert AccessToken.objects.get(pk=row.pk).status == "revoked"
    assert post("tools/list", token=raw).status_code == 401
    listing = client.get("/admin/mcpforms/accesstoken/").content.decode()
    assert "revoked" in listing and "Cursor" in listing


# Setup mistakes, caught by `manage.py check` ------------------------------------------------------------


def auth_check_ids(**configured: Any) -> list[str | None]:
    from mcpforms.checks.auth import check_auth_settings

    with override_settings(MCPFORMS=configured):
        return [message.id for message in check_auth_settings()]


def test_the_defaults_and_valid_auth_settings_pass():
    assert auth_check_ids() == []
    assert auth_check_ids(ALLOW_ANONYMOUS=["signup"], OAUTH_SCOPES=["mcp"]) == []
    # OAuth needs the site's address and a scope the authorization server offers (tests/test_checks.py).
    oauth = {"BASE_URL": "https://forms.example.com", "OAUTH_SCOPES": ["read"]}
    assert (
        auth_check_ids(AUTHENTICATION=["mcpforms.auth.AccessTokenAuth", "mcpforms.oauth.OAuth2Auth"], **oauth)
        == []
    )


@pytest.mark.parametrize(
    "methods", ["mcpforms.auth.AccessTokenAuth", ["mcpforms.auth.Nope"], ["no.such.module.Auth"], [3]]
)
def test_e301_authentication_methods_must_import(methods):
    assert auth_check_ids(AUTHENTICATION=methods) == ["mcpforms.E301"]


@pytest.mark.parametrize("value", ["signup", 1, None, [1]])
def test_e302_allow_anonymous_is_a_bool_or_tool_names(value):
    assert auth_check_ids(ALLOW_ANONYMOUS=value) == ["mcpforms.E302"]


@pytest.mark.parametrize("value", ["mcp", [""], [None]])
def test_e303_oauth_scopes_are_names(value):
    assert auth_check_ids(OAUTH_SCOPES=value) == ["mcpforms.E303"]


def test_e304_and_w301_oauth_without_its_app_or_its_metadata_urls():
    oauth = {
        "AUTHENTICATION": ["mcpforms.oauth.OAuth2Auth"],
        "BASE_URL": "https://forms.example.com",
        "OAUTH_SCOPES": ["read"],
    }
    with override_settings(INSTALLED_APPS=["django.contrib.auth", "django.contrib.contenttypes", "mcpforms"]):
        assert auth_check_ids(**oauth) == ["mcpforms.E304"]
    with override_settings(ROOT_URLCONF="tests.conformance.urls", LOGIN_URL="https://sso.example.com/login"):
        assert auth_check_ids(**oauth) == ["mcpforms.W301"]
