"""A second server beside the default one: what it mints, only it accepts — even where both have a tool of
the same name (requestState, the completion record, URL-mode links)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from django import forms
from django.contrib.auth.models import AnonymousUser, User
from django.core import checks
from django.http import HttpResponse
from django.test import Client, override_settings

import mcpforms
from mcpforms.api import serve
from mcpforms.checks.registry import check_registered_forms
from mcpforms.definitions import catalog_version, definition_tools
from mcpforms.models import CompletedFlow, FormDefinition, UrlElicitation
from mcpforms.protocol.server import Server, default_server, server_for, servers
from mcpforms.protocol.state import ANONYMOUS, load_state
from mcpforms.registry import register, registry_for
from tests import wire
from tests.core_client import CoreClient, accept, asked, page_path, text
from tests.test_admin import add
from tests.testapp.models import Colour

pytestmark = pytest.mark.django_db

URL_CAPABLE: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}
SECRET = "correct horse battery staple"
ran: list[tuple[str, dict[str, Any]]] = []


class VaultForm(forms.Form):
    username = forms.CharField()
    password = forms.CharField(widget=forms.PasswordInput, min_length=8)


class NoteForm(forms.Form):
    note = forms.CharField()


@pytest.fixture
def billing() -> Iterator[Server]:
    """A second server, with a vault and a note tool of its own."""
    server = Server(key="billing")
    ran.clear()

    def handler(where: str) -> Any:
        def handle(request: Any, form: forms.BaseForm) -> str:
            ran.append((where, dict(form.cleaned_data)))
            return f"{where} handled it"

        return handle

    mcpforms.tool(VaultForm, name="vault", server=server)(handler("billing"))
    mcpforms.tool(NoteForm, name="note", server=server)(handler("billing"))
    with override_settings(MCPFORMS={"BASE_URL": "http://testserver"}):
        yield server


@pytest.fixture
def same_names_on_default() -> Iterator[None]:
    """The default server has tools of the same names, whose handlers must never run for billing."""

    def handle(request: Any, form: forms.BaseForm) -> str:
        ran.append(("default", dict(form.cleaned_data)))
        return "default handled it"

    mcpforms.tool(VaultForm, name="vault")(handle)
    mcpforms.tool(NoteForm, name="note")(handle)
    yield
    registry_for(default_server).unregister("vault")
    registry_for(default_server).unregister("note")


def test_servers_are_found_by_key(billing: Server) -> None:
    assert server_for("billing") is billing
    assert server_for("default") is default_server
    assert server_for("nowhere") is None
    assert servers().index(default_server) < servers().index(billing)


def test_a_server_key_follows_the_name_rule() -> None:
    with pytest.raises(ValueError, match="key must be"):
        Server(key="has space")
    assert Server().key.startswith("unnamed-")


def test_a_request_state_of_one_server_is_refused_by_the_other(
    billing: Server, same_names_on_default: None
) -> None:
    first = CoreClient(billing).call("note", {})
    assert asked(first, "note")
    replay = CoreClient(default_server).send(
        "tools/call",
        {
            "name": "note",
            "arguments": {},
            "inputResponses": {"note": accept(note="hi")},
            "requestState": first["requestState"],
        },
    )
    assert replay["error"]["code"] == -32602
    assert replay["error"]["data"] == {"reason": "invalid_request_state"}
    assert ran == []
    # On its own server the same retry completes, once.
    done = CoreClient(billing).answer(first, "note", note=accept(note="hi"))
    assert text(done) == "billing handled it"
    assert ran == [("billing", {"note": "hi"})]


def test_the_same_flow_on_two_servers_is_recorded_as_two(billing: Server) -> None:
    token = CoreClient(billing).call("note", {})["requestState"]
    state = load_state(token, server="billing", tool="tool:note", arguments={}, principal=ANONYMOUS)
    elsewhere = replace(state, server="default")
    assert CompletedFlow.digest_of(state) != CompletedFlow.digest_of(elsewhere)


def test_a_url_mode_link_opens_the_tool_of_the_server_that_minted_it(
    billing: Server, same_names_on_default: None
) -> None:
    client = CoreClient(billing, capabilities=URL_CAPABLE)
    first = client.call("vault", {"username": "ada"})
    path = page_path(first, "vault")
    assert UrlElicitation.objects.get().server == "billing"
    browser = Client()
    assert browser.get(path).status_code == 200
    assert browser.post(path, {"username": "ada", "password": SECRET}).status_code == 200
    assert ran == [("billing", {"username": "ada", "password": SECRET})]
    retried = {"inputResponses": {"vault": {"action": "accept"}}, "requestState": first["requestState"]}
    assert text(client.call("vault", {"username": "ada"}, **retried)) == "billing handled it"
    # The default server's same-named tool neither accepts billing's state nor returns billing's outcome.
    stolen = CoreClient(default_server, capabilities=URL_CAPABLE).send(
        "tools/call", {"name": "vault", "arguments": {"username": "ada"}, **retried}
    )
    assert stolen["error"]["data"] == {"reason": "invalid_request_state"}
    assert len(ran) == 1


def test_url_mode_works_on_a_server_the_default_has_no_such_tool_for(billing: Server) -> None:
    first = CoreClient(billing, capabilities=URL_CAPABLE).call("vault", {"username": "ada"})
    path = page_path(first, "vault")
    assert Client().get(path).status_code == 200
    assert Client().post(path, {"username": "ada", "password": SECRET}).status_code == 200
    assert ran == [("billing", {"username": "ada", "password": SECRET})]


def test_a_link_of_a_server_that_is_gone_is_no_longer_valid(billing: Server) -> None:
    first = CoreClient(billing, capabilities=URL_CAPABLE).call("vault", {"username": "ada"})
    UrlElicitation.objects.update(server="retired")  # as if the project no longer builds that server
    response = Client().get(page_path(first, "vault"))
    assert response.status_code == 404
    assert "no longer valid" in response.content.decode()


# ALLOW_ANONYMOUS is the default server's; another server opens tools to anonymous callers itself.


@override_settings(MCPFORMS={"ALLOW_ANONYMOUS": ["note"]})
def test_a_name_allow_anonymous_lists_opens_only_the_default_servers_tool(
    billing: Server, same_names_on_default: None
) -> None:
    assert "note" in listed(CoreClient(default_server))
    anonymous = CoreClient(billing)
    assert "note" not in listed(anonymous)
    refused = anonymous.send("tools/call", {"name": "note", "arguments": {"note": "hi"}})
    assert refused["error"] == {"code": -32602, "message": "Unknown tool: note"}
    assert ran == []


@override_settings(MCPFORMS={"ALLOW_ANONYMOUS": False})
def test_a_server_opens_its_own_tools_to_anonymous_callers() -> None:
    server = Server(key="public", allow_anonymous=["note"])
    register(NoteForm, name="note", server=server)
    register(VaultForm, name="vault", server=server)
    assert listed(CoreClient(server)) == ["note"]
    # Over HTTP, its anonymous callers get in, while the default server's are asked to authenticate.
    assert post(server).status_code == 200
    assert post(default_server).status_code == 401


@override_settings(MCPFORMS={"ALLOW_ANONYMOUS": True})
def test_a_server_can_close_itself_to_anonymous_callers() -> None:
    server = Server(key="closed", allow_anonymous=False)
    register(NoteForm, name="note", server=server)
    assert post(server).status_code == 401
    assert post(default_server).status_code == 200


def listed(client: CoreClient) -> list[str]:
    return [tool["name"] for tool in client.result("tools/list")["tools"]]


def post(server: Server) -> HttpResponse:
    """An anonymous tools/list over HTTP."""
    request = wire.http_request(wire.message("tools/list"))
    request.user = AnonymousUser()
    response = serve(server, request)
    assert isinstance(response, HttpResponse)
    return response


def test_a_server_nobody_holds_is_gone_with_its_tools() -> None:
    before = servers()
    server = Server(key="short-lived")
    register(NoteForm, name="note", server=server)
    assert servers() == [*before, server]
    del server
    assert servers() == before
    assert server_for("short-lived") is None


# The checks: every server's forms, and keys that bind what they mint.


def check_ids() -> list[str]:
    return [str(message.id) for message in checks.run_checks() if str(message.id).startswith("mcpforms.")]


def test_two_servers_sharing_a_key_are_an_error(billing: Server) -> None:
    twin = Server(key="billing")
    assert "mcpforms.E020" in check_ids()
    del twin
    assert "mcpforms.E020" not in check_ids()


def test_a_server_with_tools_and_no_key_is_warned_of() -> None:
    server = Server()

    def warned() -> bool:
        return any(
            message.id == "mcpforms.W004" and repr(server.key) in message.msg
            for message in checks.run_checks()
        )

    assert not warned()  # no tools: nothing it mints yet
    register(NoteForm, name="note", server=server)
    assert warned()


class Unmapped(forms.Field):
    """A field class no converter maps."""


def test_every_servers_forms_are_checked(billing: Server) -> None:
    class Shifty(forms.Form):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            if Colour.objects.exists():  # what the database holds decides the fields
                self.fields["odd"] = Unmapped()

    register(Shifty, name="shifty", server=billing)
    Colour.objects.create(name="Red", code="#f00")
    (message,) = [m for m in check_registered_forms() if "'shifty'" in m.msg]
    assert message.id == "mcpforms.E101"
    assert "'shifty' on the server 'billing'" in message.msg


def test_an_admin_form_may_not_take_a_code_name_of_any_server_that_serves_admin_forms(
    billing: Server,
) -> None:
    staff = Client()
    staff.force_login(User.objects.create_superuser("staff", "staff@example.com", "pw"))
    fields = [{"name": "note"}]
    # billing serves no admin forms yet: its "vault" takes nothing from them.
    assert add(staff, fields, name="vault").status_code == 302
    FormDefinition.objects.all().delete()
    registry_for(billing).add_source(definition_tools, version=catalog_version)
    refused = add(staff, fields, name="vault")
    assert refused.status_code == 200
    assert "already the name of a tool defined in code" in refused.content.decode().replace("&#x27;", "'")
    assert FormDefinition.objects.count() == 0
