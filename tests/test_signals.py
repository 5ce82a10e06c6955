"""The signals a project connects to: sent after commit, once per completed flow, on every way a form is
filled (form elicitation in both eras, the MCP Apps submit tool, the URL-mode page), never on a replayed
last round or a rolled-back one, never with a password in ``data``, and never at the cost of the result."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pytest
from django import forms
from django.db import transaction
from django.test import Client, override_settings

import mcpforms
from mcpforms.models import FieldDefinition, FormDefinition, Submission
from mcpforms.protocol.era2025 import shim as era2025
from mcpforms.protocol.era2025.sessions import MemorySessions
from mcpforms.protocol.server import Server, default_server
from mcpforms.registry import register, registry_for
from mcpforms.signals import submission_stored, tool_completed, tool_declined
from mcpforms.tools import FormTool
from tests.core_client import APPS, CoreClient, accept, asked, text
from tests.protocol.test_era2025 import Era2025Client
from tests.testapp.models import Colour

# Transactional, as a served request is: on_commit callbacks run when the work really commits.
pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "correct horse battery staple"
URL_CAPABLE: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}
JOINED = {"email": "ada@example.com", "plan": "pro"}


class JoinForm(forms.Form):
    """Join the club."""

    email = forms.EmailField()
    plan = forms.ChoiceField(choices=[("pro", "Pro"), ("team", "Team")])


class VaultForm(forms.Form):
    """Unlock a vault."""

    username = forms.CharField()
    password = forms.CharField(widget=forms.PasswordInput, min_length=8)


class JoinTool(FormTool):
    form_class = JoinForm
    name = "join"

    def handle(self, request: Any, form: forms.BaseForm) -> dict[str, Any]:
        return {"joined": form.cleaned_data["email"]}


@dataclass
class Received:
    signal: str
    sender: Any
    kwargs: dict[str, Any]


@pytest.fixture
def received() -> Iterator[list[Received]]:
    seen: list[Received] = []
    signals = {"completed": tool_completed, "declined": tool_declined, "stored": submission_stored}

    def receiver_for(label: str) -> Any:
        def receive(sender: Any, **kwargs: Any) -> None:
            seen.append(Received(label, sender, kwargs))

        return receive

    receivers = {label: receiver_for(label) for label in signals}
    for label, signal in signals.items():
        signal.connect(receivers[label])
    yield seen
    for label, signal in signals.items():
        signal.disconnect(receivers[label])


@pytest.fixture(autouse=True)
def tools() -> Iterator[None]:
    def unlock(request: Any, form: forms.BaseForm) -> str:
        return f"Vault unlocked for {form.cleaned_data['username']}."

    def boom(request: Any, form: forms.BaseForm) -> str:
        Colour.objects.create(code="red", name="Red")
        raise RuntimeError("the handler failed after writing")

    register(JoinTool)
    register(JoinForm, name="join_plain")
    mcpforms.tool(VaultForm, name="vault_signals")(unlock)
    mcpforms.tool(JoinForm, name="boom")(boom)
    with override_settings(MCPFORMS={"BASE_URL": "http://testserver"}):
        yield
    for name in ("join", "join_plain", "vault_signals", "boom"):
        registry_for(default_server).unregister(name)


def completed(seen: list[Received]) -> list[Received]:
    return [event for event in seen if event.signal == "completed"]


# ---- form elicitation, 2026-07-28 ------------------------------------------------------------------------


def test_a_completed_form_elicitation_sends_tool_completed_once_with_its_arguments(
    received, django_user_model
):
    user = django_user_model.objects.create_user("ada")
    client = CoreClient(default_server, user=user)
    first = client.call("join", {})
    assert asked(first, "join")["mode"] == "form"
    assert received == []  # asking is no completion
    final = client.answer(first, "join", join=accept(**JOINED))
    assert final["structuredContent"] == {"joined": "ada@example.com"}

    (event,) = received
    tool = registry_for(default_server).form_tool("join")
    assert event.signal == "completed"
    assert event.sender is JoinTool and event.kwargs["tool"] is tool
    assert event.kwargs["principal"] == f"user:{user.pk}"
    assert event.kwargs["request"].user == user and event.kwargs["request"].binding == "tool:join"
    assert event.kwargs["data"] == JOINED
    assert event.kwargs["result"]["structuredContent"] == final["structuredContent"]
    assert event.kwargs["result"]["content"] == final["content"]


def test_a_replayed_last_round_gets_the_recorded_outcome_and_sends_nothing_again(received):
    client = CoreClient(default_server)
    first = client.call("join", {})
    final = client.answer(first, "join", join=accept(**JOINED))
    replayed = client.answer(first, "join", join=accept(**JOINED))
    assert replayed["structuredContent"] == final["structuredContent"]
    assert len(completed(received)) == 1


def test_a_call_the_model_completes_alone_sends_tool_completed(received):
    CoreClient(default_server, capabilities={}).call("join", JOINED)
    (event,) = received
    assert event.signal == "completed" and event.kwargs["principal"] == "anonymous"
    assert event.kwargs["data"] == JOINED


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_a_declined_or_cancelled_form_sends_tool_declined_and_nothing_else(received, action):
    client = CoreClient(default_server)
    first = client.call("join", {})
    refused = client.answer(first, "join", join={"action": action})
    assert refused["isError"] is True
    (event,) = received
    assert event.signal == "declined" and event.sender is JoinTool
    assert event.kwargs["action"] == action
    assert event.kwargs["tool"].name == "join" and event.kwargs["principal"] == "anonymous"


def test_a_signal_is_sent_after_commit_and_not_at_all_when_the_transaction_rolls_back(received):
    class Rollback(Exception):
        pass

    client = CoreClient(default_server, capabilities={})
    with pytest.raises(Rollback), transaction.atomic():  # ATOMIC_REQUESTS, say
        done = client.call("join", JOINED)
        assert done["structuredContent"] == {"joined": "ada@example.com"}
        assert received == []  # the handler ran, but nothing is committed yet
        raise Rollback
    assert received == []
    with transaction.atomic():
        client.call("join", JOINED)
        assert received == []
    assert len(completed(received)) == 1


def test_a_handler_that_raises_rolls_back_and_sends_nothing(received, caplog):
    caplog.set_level(logging.CRITICAL, logger="mcpforms")
    body = CoreClient(default_server, capabilities={}).send(
        "tools/call", {"name": "boom", "arguments": JOINED}
    )
    assert body["error"]["code"] == -32603
    assert not Colour.objects.filter(code="red").exists()
    assert received == []


def test_a_receiver_that_raises_changes_nothing_for_the_caller_nor_the_other_receivers(received, caplog):
    def broken(sender: Any, **kwargs: Any) -> None:
        raise RuntimeError("the Slack webhook is down")

    tool_completed.connect(broken)
    try:
        with caplog.at_level(logging.ERROR, logger="django.dispatch"):
            done = CoreClient(default_server, capabilities={}).call("join", JOINED)
    finally:
        tool_completed.disconnect(broken)
    assert "isError" not in done and done["structuredContent"] == {"joined": "ada@example.com"}
    assert len(completed(received)) == 1
    (logged,) = [record for record in caplog.records if record.name == "django.dispatch"]
    assert "the Slack webhook is down" in logged.getMessage() and logged.exc_info is not None


def test_a_receiver_may_pick_a_form_tool_class_as_its_sender(received):
    picked: list[dict[str, Any]] = []

    def only_join(sender: Any, **kwargs: Any) -> None:
        picked.append(kwargs)

    tool_completed.connect(only_join, sender=JoinTool)
    try:
        CoreClient(default_server, capabilities={}).call("join_plain", JOINED)
        CoreClient(default_server, capabilities={}).call("join", JOINED)
    finally:
        tool_completed.disconnect(only_join, sender=JoinTool)
    assert [kwargs["tool"].name for kwargs in picked] == ["join"]
    assert [event.kwargs["tool"].name for event in received] == ["join_plain", "join"]


def test_without_receivers_nothing_is_scheduled():
    calls: list[Any] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(transaction, "on_commit", lambda *args, **kwargs: calls.append(args[0]))
        CoreClient(default_server, capabilities={}).call("join", JOINED)
    # Only what the project itself scheduled: no signal work when nobody listens.
    assert calls == []


# ---- form elicitation, the 2025 era ----------------------------------------------------------------------


@pytest.fixture
def legacy_server() -> Server:
    server = Server(name="legacy-signals", sessions=MemorySessions())
    register(JoinTool, server=server)
    return server


def legacy_ask(server: Server) -> tuple[Era2025Client, Any]:
    client = Era2025Client(server, capabilities={"elicitation": {"form": {}}})
    reply = client.request("tools/call", {"name": "join", "arguments": {}})
    (asking,) = reply.events or ()
    assert asking.data is not None and asking.data["method"] == "elicitation/create"
    return client, asking


def test_a_2025_era_flow_sends_tool_completed_once_even_when_its_answer_is_posted_twice(
    received, legacy_server
):
    client, asking = legacy_ask(legacy_server)
    answer = {"jsonrpc": "2.0", "id": asking.data["id"], "result": accept(**JOINED)}
    client.send(answer)
    client.send(answer)  # a retried POST of the same answer
    (final,) = (
        era2025.resume(legacy_server, client.headers, asking.id, None, legacy_server.sessions).events or ()
    )
    assert final.data is not None and final.data["result"]["structuredContent"] == {
        "joined": "ada@example.com"
    }
    (event,) = received
    assert event.signal == "completed" and event.kwargs["data"] == JOINED
    assert event.kwargs["request"].client_info == {"name": "legacy-test", "version": "1"}


def test_a_2025_era_decline_sends_tool_declined(received, legacy_server):
    client, asking = legacy_ask(legacy_server)
    client.send({"jsonrpc": "2.0", "id": asking.data["id"], "result": {"action": "decline"}})
    (event,) = received
    assert event.signal == "declined" and event.kwargs["action"] == "decline"


# ---- the MCP Apps submit tool ----------------------------------------------------------------------------


def test_the_ui_submit_tool_sends_tool_completed_once_per_valid_submission(received):
    host = CoreClient(default_server, capabilities=APPS)
    invalid = host.call("join_submit", {"email": "not an address", "plan": "pro"})
    assert invalid["isError"] is True and received == []
    done = host.call("join_submit", JOINED)
    (event,) = received
    assert event.signal == "completed" and event.kwargs["data"] == JOINED
    assert event.kwargs["result"]["structuredContent"] == done["structuredContent"]
    assert event.kwargs["request"].binding == "tool:join_submit"


# ---- the URL-mode page -----------------------------------------------------------------------------------


def page_path(result: dict[str, Any]) -> str:
    params = result["inputRequests"]["vault_signals"]["params"]
    assert params["mode"] == "url"
    url: str = params["url"]
    return urlsplit(url).path


def test_the_url_mode_page_sends_tool_completed_without_the_password_and_the_retry_sends_nothing(received):
    client = CoreClient(default_server, capabilities=URL_CAPABLE)
    first = client.call("vault_signals", {"username": "ada"})
    path = page_path(first)
    browser = Client()
    short = browser.post(path, {"username": "ada", "password": "short"})
    assert short.status_code == 400 and received == []  # the page's form said no: nothing ran
    page = browser.post(path, {"username": "ada", "password": SECRET})
    assert page.status_code == 200

    (event,) = received
    assert event.signal == "completed" and event.kwargs["tool"].name == "vault_signals"
    assert event.kwargs["data"] == {"username": "ada"}  # never the password
    assert SECRET not in repr(event.kwargs)
    assert event.kwargs["principal"] == "anonymous"
    assert text(event.kwargs["result"]) == "Vault unlocked for ada."

    retried = client.call(
        "vault_signals",
        {"username": "ada"},
        inputResponses={"vault_signals": {"action": "accept"}},
        requestState=first["requestState"],
    )
    assert text(retried) == "Vault unlocked for ada."
    assert len(received) == 1


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_declining_the_url_mode_page_sends_tool_declined(received, action):
    client = CoreClient(default_server, capabilities=URL_CAPABLE)
    first = client.call("vault_signals", {"username": "ada"})
    refused = client.call(
        "vault_signals",
        {"username": "ada"},
        inputResponses={"vault_signals": {"action": action}},
        requestState=first["requestState"],
    )
    assert refused["isError"] is True
    (event,) = received
    assert event.signal == "declined" and event.kwargs["action"] == action


# ---- admin-defined forms ---------------------------------------------------------------------------------


def test_an_admin_defined_form_sends_submission_stored_then_tool_completed(received):
    definition = FormDefinition.objects.create(name="rsvp_signals", title="RSVP", message="Coming?")
    FieldDefinition.objects.create(definition=definition, order=0, name="name", type="text", required=True)
    FieldDefinition.objects.create(definition=definition, order=1, name="pin", type="password")
    client = CoreClient(default_server)
    first = client.call("rsvp_signals", {})
    final = client.answer(first, "rsvp_signals", rsvp_signals=accept(name="Ada"))
    client.answer(first, "rsvp_signals", rsvp_signals=accept(name="Ada"))  # replayed: nothing again

    stored, done = received
    submission = Submission.objects.get()
    assert stored.signal == "stored" and stored.kwargs["submission"] == submission
    assert stored.sender is type(stored.kwargs["tool"]) and stored.kwargs["tool"].name == "rsvp_signals"
    assert stored.kwargs["principal"] == "anonymous"
    assert done.signal == "completed" and done.kwargs["data"] == {"name": "Ada"}  # no password field
    assert done.kwargs["result"]["structuredContent"] == final["structuredContent"]
