"""The connected assistants in the admin, as staff use it: one row per user and assistant, filtered by how the
assistant was registered, and a revoke that only staff allowed to change tokens can run."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission, User
from django.test import Client, override_settings
from django.utils import timezone
from oauth2_provider import admin as toolkit_admin
from oauth2_provider.models import AccessToken, Application, RefreshToken

from mcpforms.oauth.admin import ConnectedAssistantAdmin, register
from tests.test_auth import post

pytestmark = pytest.mark.django_db

LIST_URL = "/admin/oauth2_provider/accesstoken/"
ENDPOINT = "http://testserver/mcp"
MCPFORMS = {"AUTHENTICATION": ["mcpforms.oauth.OAuth2Auth"], "BASE_URL": "http://testserver"}


@pytest.fixture(autouse=True)
def site() -> Iterator[None]:
    with override_settings(MCPFORMS=MCPFORMS, OAUTH2_PROVIDER={"SCOPES": {"mcp": "Use forms"}}):
        yield


def application(name: str, source: str, client_id: str | None = None) -> Application:
    extra = {"client_id": client_id} if client_id else {}
    return Application.objects.create(
        name=name,
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="https://claude.ai/api/mcp/auth_callback",
        registration_source=source,
        **extra,
    )


def token(user: User, app: Application, *, age: int = 0) -> str:
    """An access token with its refresh token, as the token endpoint leaves them."""
    raw = secrets.token_urlsafe(30)
    access = AccessToken.objects.create(
        user=user,
        application=app,
        token=raw,
        expires=timezone.now() + timedelta(hours=1) - timedelta(minutes=age),
        scope="mcp",
        resource=[ENDPOINT],
    )
    RefreshToken.objects.create(
        user=user, application=app, token=secrets.token_urlsafe(30), access_token=access
    )
    return raw


def works(raw: str) -> bool:
    response = post("tools/call", {"name": "whoami", "arguments": {}}, token=raw)
    assert response.status_code in (200, 401), response.content
    return response.status_code == 200


def staff(username: str, *codenames: str) -> Client:
    user = User.objects.create_user(username, password="pw", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def world() -> dict[str, Any]:
    ada = User.objects.create_user("ada", password="pw")
    grace = User.objects.create_user("grace", password="pw")
    claude = application("Claude", "cimd", "https://claude.ai/oauth/mcp-oauth-client-metadata")
    chatgpt = application("ChatGPT", "cimd", "https://chatgpt.com/oauth/client.json")
    spoof = application("Claude (really)", "cimd", "https://claude.ai.evil.example/client.json")
    dcr = application("<b>Cursor</b>", "dcr")
    cli = application("Team CLI", "manual")
    return {
        "ada": ada,
        "grace": grace,
        "apps": {"claude": claude, "chatgpt": chatgpt, "spoof": spoof, "dcr": dcr, "cli": cli},
        "tokens": {
            "ada-claude-old": token(ada, claude, age=30),
            "ada-claude": token(ada, claude),
            "ada-dcr": token(ada, dcr),
            "grace-claude": token(grace, claude),
            "grace-chatgpt": token(grace, chatgpt),
            "grace-spoof": token(grace, spoof),
            "grace-cli": token(grace, cli),
        },
    }


def rows(html: str) -> int:
    return html.count('class="field-assistant')


def test_the_access_tokens_are_shown_as_connected_assistants():
    assert isinstance(admin.site.get_model_admin(AccessToken), ConnectedAssistantAdmin)


def test_one_row_per_user_and_assistant_with_how_it_was_registered(world):
    root = Client()
    root.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    html = root.get(LIST_URL).content.decode()
    assert "<h1>Connected assistants</h1>" in html
    assert rows(html) == 6  # ada's two Claude tokens are one connection
    assert "claude.ai (metadata document)" in html
    assert "Registered itself (DCR), name unverified" in html and "Added by staff" in html
    assert "&lt;b&gt;Cursor&lt;/b&gt;" in html and "<b>Cursor</b>" not in html
    assert rows(root.get(LIST_URL, {"tokens": "every"}).content.decode()) == 7


@pytest.mark.parametrize(
    ("registered", "expected"),
    [
        ("cimd:claude.ai", 2),
        ("cimd:chatgpt.com", 1),
        ("cimd:claude.ai.evil.example", 1),
        ("dcr", 1),
        ("manual", 1),
    ],
)
def test_the_list_filters_by_registration_source_and_cimd_host(world, registered, expected):
    root = Client()
    root.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    html = root.get(LIST_URL, {"registered": registered}).content.decode()
    assert rows(html) == expected, registered
    assert "?registered=cimd%3Aclaude.ai" in html  # offered as a choice


def test_revoking_ends_every_token_of_that_user_and_assistant_only(world):
    client = staff("lead", "view_accesstoken", "change_accesstoken")
    tokens = world["tokens"]
    newest = AccessToken.objects.get(token=tokens["ada-claude"])
    response = client.post(
        LIST_URL, {"action": "revoke_assistants", "index": "0", "_selected_action": [newest.pk]}, follow=True
    )
    assert "Revoked the access of 1 assistant(s)." in response.content.decode()
    assert not works(tokens["ada-claude"]) and not works(tokens["ada-claude-old"])
    assert works(tokens["grace-claude"]) and works(tokens["ada-dcr"])
    assert not RefreshToken.objects.filter(
        user=world["ada"], application=world["apps"]["claude"], revoked=None
    )


@pytest.mark.parametrize("action", ["revoke_assistants", "revoke_tokens"])
def test_staff_who_may_only_view_tokens_cannot_revoke_any(world, action):
    client = staff("auditor", "view_accesstoken")
    html = client.get(LIST_URL).content.decode()
    assert rows(html) == 6
    assert 'value="revoke_assistants"' not in html and 'value="revoke_tokens"' not in html
    target = AccessToken.objects.get(token=world["tokens"]["ada-claude"])
    client.post(LIST_URL, {"action": action, "index": "0", "_selected_action": [target.pk]})
    assert works(world["tokens"]["ada-claude"])


def test_a_projects_own_access_token_admin_is_left_alone():
    site = admin.AdminSite(name="elsewhere")

    class ProjectAdmin(toolkit_admin.AccessTokenAdmin):  # type: ignore[misc]
        pass

    site.register(AccessToken, ProjectAdmin)
    register(site)
    assert type(site.get_model_admin(AccessToken)) is ProjectAdmin
    stock = admin.AdminSite(name="stock")
    stock.register(AccessToken, toolkit_admin.AccessTokenAdmin)
    register(stock)
    assert type(stock.get_model_admin(AccessToken)) is ConnectedAssistantAdmin


def test_staff_who_may_only_view_refresh_tokens_cannot_revoke_them(world):
    refresh_list = "/admin/oauth2_provider/refreshtoken/"
    auditor = staff("refresh-auditor", "view_refreshtoken")
    assert 'value="revoke_tokens"' not in auditor.get(refresh_list).content.decode()
    target = RefreshToken.objects.get(access_token__token=world["tokens"]["ada-claude"])
    auditor.post(refresh_list, {"action": "revoke_tokens", "index": "0", "_selected_action": [target.pk]})
    assert works(world["tokens"]["ada-claude"])
    target.refresh_from_db()
    assert target.revoked is None
    # With the change permission, the toolkit's own revoke goes ahead.
    editor = staff("refresh-editor", "view_refreshtoken", "change_refreshtoken")
    editor.post(refresh_list, {"action": "revoke_tokens", "index": "0", "_selected_action": [target.pk]})
    assert type(target).objects.get(pk=target.pk).revoked is not None
    assert not works(world["tokens"]["ada-claude"])
