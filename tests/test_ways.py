"""Which ways a tool is filled: what ``ways_to_fill`` says for a client is what its first round does on the
wire, and what it says for any client is every way some client gets."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django import forms
from django.conf import settings
from django.test import override_settings

from mcpforms.flow import Way
from mcpforms.protocol.server import Server
from mcpforms.registry import register, registry_for
from mcpforms.ways import ways_to_fill
from tests.core_client import APPS, CoreClient
from tests.forms import SignupForm
from tests.test_wizard_app import FILLED, ConfirmedTripWizard

pytestmark = pytest.mark.django_db

FORM: dict[str, Any] = {"elicitation": {"form": {}}}
URL: dict[str, Any] = {"elicitation": {"url": {}}}
FORM_AND_URL: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}
CLIENTS: dict[str, dict[str, Any]] = {
    "nothing": {},
    "apps": APPS,
    "form": FORM,
    "url": URL,
    "form and url": FORM_AND_URL,
    "everything": APPS | FORM_AND_URL,
}
VALID = {"email": "ada@example.com", "plan": "pro"}


class VaultForm(forms.Form):
    username = forms.CharField()
    password = forms.CharField(widget=forms.PasswordInput)


class OptionalSecretForm(forms.Form):
    username = forms.CharField()
    password = forms.CharField(widget=forms.PasswordInput, required=False)


class HiddenForm(forms.Form):
    campaign = forms.CharField(widget=forms.HiddenInput)


# Each tool, the arguments of its first call, and every way some client gets, most preferred first.
TOOLS: dict[str, tuple[type[forms.Form], dict[str, Any], dict[str, Any], tuple[Way, ...]]] = {
    "signup": (SignupForm, {}, {}, ("app", "form")),
    "no_ui": (SignupForm, {"path": "form"}, {}, ("form",)),
    "on_page": (SignupForm, {"path": "url"}, {}, ("url",)),
    # "always" runs nothing unconfirmed: with valid arguments, a client without form elicitation that has
    # URL mode confirms on the page.
    "confirm": (SignupForm, {"ask": "always"}, VALID, ("form", "url")),
    # The UI is the tool's, whether or not a round asks: an MCP Apps host renders it with every call.
    "plain": (SignupForm, {"ask": "never"}, {}, ("app",)),
    "vault": (VaultForm, {}, {}, ("url",)),  # a required password: the page at once
    "vault_never": (VaultForm, {"ask": "never"}, {}, ()),
    "optional_secret": (OptionalSecretForm, {}, {}, ("form",)),  # no UI, and the page is never needed
    # Nothing a form elicitation can ask: only the page can confirm it.
    "hidden_confirm": (HiddenForm, {"ask": "always"}, {"campaign": "spring"}, ("url",)),
}


@pytest.fixture
def server() -> Iterator[Server]:
    server = Server()
    for name, (form, options, _, _) in TOOLS.items():
        register(form, server=server, name=name, **options)
    with override_settings(MCPFORMS={**settings.MCPFORMS, "BASE_URL": "http://testserver"}):
        yield server


def observed(server: Server, name: str, capabilities: dict[str, Any]) -> Way | None:
    """The way the client's first call of ``name`` asks: the UI its listing links, else the mode of the
    elicitation its call gets (None: an ``isError`` result, or a result)."""
    client = CoreClient(server, capabilities=capabilities)
    listed = {tool["name"]: tool for tool in client.result("tools/list")["tools"]}
    if "ui" in listed[name].get("_meta", {}) and f"{name}_submit" in listed:
        return "app"
    result = client.call(name, TOOLS[name][2])
    if result.get("resultType") != "input_required":
        return None
    mode: Way = result["inputRequests"][name]["params"].get("mode", "form")
    return mode


@pytest.mark.parametrize("name", TOOLS)
def test_for_one_client_the_way_is_the_one_its_first_round_takes(server, name):
    form_tool = registry_for(server).form_tool(name)
    assert form_tool is not None
    for label, capabilities in CLIENTS.items():
        way = observed(server, name, capabilities)
        assert ways_to_fill(form_tool, capabilities) == (() if way is None else (way,)), label


@pytest.mark.parametrize("name", TOOLS)
def test_for_any_client_the_ways_are_every_way_some_client_gets(server, name):
    form_tool = registry_for(server).form_tool(name)
    assert form_tool is not None
    assert ways_to_fill(form_tool) == TOOLS[name][3]
    seen = {observed(server, name, capabilities) for capabilities in CLIENTS.values()}
    assert set(ways_to_fill(form_tool)) == seen - {None}


def test_a_wizard_with_a_step_the_user_answers_is_never_filled_through_the_app():
    server = Server()
    register(ConfirmedTripWizard, server=server)
    form_tool = registry_for(server).form_tool("confirmed_trip")
    assert form_tool is not None
    with override_settings(MCPFORMS={**settings.MCPFORMS, "BASE_URL": "http://testserver"}):
        assert ways_to_fill(form_tool) == ("form", "url")
        for label, capabilities in CLIENTS.items():
            client = CoreClient(server, capabilities=capabilities)
            assert "confirmed_trip_submit" not in [
                tool["name"] for tool in client.result("tools/list")["tools"]
            ]
            result = client.call("confirmed_trip", FILLED)  # the step to confirm: by form, or on the page
            way = (
                result["inputRequests"]["confirmed_trip"]["params"].get("mode", "form")
                if result.get("resultType") == "input_required"
                else None
            )
            assert ways_to_fill(form_tool, capabilities) == (() if way is None else (way,)), label
