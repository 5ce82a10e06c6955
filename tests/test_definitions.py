"""Admin-defined forms: one factory to a real Django form, the same pipeline, a tool list that follows the
database, and exactly one submission per completed flow."""

from __future__ import annotations

from typing import Any

import mcp_types
import pytest
from django.core import mail

from mcpforms.definitions import catalog_version, definition_form_class, definition_tools
from mcpforms.field_rows import auto_field_from_row
from mcpforms.fields import AutoFormField, fields_for_form
from mcpforms.models import FieldDefinition, FormDefinition, Submission
from mcpforms.protocol.server import default_server
from tests import wire
from tests.core_client import APPS, CoreClient, accept, asked, assert_unknown_tool, text

pytestmark = pytest.mark.django_db


def rsvp(**overrides: Any) -> FormDefinition:
    definition = FormDefinition.objects.create(
        **{
            "name": "event_rsvp",
            "title": "Event RSVP",
            "description": "Answer the invitation to the summer party.",
            "message": "Will you come?",
            **overrides,
        }
    )
    rows = [
        {"name": "name", "type": "text", "required": True, "max": 80},
        {"name": "email", "type": "email", "required": True},
        {"name": "attending", "type": "text", "required": True, "choices": "yes|Yes\nno|No\nmaybe|Maybe"},
        {"name": "guests", "type": "integer", "min": 0, "max": 5, "default": "0"},
        {
            "name": "diet",
            "type": "text",
            "choices": "veg|Vegetarian\nvegan|Vegan\nnuts|No nuts",
            "multiple": True,
        },
    ]
    for order, row in enumerate(rows):
        FieldDefinition.objects.create(definition=definition, order=order, **row)
    return FormDefinition.objects.get(pk=definition.pk)


def row(**values: Any) -> FieldDefinition:
    return FieldDefinition(**{"name": "f", "type": "text", **values})


# ---- reading definitions ---------------------------------------------------------------------------------


def test_the_factory_builds_a_form_that_reads_back_as_the_definition():
    definition = rsvp()
    expected = [auto_field_from_row(r) for r in definition.fields.all()]
    assert fields_for_form(definition_form_class(definition)) == expected
    assert expected[3] == AutoFormField("guests", "Guests", "integer", min=0, max=5, default=0)
    assert expected[4].multiple
    assert definition_form_class(definition).__doc__ == "Answer the invitation to the summer party."


# ---- the tool list follows the database -----------------------------------------------------------------


def tool_names() -> list[str]:
    return [tool["name"] for tool in CoreClient(default_server).result("tools/list")["tools"]]


def test_enabling_editing_and_disabling_change_tools_list_at_once():
    assert "event_rsvp" not in tool_names()
    definition = rsvp()
    assert "event_rsvp" in tool_names()

    definition.description = "Answer the invitation to the winter party."
    definition.save()
    tools = {tool["name"]: tool for tool in CoreClient(default_server).result("tools/list")["tools"]}
    assert tools["event_rsvp"]["description"].startswith("Answer the invitation to the winter party.")
    mcp_types.Tool.model_validate(tools["event_rsvp"])

    FieldDefinition.objects.create(definition=definition, order=9, name="note", type="textarea")
    tools = {tool["name"]: tool for tool in CoreClient(default_server).result("tools/list")["tools"]}
    assert "note" in tools["event_rsvp"]["inputSchema"]["properties"]

    definition.enabled = False
    definition.save()
    assert "event_rsvp" not in tool_names()
    definition.enabled = True
    definition.save()
    assert "event_rsvp" in tool_names()
    definition.delete()
    assert "event_rsvp" not in tool_names()


def test_an_edit_reaches_a_tool_already_listed_and_called_at_once():
    definition = rsvp()
    client = CoreClient(default_server)
    listed = {tool["name"]: tool for tool in client.result("tools/list")["tools"]}
    assert listed["event_rsvp"]["inputSchema"]["properties"]["email"]["title"] == "Email"
    assert asked(client.call("event_rsvp", {}), "event_rsvp")["requestedSchema"]["properties"]["email"]
    row = definition.fields.get(name="email")
    row.label = "Your e-mail"
    row.save()
    schema = asked(client.call("event_rsvp", {}), "event_rsvp")["requestedSchema"]  # no listing in between
    assert schema["properties"]["email"]["title"] == "Your e-mail"
    listed = {tool["name"]: tool for tool in client.result("tools/list")["tools"]}
    assert listed["event_rsvp"]["inputSchema"]["properties"]["email"]["title"] == "Your e-mail"


def test_every_change_moves_the_catalog_version():
    before = catalog_version()
    definition = rsvp()
    after_create = catalog_version()
    assert after_create != before
    field = definition.fields.first()
    assert field is not None
    field.label = "Your name"
    field.save()
    assert catalog_version() != after_create


def test_rows_saved_along_with_their_definition_make_one_version_not_one_each():
    definition = FormDefinition.objects.create(name="quiz", title="Quiz", description="Three questions.")
    for order in range(3):  # as the admin saves them, right after the definition
        FieldDefinition(definition=definition, order=order, name=f"q{order}").save(touch=False)
    definition.refresh_from_db()
    assert definition.version == 1
    row = definition.fields.get(name="q0")
    row.label = "First question"
    row.save()  # a row edited on its own (the shell, a data migration) still makes a new version
    definition.refresh_from_db()
    assert definition.version == 2
    row.delete(touch=False)
    definition.refresh_from_db()
    assert definition.version == 2


def test_a_broken_definition_is_left_out_not_a_broken_list(caplog):
    rsvp()
    broken = FormDefinition.objects.create(name="broken", title="Broken", description="x")
    # Written around the admin's validation, as a data migration or the shell could.
    FieldDefinition.objects.bulk_create(
        [FieldDefinition(definition=broken, name="n", type="integer", min=5, max=1)]
    )
    assert [tool.name for tool in definition_tools()] == ["event_rsvp"]
    assert "'broken' cannot be offered" in caplog.text


def test_a_code_registered_tool_wins_a_name_clash():
    rsvp(name="testapp_signup")
    tool = default_server.tools.get("testapp_signup")
    assert tool is not None
    assert "Create an account" in tool.description


# ---- running an admin-defined tool -----------------------------------------------------------------------


def test_a_completed_flow_stores_exactly_one_submission():
    definition = rsvp()
    client = CoreClient(default_server)
    first = client.call("event_rsvp", {"name": "Ada"})
    schema = asked(first, "event_rsvp")["requestedSchema"]
    assert list(schema["properties"]) == ["email", "attending", "guests", "diet"]
    assert schema["properties"]["guests"]["default"] == 0
    assert asked(first, "event_rsvp")["message"].startswith("Will you come?")
    assert Submission.objects.count() == 0

    answer = {"event_rsvp": accept(email="ada@example.com", attending="yes", guests=2, diet=["veg"])}
    done = client.answer(first, "event_rsvp", {"name": "Ada"}, **answer)
    submission = Submission.objects.get()
    assert done["structuredContent"] == {
        "submission": submission.pk,
        "form": "event_rsvp",
        "data": {"name": "Ada", "email": "ada@example.com", "attending": "yes", "guests": 2, "diet": ["veg"]},
    }
    assert submission.definition == definition
    assert submission.data["guests"] == 2
    assert submission.status == "new"

    again = client.answer(first, "event_rsvp", {"name": "Ada"}, **answer)
    assert again == done  # the recorded outcome, with the same submission number
    assert Submission.objects.count() == 1


def test_a_state_minted_for_an_older_version_is_refused_with_a_clear_re_ask():
    definition = rsvp()
    client = CoreClient(default_server)
    first = client.call("event_rsvp", {"name": "Ada"})
    definition.title = "Summer party RSVP"
    definition.save()
    body = client.send(
        "tools/call",
        {
            "name": "event_rsvp",
            "arguments": {"name": "Ada"},
            "requestState": first["requestState"],
            "inputResponses": {"event_rsvp": accept(email="ada@example.com", attending="yes")},
        },
    )
    assert Submission.objects.count() == 0
    # Authentic but stale: not an error, a clear request to fill the changed form in again.
    params = asked(body["result"], "event_rsvp")
    assert params["message"].startswith("This form changed while it was being filled in")
    assert "email" in params["requestedSchema"]["properties"]
    done = client.answer(
        body["result"],
        "event_rsvp",
        {"name": "Ada"},
        event_rsvp=accept(email="ada@example.com", attending="yes"),
    )
    assert not done.get("isError"), done
    assert Submission.objects.count() == 1


def test_a_tampered_state_for_an_admin_defined_form_is_still_an_error():
    rsvp()
    client = CoreClient(default_server)
    first = client.call("event_rsvp", {"name": "Ada"})
    body = client.send(
        "tools/call",
        {
            "name": "event_rsvp",
            "arguments": {"name": "Bob"},
            "requestState": first["requestState"],
            "inputResponses": {},
        },
    )
    assert body["error"]["code"] == -32602


# Django's test environment already sends mail to the locmem outbox (EMAIL_BACKEND before 6.1, MAILERS since).
def test_submissions_are_e_mailed_after_commit_when_asked(django_capture_on_commit_callbacks):
    rsvp(email_to="events@example.com")
    client = CoreClient(default_server)
    with django_capture_on_commit_callbacks(execute=True):
        client.call("event_rsvp", {"name": "Ada", "email": "ada@example.com", "attending": "no"})
    (message,) = mail.outbox
    assert message.to == ["events@example.com"]
    assert message.subject.startswith("New submission #")
    assert "attending: no" in message.body


def test_password_values_are_never_stored_in_a_submission():
    definition = FormDefinition.objects.create(name="login_check", title="Login", description="x")
    FieldDefinition.objects.create(definition=definition, name="user", type="text", required=True)
    FieldDefinition.objects.create(definition=definition, name="code", type="password")
    result = CoreClient(default_server).call("login_check", {"user": "ada", "code": "hunter2"})
    assert not result.get("isError"), result
    assert Submission.objects.get().data == {"user": "ada"}
    assert "hunter2" not in text(result)


def test_a_permission_is_required_when_set():
    rsvp(permission="mcpforms.add_submission")
    assert_unknown_tool(CoreClient(default_server), "event_rsvp")


def test_an_admin_defined_form_lists_its_app_only_submit_tool_for_the_form_ui():
    rsvp()
    apps_host = CoreClient(default_server, capabilities=APPS)
    tools = {tool["name"]: tool for tool in apps_host.result("tools/list")["tools"]}
    assert tools["event_rsvp"]["_meta"]["ui"]["resourceUri"] == "ui://mcpforms/event_rsvp"
    assert tools["event_rsvp_submit"]["_meta"]["ui"]["visibility"] == ["app"]


def test_a_stale_final_round_replayed_submits_nothing():
    definition = rsvp()
    client = CoreClient(default_server)
    first = client.call("event_rsvp", {"name": "Ada"})
    final = accept(email="ada@example.com", attending="yes")
    definition.title = "Summer party RSVP"
    definition.save()
    # The old form's final round, sent three times (a client retrying): asked again each time.
    for _ in range(3):
        replay = client.answer(first, "event_rsvp", {"name": "Ada"}, event_rsvp=final)
        assert asked(replay, "event_rsvp")["message"].startswith("This form changed")
    assert Submission.objects.count() == 0


def test_a_stale_final_round_replayed_with_every_argument_given_submits_nothing():
    # The model gave every field and the user confirmed; then the form was edited, and the final round
    # is replayed (by a client that no longer declares elicitation): it must not run, three times over.
    definition = rsvp(ask="always")
    arguments = {"name": "Ada", "email": "ada@example.com", "attending": "yes"}
    first = CoreClient(default_server).call("event_rsvp", arguments)
    definition.title = "Summer party RSVP"
    definition.save()
    plain = CoreClient(default_server, capabilities={})
    for _ in range(3):
        replay = plain.answer(first, "event_rsvp", arguments, event_rsvp=accept(**arguments))
        assert replay["isError"] is True and "This form changed" in text(replay)
    assert Submission.objects.count() == 0


def test_a_submission_keeps_a_bounded_client_info():
    rsvp()
    client_info = {"name": "c" * 5000, "version": "1", "extra": "x" * 100_000, "icons": [{"src": "x" * 9000}]}
    meta = {"io.modelcontextprotocol/clientInfo": client_info}
    params = {"name": "event_rsvp", "arguments": {"name": "Ada", "email": "a@b.co", "attending": "no"}}
    # Through the envelope, as a client sends it.
    payload = wire.message("tools/call", params)
    payload["params"]["_meta"] |= meta
    reply = default_server.handle(payload)
    assert reply.body is not None and "result" in reply.body, reply
    stored = Submission.objects.order_by("-pk").first()
    assert stored is not None and stored.client_info == {"name": "c" * 200, "version": "1"}
