"""URL-mode elicitation from the tool's side (``mcpforms.url_mode``): the elicitation that sends the user to
the page, what it keeps, the link it signs, and the retry that picks up the page's outcome (spec §7.3). The
page itself is ``tests/test_views.py``'s."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django import forms
from django.contrib.auth.models import User
from django.core import signing
from django.test import Client, override_settings

from mcpforms.models import UrlElicitation
from mcpforms.protocol.context import tool_binding
from mcpforms.protocol.server import default_server
from mcpforms.registry import register, registry_for, tool
from tests.core_client import CoreClient, accept, asked, page_path, text, url_request
from tests.forms import SignupForm

pytestmark = pytest.mark.django_db

SECRET = "correct horse battery staple"
URL_CAPABLE: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}
SETTINGS = {"BASE_URL": "http://testserver"}
bindings: list[str] = []


class VaultForm(forms.Form):
    """Unlock a vault."""

    username = forms.CharField()
    password = forms.CharField(widget=forms.PasswordInput)


@pytest.fixture(autouse=True)
def tools() -> Iterator[None]:
    bindings.clear()

    def record(request: Any, form: forms.BaseForm) -> str:
        bindings.append(request.binding)
        return "Done."

    register(VaultForm, name="vault")
    tool(SignupForm, name="confirm_join", ask="always", path="form")(record)
    with override_settings(MCPFORMS=SETTINGS):
        yield
    for name in ("vault", "confirm_join"):
        registry_for(default_server).unregister(name)


def mcp(user: Any = None, capabilities: dict[str, Any] | None = None) -> CoreClient:
    return CoreClient(
        default_server, capabilities=URL_CAPABLE if capabilities is None else capabilities, user=user
    )


def retry(
    client: CoreClient, name: str, arguments: dict[str, Any], first: dict[str, Any], action: str = "accept"
) -> dict[str, Any]:
    return client.call(
        name, arguments, inputResponses={name: {"action": action}}, requestState=first["requestState"]
    )


def test_the_link_says_nothing_about_the_user():
    ada = User.objects.create_user("ada")
    path = page_path(mcp(user=ada).call("vault", {}), "vault")
    payload = signing.b64_decode(path.split("/")[3].split(":")[0].encode()).decode()
    assert "user" not in payload and "vault" not in payload
    assert set(json.loads(payload)) == {"e", "b"}


def test_declining_the_page_ends_the_call():
    client = mcp()
    first = client.call("vault", {})
    result = retry(client, "vault", {}, first, action="decline")
    assert result["isError"] is True
    assert "declined" in text(result)


def test_without_url_mode_the_tool_says_what_it_needs():
    result = mcp(capabilities={"elicitation": {"form": {}}}).call("vault", {"username": "ada"})
    assert result["isError"] is True
    assert "does not support URL-mode elicitation" in text(result)
    assert "elicitation.url" in text(result)
    assert UrlElicitation.objects.count() == 0


def test_without_a_base_url_the_tool_says_so():
    with override_settings(MCPFORMS={}):
        result = mcp().call("vault", {})
    assert result["isError"] is True
    assert "no address" in text(result)


def test_a_password_from_the_model_is_never_stored():
    first = mcp().call("vault", {"username": "ada", "password": SECRET})
    url_request(first, "vault")
    assert SECRET not in str(first)
    assert SECRET not in str(list(UrlElicitation.objects.values()))


def test_a_retry_after_the_page_row_is_gone_says_to_start_over():
    client = mcp()
    first = client.call("vault", {})
    UrlElicitation.objects.all().delete()
    result = retry(client, "vault", {}, first)
    assert result["isError"] is True
    assert "call the tool again" in text(result)


def test_without_the_page_in_the_urlconf_the_tool_says_so(caplog):
    with override_settings(ROOT_URLCONF="tests.conformance.urls"):
        result = mcp().call("vault", {})
    assert result["isError"] is True
    assert "does not serve it" in text(result)
    assert "mcpforms.urls" in caplog.text


def test_a_url_mode_row_keeps_only_the_forms_fields():
    first = mcp().call("vault", {"username": "ada", "junk": "x" * 10_000, "other": {"deep": [1, 2]}})
    url_request(first, "vault")
    (row,) = UrlElicitation.objects.all()
    assert row.arguments == {"username": "ada"}


def test_the_page_runs_the_handler_bound_as_the_core_binds_a_call_of_the_tool():
    # "always", valid arguments: a client with form elicitation confirms in one, a client with URL mode
    # only on the page. The handler sees one binding either way: the one its requestStates carry.
    arguments = {"email": "ada@example.com", "plan": "pro"}
    elicited = mcp()
    first = elicited.call("confirm_join", arguments)
    asked(first, "confirm_join")
    assert (
        text(elicited.answer(first, "confirm_join", arguments, confirm_join=accept(**arguments))) == "Done."
    )
    on_page = mcp(capabilities={"elicitation": {"url": {}}}).call("confirm_join", arguments)
    path = page_path(on_page, "confirm_join")
    assert Client().post(path, arguments).status_code == 200
    assert bindings == [tool_binding("confirm_join")] * 2 == ["tool:confirm_join"] * 2
