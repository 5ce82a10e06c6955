"""Admin-defined steps: a form staff group into steps, each asked on a condition of an earlier answer, served
as a multi-step tool on the wire, stored as one submission, validated and previewed in the admin."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings
from django.urls import reverse

import mcpforms.sealing as sealing
from mcpforms.definition_steps import CONDITIONS, read_steps
from mcpforms.definitions import catalog_version, definition_tool, definition_tools
from mcpforms.models import FieldDefinition, FormDefinition, Submission
from mcpforms.protocol.era2025 import shim as era2025
from mcpforms.protocol.era2025.sessions import MemorySessions
from mcpforms.protocol.server import Server, default_server
from mcpforms.registry import registry_for
from mcpforms.wizards import STARTED_OVER
from tests.core_client import (
    APPS,
    CoreClient,
    accept,
    asked,
    assert_unknown_tool,
    page_path,
    text,
    url_request,
)
from tests.protocol.test_era2025 import ELICITATION, Era2025Client
from tests.test_admin import add, change

pytestmark = pytest.mark.django_db

SECRET = "correct horse battery staple"

# A trip: where, then a passport only abroad, a visa only for some countries, a EU health card (EHIC) only
# for France, then the dates. Every step has a required field: a step its arguments satisfy is not asked.
TRAVEL_ROWS: list[dict[str, Any]] = [
    {"name": "destination", "required": True, "step": "Trip"},
    {"name": "country", "required": True, "choices": "FR|France\nJP|Japan\nUS|United States\nNO|Norway"},
    {"name": "international", "type": "boolean"},
    {
        "name": "passport_number",
        "required": True,
        "min": 6,
        "step": "Passport",
        "condition_field": "international",
        "condition": "true",
    },
    {
        "name": "visa_number",
        "required": True,
        "step": "Visa",
        "condition_field": "country",
        "condition": "one_of",
        "condition_value": "JP\nUS",
    },
    {
        "name": "health_card",
        "required": True,
        "step": "EU health card (EHIC)",
        "condition_field": "country",
        "condition": "equals",
        "condition_value": "FR",
    },
    {"name": "start", "type": "date", "required": True, "step": "Dates"},
    {"name": "budget", "type": "integer", "required": True, "min": 1},
]


def define(rows: list[dict[str, Any]], **overrides: Any) -> FormDefinition:
    definition = FormDefinition.objects.create(
        **{"name": "travel_request", "title": "Travel request", "description": "Request a trip.", **overrides}
    )
    for order, row in enumerate(rows):
        FieldDefinition.objects.create(definition=definition, order=order, **{"type": "text", **row})
    return FormDefinition.objects.get(pk=definition.pk)


@pytest.fixture
def client() -> CoreClient:
    define(TRAVEL_ROWS)
    return CoreClient(default_server, over_http=True)  # through the Streamable HTTP endpoint


def step(result: dict[str, Any]) -> tuple[str, list[str]]:
    """The first line of what is asked, and the fields asked."""
    params = asked(result, "travel_request")
    return params["message"].splitlines()[0], list(params["requestedSchema"]["properties"])


def walk(client: CoreClient, *answers: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """Call the tool and answer each step asked in turn; the headings asked, and the last result."""
    result = client.call("travel_request")
    headings = []
    for answer in answers:
        headings.append(step(result)[0])
        result = client.answer(result, "travel_request", travel_request=accept(**answer))
    return headings, result


TRIP = {"destination": "Somewhere", "international": True}
DATES = {"start": "2027-01-02", "budget": 900}


def test_a_stepped_definition_is_one_tool_whose_input_schema_lists_every_field_as_optional(client):
    (listed,) = [t for t in client.result("tools/list")["tools"] if t["name"] == "travel_request"]
    assert list(listed["inputSchema"]["properties"]) == [row["name"] for row in TRAVEL_ROWS]
    assert "required" not in listed["inputSchema"]
    assert "one step at a time" in listed["description"]


def test_it_asks_step_by_step_with_the_staff_titles(client):
    first = client.call("travel_request")
    assert step(first) == ("Step 1 of at most 5: Trip", ["destination", "country", "international"])


@pytest.mark.parametrize(
    ("trip", "steps", "stored"),
    [
        # "is true": a passport only abroad; "is one of": a visa for Japan or the US.
        (
            {"country": "JP", "international": True},
            ["Trip", "Passport", "Visa", "Dates"],
            {"passport_number": "X1234567", "visa_number": "V-1"},
        ),
        # "equals": the health card only for France; no passport at home.
        (
            {"country": "FR", "international": False},
            ["Trip", "EU health card (EHIC)", "Dates"],
            {"health_card": "EU-9"},
        ),
        # No condition holds: the trip and the dates only.
        ({"country": "NO", "international": False}, ["Trip", "Dates"], {}),
    ],
)
def test_each_condition_flips_the_path_and_one_submission_stores_every_step(client, trip, steps, stored):
    answers = {"Passport": {"passport_number": "X1234567"}, "Visa": {"visa_number": "V-1"}}
    answers["EU health card (EHIC)"] = {"health_card": "EU-9"}
    result = client.call("travel_request")
    seen = []
    while result.get("resultType") == "input_required":
        heading = step(result)[0]
        title = heading.split(": ", 1)[1]
        seen.append(title)
        answer = {"destination": "Away", **trip} if title == "Trip" else answers.get(title, DATES)
        result = client.answer(result, "travel_request", travel_request=accept(**answer))
    assert seen == steps
    assert result.get("isError") is not True, text(result)
    submission = Submission.objects.get()
    expected = {"destination": "Away", **trip, **stored, "start": "2027-01-02", "budget": 900}
    assert submission.data == expected
    assert result["structuredContent"] == {
        "submission": submission.pk,
        "form": "travel_request",
        "data": expected,
    }


def test_the_step_count_says_at_most_and_shrinks_when_a_condition_drops_steps(client):
    first = client.call("travel_request")
    home = client.answer(
        first, "travel_request", travel_request=accept(destination="Oslo", country="NO", international=False)
    )
    assert step(home) == ("Step 2 of at most 2: Dates", ["start", "budget"])


def test_replaying_the_final_round_stores_nothing_more(client):
    first = client.call("travel_request")
    home = client.answer(first, "travel_request", travel_request=accept(destination="Oslo", country="NO"))
    done = client.answer(home, "travel_request", travel_request=accept(**DATES))
    assert client.answer(home, "travel_request", travel_request=accept(**DATES)) == done
    assert Submission.objects.count() == 1


def test_an_edit_of_the_definition_mid_flow_starts_over(client):
    first = client.call("travel_request")
    abroad = client.answer(
        first, "travel_request", travel_request=accept(destination="Tokyo", country="JP", international=True)
    )
    assert step(abroad)[0] == "Step 2 of at most 5: Passport"
    # A label only: the steps and their fields' types are the same, the definition is not.
    row = FieldDefinition.objects.get(name="passport_number")
    row.label = "Passport no."
    row.save()
    again = client.answer(abroad, "travel_request", travel_request=accept(passport_number="X1234567"))
    message = asked(again, "travel_request")["message"]
    assert message.splitlines() == [STARTED_OVER, "Step 1 of at most 5: Trip"]
    assert Submission.objects.count() == 0


def test_an_invalid_answer_asks_the_step_again(client):
    first = client.call("travel_request")
    abroad = client.answer(
        first, "travel_request", travel_request=accept(destination="Tokyo", country="NO", international=True)
    )
    short = client.answer(abroad, "travel_request", travel_request=accept(passport_number="X1"))
    message = asked(short, "travel_request")["message"]
    assert message.startswith("Step 2 of at most 5: Passport\nPlease correct:")
    assert "at least 6 characters" in message


def test_a_condition_on_a_field_of_a_skipped_step_is_false():
    rows: list[dict[str, Any]] = [
        {"name": "destination", "required": True},
        {"name": "international", "type": "boolean"},
        {"name": "passport_country", "required": True, "choices": "JP\nUS", "step": "Passport"},
        {"name": "visa_number", "required": True, "step": "Visa"},
    ]
    rows[2] |= {"condition_field": "international", "condition": "true"}
    rows[3] |= {"condition_field": "passport_country", "condition": "one_of", "condition_value": "JP\nUS"}
    define(rows)
    # At home the passport step is skipped, so the visa step is too, whatever the model passed for it.
    arguments = {"destination": "Oslo", "international": False, "passport_country": "JP"}
    done = CoreClient(default_server).call("travel_request", arguments)
    assert done.get("isError") is not True, done
    assert Submission.objects.get().data == {"destination": "Oslo", "international": False}


def test_a_2025_session_walks_the_steps_through_server_requests():
    define(TRAVEL_ROWS)
    server = Server(name="legacy", sessions=MemorySessions())
    registry_for(server).add_source(definition_tools, version=catalog_version)
    client = Era2025Client(server, capabilities=ELICITATION)
    reply = client.request("tools/call", {"name": "travel_request", "arguments": {}})
    (asking,) = reply.events or ()
    answers = [
        {"destination": "Tokyo", "country": "JP", "international": True},
        {"passport_number": "X1234567"},
    ]
    answers += [{"visa_number": "V-1"}, DATES]
    seen = []
    for content in answers:
        assert asking.data is not None and asking.data["method"] == "elicitation/create"
        seen.append(asking.data["params"]["message"])
        client.send(
            {"jsonrpc": "2.0", "id": asking.data["id"], "result": {"action": "accept", "content": content}}
        )
        (asking,) = era2025.resume(server, client.headers, asking.id, None, server.sessions).events or ()
    assert seen == [
        "Step 1 of at most 5: Trip",
        "Step 2 of at most 5: Passport",
        "Step 3 of at most 5: Visa",
        "Step 4 of at most 4: Dates",
    ]
    assert (
        asking.data is not None and asking.data["result"]["structuredContent"]["data"]["visa_number"] == "V-1"
    )
    assert Submission.objects.get().data["passport_number"] == "X1234567"


def test_a_form_with_no_step_title_is_one_page_as_before():
    define(
        [{"name": "destination", "required": True}, {"name": "budget", "type": "integer", "required": True}]
    )
    params = asked(CoreClient(default_server).call("travel_request"), "travel_request")
    assert list(params["requestedSchema"]["properties"]) == ["destination", "budget"]
    assert "Step" not in params["message"]


def test_the_conditions_are_described_in_words():
    tool = definition_tool(define(TRAVEL_ROWS))
    assert [tool.describe_condition(step) for step in tool.steps] == [  # type: ignore[attr-defined]
        None,
        "when international is true",
        "when country is one of JP, US",
        "when country equals FR",
        None,
    ]
    assert tool.get_step_title("eu_health_card_ehic") == "EU health card (EHIC)"  # type: ignore[attr-defined]


def test_rows_before_the_first_step_title_form_an_untitled_first_step():
    rows = [{"name": "destination", "required": True}, {**TRAVEL_ROWS[6]}, {**TRAVEL_ROWS[7]}]
    define(rows)
    first = CoreClient(default_server).call("travel_request")
    assert step(first) == ("Step 1 of at most 2: Travel request", ["destination"])


def test_a_stepped_definition_the_wizard_cannot_serve_is_left_out_and_logged(caplog):
    define(TRAVEL_ROWS, name="confirmed_trip", ask="never")  # saved outside the admin, which refuses it
    define(TRAVEL_ROWS)
    names = [tool.name for tool in definition_tools()]
    assert names == ["travel_request"]
    assert "'confirmed_trip' cannot be offered" in caplog.text
    FieldDefinition.objects.filter(name="visa_number").update(condition_field="nowhere")
    assert definition_tools() == []
    assert "'nowhere' is no field of this form" in caplog.text


def test_the_condition_words_are_the_models_choices():
    assert dict(FieldDefinition.Condition.choices) == CONDITIONS


def test_a_condition_compares_numbers_and_dates_as_their_json():
    rows = [
        {"name": "nights", "type": "integer", "required": True},
        {"name": "start", "type": "date", "required": True},
        {"name": "long_stay", "required": True, "step": "Long stay"},
        {"name": "new_year", "required": True, "step": "New year"},
    ]
    rows[2] |= {"condition_field": "nights", "condition": "one_of", "condition_value": "7\n14"}
    rows[3] |= {"condition_field": "start", "condition": "equals", "condition_value": "2027-01-01"}
    steps = read_steps([FieldDefinition(**{"type": "text", **row}) for row in rows])
    long_stay, new_year = steps[1].condition, steps[2].condition
    assert long_stay is not None and new_year is not None
    assert long_stay.holds({"step_1": {"nights": 14}}) and not long_stay.holds({"step_1": {"nights": 15}})
    assert new_year.holds({"step_1": {"start": datetime.date(2027, 1, 1)}})
    assert not new_year.holds({})  # the step holding the field was skipped


# ---- the admin ---------------------------------------------------------------------------------------------


@pytest.fixture
def staff() -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("staff", "staff@example.com", "pw"))
    return client


def admin_errors(response: Any) -> dict[str, list[str]]:
    """The errors of each field row the admin shows, by ``row.field`` (``row`` for a row's own)."""
    assert response.status_code == 200, response
    (inline,) = response.context["inline_admin_formsets"]
    found: dict[str, list[str]] = {}
    for index, form in enumerate(inline.formset.forms):
        for field, messages in form.errors.items():
            found[f"{index}.{field}"] = list(messages)
    found |= {"form": list(inline.formset.non_form_errors())}
    return found


def test_staff_define_steps_in_the_admin_and_the_tool_asks_them(staff):
    response = add(staff, TRAVEL_ROWS, name="travel_request", title="Travel request")
    assert response.status_code == 302, admin_errors(response)
    first = CoreClient(default_server).call("travel_request")
    assert step(first)[0] == "Step 1 of at most 5: Trip"


@pytest.mark.parametrize(
    ("change_rows", "where", "message"),
    [
        # A condition on a row that starts no step.
        (
            {2: {"condition_field": "country", "condition": "equals", "condition_value": "FR"}},
            "2.step",
            "belongs on the row that starts the step",
        ),
        # The first row's condition: nothing before it to read.
        (
            {0: {"condition_field": "country", "condition": "true"}},
            "0.condition_field",
            "first step is always asked",
        ),
        # A field of the same step, of a later one, or of none.
        ({3: {"condition_field": "passport_number"}}, "3.condition_field", "is in this step or a later one"),
        ({3: {"condition_field": "start"}}, "3.condition_field", "is in this step or a later one"),
        ({3: {"condition_field": "nowhere"}}, "3.condition_field", "'nowhere' is no field of this form"),
        ({3: {"condition_field": ""}}, "3.condition_field", "Name the field of an earlier step"),
        # An unknown condition, or none.
        ({3: {"condition": "maybe"}}, "3.condition", "Select a valid choice"),
        ({3: {"condition": ""}}, "3.condition", "Choose when the step is asked"),
        # equals / is one of without a value, or with a value the field cannot have.
        ({5: {"condition_value": ""}}, "5.condition_value", "“equals” needs the value to compare with"),
        ({4: {"condition_value": ""}}, "4.condition_value", "“is one of” needs the values, one per line"),
        (
            {4: {"condition_value": "JP\nXX"}},
            "4.condition_value",
            "value of country must be one of the choices",
        ),
        ({5: {"condition_value": "FR\nJP"}}, "5.condition_value", "for several, choose “is one of”"),
        ({3: {"condition_value": "yes"}}, "3.condition_value", "“is true” compares with no value"),
    ],
)
def test_a_step_or_condition_staff_get_wrong_is_an_error_on_its_field(staff, change_rows, where, message):
    rows = [{**row, **change_rows.get(index, {})} for index, row in enumerate(TRAVEL_ROWS)]
    errors = admin_errors(add(staff, rows))
    assert any(message in text for text in errors.get(where, [])), errors
    assert FormDefinition.objects.count() == 0


def test_a_form_with_steps_cannot_be_a_plain_tool_that_never_asks(staff):
    errors = admin_errors(add(staff, TRAVEL_ROWS, ask="never"))
    assert any("cannot be a plain tool that never asks" in text for text in errors["0.step"]), errors
    assert FormDefinition.objects.count() == 0


def test_always_let_the_user_confirm_asks_every_step_the_arguments_only_prefill(staff):
    arguments = {"destination": "Oslo", "country": "NO"}
    definition = define(TRAVEL_ROWS)
    # Asking for what is missing: the trip the arguments fill is not asked.
    assert (
        step(CoreClient(default_server).call("travel_request", arguments))[0] == "Step 2 of at most 2: Dates"
    )
    definition.ask = "always"
    definition.save()
    client = CoreClient(default_server)
    first = client.call("travel_request", arguments)
    params = asked(first, "travel_request")
    assert params["message"].splitlines()[0] == "Step 1 of at most 5: Trip"
    assert params["requestedSchema"]["properties"]["destination"]["default"] == "Oslo"
    assert list(params["requestedSchema"]["properties"]) == ["destination", "country", "international"]
    trip = accept(destination="Bergen", country="NO", international=False)
    dates = client.answer(first, "travel_request", arguments, travel_request=trip)
    assert step(dates)[0] == "Step 2 of at most 2: Dates"
    done = client.answer(dates, "travel_request", arguments, travel_request=accept(**DATES))
    assert Submission.objects.get().data["destination"] == "Bergen"
    assert done.get("isError") is not True


def test_always_let_the_user_confirm_gives_an_apps_host_no_submit_tool_to_confirm_with():
    define(TRAVEL_ROWS, ask="always")
    host = CoreClient(default_server, capabilities=APPS | ELICITATION)
    listed = {tool["name"]: tool for tool in host.result("tools/list")["tools"]}
    assert "ui" not in listed["travel_request"].get("_meta", {})
    assert_unknown_tool(host, "travel_request_submit", {"destination": "Oslo", "_mcpforms_state": "x"})
    first = host.call("travel_request", {"destination": "Oslo", "country": "NO"})
    assert asked(first, "travel_request")["message"].splitlines()[0] == "Step 1 of at most 5: Trip"


def test_reordering_rows_in_the_admin_is_what_the_steps_follow(staff):
    # The visa step moved up, right after the destination: the country it reads is now asked after it.
    rows = [{**row, "order": index * 10} for index, row in enumerate(TRAVEL_ROWS)]
    rows[4]["order"] = 5
    errors = admin_errors(add(staff, rows))
    assert errors["4.condition_field"] == [
        "'country' is in this step or a later one: a condition reads a field of an earlier step "
        "(destination)."
    ]


def test_a_password_step_is_filled_on_the_page_and_the_password_is_never_stored(staff):
    rows = [
        {"name": "destination", "required": True, "step": "Trip"},
        {"name": "username", "required": True, "step": "Account"},
        {"name": "password", "type": "password", "required": True, "min": 8},
        {"name": "start", "type": "date", "required": True, "step": "Dates"},
    ]
    assert add(staff, rows, name="travel_request").status_code == 302  # the admin accepts it
    client = CoreClient(default_server, capabilities={"elicitation": {"form": {}, "url": {}}})
    with override_settings(MCPFORMS={"ALLOW_ANONYMOUS": True, "BASE_URL": "http://testserver"}):
        first = client.call("travel_request")
        on_page = client.answer(first, "travel_request", travel_request=accept(destination="Oslo"))
        assert url_request(on_page, "travel_request")["message"].startswith("Step 2 of at most 3: Account")
        page = Client().post(page_path(on_page, "travel_request"), {"username": "ada", "password": SECRET})
        assert page.status_code == 200, page.content.decode()
        dates = client.answer(on_page, "travel_request", travel_request={"action": "accept"})
        assert step(dates)[0] == "Step 3 of at most 3: Dates"
        done = client.answer(dates, "travel_request", travel_request=accept(start="2027-01-02"))
    assert done.get("isError") is not True, done
    assert Submission.objects.get().data == {"destination": "Oslo", "username": "ada", "start": "2027-01-02"}
    assert SECRET not in json.dumps(list(Submission.objects.values()), default=str)


def test_without_cryptography_the_admin_refuses_a_password_step_it_could_not_keep(staff, monkeypatch):
    monkeypatch.setattr(sealing, "available", lambda: False)
    rows = [
        {"name": "destination", "required": True, "step": "Trip"},
        {"name": "password", "type": "password", "required": True, "step": "Account"},
    ]
    (refusal,) = admin_errors(add(staff, rows, name="travel_request"))["form"]
    assert refusal.startswith("Assistants could not be offered this form: ")
    assert "(mcpforms.E417): The wizard's step 'account' has a password or a file" in refusal
    assert FormDefinition.objects.count() == 0


def test_the_preview_shows_each_step_its_condition_and_its_fields(staff):
    assert add(staff, TRAVEL_ROWS).status_code == 302
    definition = FormDefinition.objects.get()
    page = staff.get(reverse("admin:mcpforms_formdefinition_change", args=[definition.pk])).content.decode()
    assert "Step 2 of 5: Passport" in page
    assert "Asked when international is true" in page
    assert "Asked when country is one of JP, US" in page
    assert "Asked when country equals FR" in page
    assert page.count("Always asked") == 4  # the first step and the dates, in both previews
    assert '<input type="text" name="passport_number"' in page  # each step's form, rendered by Django
    assert "&quot;passport_number&quot;" in page  # and each step's elicitation schema


def test_editing_steps_in_the_admin_keeps_the_rows_and_bumps_the_version(staff):
    assert add(staff, TRAVEL_ROWS).status_code == 302
    definition = FormDefinition.objects.get()
    rows = [{**row} for row in TRAVEL_ROWS]
    rows[5]["condition_value"] = "NO"
    response = change(staff, definition, rows)
    assert response.status_code == 302, admin_errors(response)
    tool = definition_tool(FormDefinition.objects.get())
    assert tool.describe_condition("eu_health_card_ehic") == "when country equals NO"  # type: ignore[attr-defined]


def test_staff_typed_titles_and_values_render_as_text_in_the_preview(staff):
    rows = [{**row} for row in TRAVEL_ROWS]
    rows[3]["step"] = "<b>Passport</b>"
    rows[1]["choices"] += "\n<i>|Sneaky"
    rows[4]["condition_value"] = "JP\n<i>"
    assert add(staff, rows).status_code == 302
    definition = FormDefinition.objects.get()
    page = staff.get(reverse("admin:mcpforms_formdefinition_change", args=[definition.pk])).content.decode()
    assert "Step 2 of 5: &lt;b&gt;Passport&lt;/b&gt;" in page and "<b>Passport</b>" not in page
    assert "Asked when country is one of JP, &lt;i&gt;" in page
