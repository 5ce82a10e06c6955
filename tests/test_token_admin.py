"""The personal-access-token admin as staff use it: who may issue a token for whom, who may revoke which,
and how the secret is shown once without being stored anywhere on the way."""

from __future__ import annotations

import json
import re
from importlib import import_module
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import Permission, User
from django.contrib.messages.storage import default_storage
from django.contrib.sessions.models import Session
from django.core.management import CommandError, call_command
from django.http import HttpResponse
from django.test import Client, RequestFactory, override_settings

from mcpforms.api import serve
from mcpforms.models import AccessToken
from mcpforms.protocol.server import Server
from tests import wire

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("token_auth_only")]

ADD_URL = "/admin/mcpforms/accesstoken/add/"
LIST_URL = "/admin/mcpforms/accesstoken/"

server = Server(key="token-admin")


server.tool()(wire.whoami)


@pytest.fixture
def token_auth_only() -> Any:
    # The test settings let anonymous callers in; here a call must be authenticated by the token or fail.
    with override_settings(MCPFORMS={}):
        yield


def principal_of(raw: str) -> str | None:
    """Who ``POST /mcp`` with ``Authorization: Bearer raw`` acts as, or None when it is refused."""
    call = wire.message("tools/call", {"name": "whoami", "arguments": {}})
    response = serve(server, wire.http_request(call, token=raw))
    assert isinstance(response, HttpResponse)
    if response.status_code == 401:
        return None
    assert response.status_code == 200, response.content
    text: str = json.loads(response.content)["result"]["content"][0]["text"]
    return text


def staff_client(username: str, *codenames: str) -> tuple[Client, User]:
    user = User.objects.create_user(username, password="pw", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    client = Client()
    client.force_login(user)
    return client, user


def shown_token(response: Any) -> str:
    """The ``mcpf_…`` secret on the page, as staff would select and copy it."""
    found = re.search(r"mcpf_[A-Za-z0-9_-]+", response.content.decode())
    assert found, response.content.decode()
    return found.group()


def revoke(client: Client, *tokens: AccessToken) -> Any:
    return client.post(
        LIST_URL,
        {"action": "revoke", "select_across": "0", "index": "0", "_selected_action": [t.pk for t in tokens]},
    )


@pytest.fixture
def root() -> User:
    return User.objects.create_superuser("root", "root@example.com", "pw")


# Issuing: for oneself, unless one may act as others -------------------------------------------------------


def test_staff_who_may_only_add_tokens_get_a_token_for_themselves_even_when_the_post_names_root(root):
    client, clerk = staff_client("clerk", "add_accesstoken")
    form = client.get(ADD_URL).content.decode()
    assert 'name="user"' not in form  # no owner to choose

    forged = client.post(ADD_URL, {"user": root.pk, "name": "mine", "expires_at": ""})
    assert forged.status_code == 200
    raw = shown_token(forged)
    assert principal_of(raw) == f"user:{clerk.pk}"
    assert AccessToken.objects.get().user == clerk


def test_issue_token_for_others_lets_staff_choose_the_owner(root):
    client, lead = staff_client("lead", "add_accesstoken", "issue_token_for_others")
    assert 'name="user"' in client.get(ADD_URL).content.decode()
    response = client.post(ADD_URL, {"user": root.pk, "name": "for root", "expires_at": ""})
    assert principal_of(shown_token(response)) == f"user:{root.pk}"


def test_a_superuser_may_issue_a_token_for_anyone(root):
    client, bob = staff_client("bob")
    admin = Client()
    admin.force_login(root)
    response = admin.post(ADD_URL, {"user": bob.pk, "name": "for bob", "expires_at": ""})
    assert principal_of(shown_token(response)) == f"user:{bob.pk}"


def test_staff_see_and_open_only_their_own_tokens_unless_they_may_act_as_others(root):
    client, clerk = staff_client("clerk", "view_accesstoken", "change_accesstoken")
    own, _ = AccessToken.objects.issue(clerk, "clerk's laptop")
    others, _ = AccessToken.objects.issue(root, "root's laptop")

    listing = client.get(LIST_URL).content.decode()
    assert "clerk&#x27;s laptop" in listing and "root&#x27;s laptop" not in listing
    assert client.get(f"{LIST_URL}{own.pk}/change/").status_code == 200
    # Django's answer for an object outside the queryset: back to the index, "doesn't exist".
    assert client.get(f"{LIST_URL}{others.pk}/change/").status_code == 302
    assert client.post(f"{LIST_URL}{others.pk}/change/", {"name": "renamed"}).status_code == 302
    assert AccessToken.objects.get(pk=others.pk).name == "root's laptop"

    lead, _ = staff_client("lead", "view_accesstoken", "issue_token_for_others")
    listing = lead.get(LIST_URL).content.decode()
    assert "clerk&#x27;s laptop" in listing and "root&#x27;s laptop" in listing


# Revoking: the change permission, and only one's own tokens -----------------------------------------------


def test_view_only_staff_cannot_revoke_any_token(root):
    client, viewer = staff_client("viewer", "view_accesstoken", "issue_token_for_others")
    own, _ = AccessToken.objects.issue(viewer, "viewer's")
    others, _ = AccessToken.objects.issue(root, "root's")
    response = revoke(client, own, others)
    assert response.status_code in (200, 302, 403)
    assert {token.status for token in AccessToken.objects.all()} == {"active"}
    assert 'value="revoke"' not in client.get(LIST_URL).content.decode()  # not even offered


def test_staff_with_the_change_permission_revoke_only_their_own_tokens(root):
    client, clerk = staff_client("clerk", "view_accesstoken", "change_accesstoken")
    own, own_raw = AccessToken.objects.issue(clerk, "clerk's")
    others, others_raw = AccessToken.objects.issue(root, "root's")
    assert 'value="revoke"' in client.get(LIST_URL).content.decode()

    response = revoke(client, own, others)
    assert response.status_code in (200, 302)
    assert principal_of(own_raw) is None
    assert principal_of(others_raw) == f"user:{root.pk}"


# The secret: shown once, in the response, stored nowhere -------------------------------------------------


def pending_messages(client: Client) -> list[str]:
    """What the messages framework holds for this browser's next page: its cookie and its session."""
    request = RequestFactory().get("/")
    request.COOKIES = {name: morsel.value for name, morsel in client.cookies.items()}
    engine = import_module(settings.SESSION_ENGINE)
    request.session = engine.SessionStore(request.COOKIES.get(settings.SESSION_COOKIE_NAME))
    return [str(message) for message in default_storage(request)]


@pytest.mark.parametrize("button", ["_save", "_addanother", "_continue"])
def test_a_new_token_is_shown_once_in_the_page_and_kept_nowhere(root, button):
    client = Client()
    client.force_login(root)
    response = client.post(ADD_URL, {"user": root.pk, "name": "Cursor", "expires_at": "", button: "1"})

    assert response.status_code == 200
    raw = shown_token(response)
    page = response.content.decode()
    assert "copy it now" in page.lower() and f'href="{LIST_URL}"' in page
    # Where the button pressed would have gone is a link under the secret, never a redirect away from it.
    row = AccessToken.objects.get()
    assert (
        re.findall(r'<a class="button" href="([^"]+)">([^<]+)</a>', page)
        == {
            "_save": [],
            "_addanother": [(ADD_URL, "Add another token")],
            "_continue": [(f"{LIST_URL}{row.pk}/change/", "Edit this token")],
        }[button]
    )
    assert "no-store" in response["Cache-Control"]
    assert principal_of(raw) == f"user:{root.pk}"

    assert all(raw not in message for message in pending_messages(client))
    for session in Session.objects.all():
        assert raw not in json.dumps(session.get_decoded()) and raw not in session.session_data
    assert raw not in client.get(LIST_URL).content.decode()


# The same from the shell: `mcpforms_token create` runs as the operator, and says what would work ----------


def test_the_command_refuses_an_expiry_past_the_calendar_with_a_message_not_a_traceback():
    User.objects.create_user("ada")
    with pytest.raises(CommandError, match=r"--expires-in-days must be at most 36500"):
        call_command("mcpforms_token", "create", "ada", "--expires-in-days", "99999999")
    assert not AccessToken.objects.exists()
