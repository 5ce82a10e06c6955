"""Form prompts are seen as tools are: an anonymous caller only where the server opens them, then the
prompt's permission, in prompts/list and prompts/get alike (tests/protocol/test_server.py covers
completion/complete)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django import forms
from django.contrib.auth.models import Permission, User
from django.test import override_settings

from mcpforms.protocol.server import Server, default_server
from mcpforms.registry import register_prompt, registry_for
from tests.core_client import CoreClient, asked

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
