"""Form prompts: ``prompts/get`` asks for the fields, then fills the template; and they are seen as tools
are: an anonymous caller only where the server opens them, then the prompt's permission, in prompts/list and
prompts/get alike (tests/protocol/test_server.py covers completion/complete)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import mcp_types
import pytest
from django import forms
from django.contrib.auth.models import Permission, User
from django.test import override_settings

from mcpforms.protocol.server import Server, default_server
from mcpforms.registry import register_prompt, registry_for
from tests.core_client import CoreClient, accept, asked
from tests.forms import SignupForm

pytestmark = pytest.mark.django_db


class PeopleForm(forms.Form):
    """Write to someone."""

    person = forms.ModelChoiceField(queryset=User.objects.order_by("username"), to_field_name="username")


@pytest.fixture
def prompts() -> Iterator[None]:
    register_prompt(PeopleForm, name="write_to", template="Write to {person}.")
    register_prompt(PeopleForm, name="staff_write_to", template="{person}", permission="auth.view_user")
    User.objects.create_user("root-admin")
    yield
    registry_for(default_server).unregister("write_to")
    registry_for(default_server).unregister("staff_write_to")


class VaultForm(forms.Form):
    username = forms.CharField()
    password = forms.CharField(widget=forms.PasswordInput)


@pytest.fixture(params=["core", "http"])
def client(request: pytest.FixtureRequest) -> CoreClient:
    """A client of a server whose one prompt is ``welcome``, against the core and over HTTP."""
    server = Server(name="test")
    register_prompt(
        SignupForm,
        name="welcome",
        template="Write a welcome mail to {email} on the {plan} plan.",
        server=server,
    )
    return CoreClient(server, over_http=request.param == "http")


def names(client: CoreClient) -> list[str]:
    return [prompt["name"] for prompt in client.result("prompts/list")["prompts"]]


def refused(client: CoreClient, name: str) -> None:
    """Not gettable: the same answer as for a prompt that does not exist."""
    unknown = {"code": -32602, "message": f"Unknown prompt: {name}"}
    assert client.send("prompts/get", {"name": name, "arguments": {}})["error"] == unknown


@override_settings(MCPFORMS={"ALLOW_ANONYMOUS": ["signup"]})
def test_an_anonymous_caller_sees_only_the_prompts_the_server_opens(prompts: None) -> None:
    anonymous = CoreClient(default_server)
    assert "write_to" not in names(anonymous)
    refused(anonymous, "write_to")
    with override_settings(MCPFORMS={"ALLOW_ANONYMOUS": ["write_to"]}):
        assert names(anonymous) == ["write_to"]  # the permission still hides the other one
        choices = asked(anonymous.result("prompts/get", {"name": "write_to", "arguments": {}}), "write_to")
        assert "root-admin" in str(choices)


def test_a_prompt_needs_its_permission(prompts: None) -> None:
    ada = User.objects.create_user("ada")
    assert "staff_write_to" not in names(CoreClient(default_server, user=ada))
    refused(CoreClient(default_server, user=ada), "staff_write_to")
    ada.user_permissions.add(Permission.objects.get(codename="view_user"))
    ada = User.objects.get(pk=ada.pk)  # has_perm caches the permissions it read
    assert "staff_write_to" in names(CoreClient(default_server, user=ada))
    result = CoreClient(default_server, user=ada).result(
        "prompts/get", {"name": "staff_write_to", "arguments": {"person": "root-admin"}}
    )
    assert result["messages"][0]["content"]["text"] == "root-admin"


def test_another_server_opens_its_prompts_itself() -> None:
    server = Server(key="letters", allow_anonymous=["write_to"])
    register_prompt(PeopleForm, name="write_to", template="{person}", server=server)
    register_prompt(PeopleForm, name="private", template="{person}", server=server)
    anonymous: Any = CoreClient(server)
    assert names(anonymous) == ["write_to"]
    refused(anonymous, "private")


# ---- forms as prompts ------------------------------------------------------------------------------------


def test_a_form_prompt_asks_then_fills_its_messages(client):
    prompts = client.result("prompts/list")["prompts"]
    assert prompts[0]["name"] == "welcome"
    assert {arg["name"] for arg in prompts[0]["arguments"]} == {"email", "plan", "age", "newsletter"}
    first = client.result("prompts/get", {"name": "welcome", "arguments": {"plan": "team"}})
    assert list(asked(first, "welcome")["requestedSchema"]["properties"]) == ["email", "age", "newsletter"]
    done = client.result(
        "prompts/get",
        {
            "name": "welcome",
            "arguments": {"plan": "team"},
            "requestState": first["requestState"],
            "inputResponses": {"welcome": accept(email="ada@example.com")},
        },
    )
    mcp_types.GetPromptResult.model_validate(done)
    assert (
        done["messages"][0]["content"]["text"] == "Write a welcome mail to ada@example.com on the team plan."
    )


def test_a_declined_prompt_is_an_error(client):
    first = client.result("prompts/get", {"name": "welcome", "arguments": {}})
    body = client.send(
        "prompts/get",
        {
            "name": "welcome",
            "arguments": {},
            "requestState": first["requestState"],
            "inputResponses": {"welcome": {"action": "decline"}},
        },
    )
    assert body["error"]["code"] == -32602
    assert "declined" in body["error"]["message"]


def test_a_prompt_of_a_form_with_a_password_says_prompts_cannot_take_one() -> None:
    server = Server()
    register_prompt(VaultForm, name="unlock", template="Unlock for {username}.", server=server)
    body = CoreClient(server).send("prompts/get", {"name": "unlock", "arguments": {"username": "ada"}})
    assert body["error"] == {
        "code": -32602,
        "message": "The Unlock prompt needs a password or file, which prompts cannot take.",
    }
