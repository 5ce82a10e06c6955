"""A WizardTool in an MCP Apps host, on the wire: the call shows a step as the form UI, the App's submit
tool goes on (Next) or back (Back), the conditions decided on the server, the handler run once."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django import forms
from django.conf import settings
from django.test import override_settings

from mcpforms.protocol.context import tool_binding
from mcpforms.protocol.server import Server
from mcpforms.protocol.state import ANONYMOUS, dump_state
from mcpforms.registry import register, registry_for
from mcpforms.ui import STEP_BACK, STEP_STATE
from mcpforms.wizards import STARTED_OVER, WizardTool
from tests.core_client import APPS, ELICITATION, CoreClient, asked, assert_unknown_tool, text
from tests.test_wizards import DatesForm, DestinationForm, PassportForm, international

pytestmark = pytest.mark.django_db  # a completed wizard records its flow


class TripWizard(WizardTool):
    form_list = [("destination", DestinationForm), ("passport", PassportForm), ("dates", DatesForm)]
    condition_dict = {"passport": international}
    handled: list[list[str]] = []

    def handle(self, request, form_list, form_dict):  # type: ignore[override]
        self.handled.append(list(form_dict))
        return {name: str(value) for form in form_list for name, value in form.cleaned_data.items()}


class OtherWizard(TripWizard):
    name = "other_trip"


@pytest.fixture
def server() -> Server:
    TripWizard.handled = []
    server = Server()
    register(TripWizard, server=server)
    return server


@pytest.fixture
def host(server: Server) -> CoreClient:
    """A host that renders MCP Apps (and declares nothing else)."""
    return CoreClient(server, capabilities=APPS)


def step(result: dict[str, Any]) -> dict[str, Any]:
    """The step a result shows, after checking it is the form UI of the trip wizard."""
    assert not result.get("isError"), result
    content = result["structuredContent"]
    assert content["form"] == "trip" and content["submit"] == "trip_submit"
    assert result["_meta"]["ui"]["resourceUri"] == "ui://mcpforms/trip"
    assert isinstance(content[STEP_STATE], str)
    shown: dict[str, Any] = content["step"]
    return shown


def fields(result: dict[str, Any]) -> list[str]:
    return [field["name"] for field in result["structuredContent"]["fields"]]


def submit(host: CoreClient, shown: dict[str, Any], **values: Any) -> dict[str, Any]:
    """The App's Next: the shown step's values and the state it was shown with."""
    return host.call("trip_submit", {**values, STEP_STATE: shown["structuredContent"][STEP_STATE]})


def back(host: CoreClient, shown: dict[str, Any], **values: Any) -> dict[str, Any]:
    state = shown["structuredContent"][STEP_STATE]
    return host.call("trip_submit", {**values, STEP_STATE: state, STEP_BACK: True})


def test_an_apps_host_lists_the_wizard_with_its_ui_and_the_app_only_submit_tool(host):
    listed = {tool["name"]: tool for tool in host.result("tools/list")["tools"]}
    assert list(listed) == ["trip", "trip_submit"]
    assert listed["trip"]["_meta"]["ui"] == {"resourceUri": "ui://mcpforms/trip"}
    assert listed["trip_submit"]["_meta"]["ui"]["visibility"] == ["app"]
    schema = listed["trip_submit"]["inputSchema"]
    assert schema["required"] == [STEP_STATE]
    assert {"destination", "passport_number", "budget", STEP_STATE, STEP_BACK} <= set(schema["properties"])


def test_the_call_shows_the_first_step_as_the_form_ui(host):
    first = host.call("trip")
    assert step(first) == {
        "name": "destination",
        "title": "Destination",
        "k": 1,
        "at_most": 3,
        "can_go_back": False,
    }
    assert fields(first) == ["destination", "international"]
    assert first["structuredContent"]["values"] == {}
    assert first["structuredContent"]["errors"] == {}
    assert text(first).startswith("Trip, step 1 of at most 3: Destination: the form is shown to the user")


def test_an_invalid_step_is_an_error_per_field_and_the_step_stays(host):
    first = host.call("trip")
    wrong = submit(host, first, destination="x" * 61)
    assert wrong["isError"] is True
    assert wrong["structuredContent"] == {
        "errors": {"destination": ["Ensure this value has at most 60 characters (it has 61)."]}
    }
    assert text(wrong).startswith("Step 1 of at most 3: Destination\nPlease correct:")
    missing = submit(host, first)
    assert missing["structuredContent"]["errors"] == {"destination": ["This field is required."]}
    # The state of the shown step still stands: the corrected step goes on.
    assert step(submit(host, first, destination="Oslo"))["name"] == "dates"
    assert TripWizard.handled == []


def test_next_shows_the_step_the_answers_make_active(host):
    first = host.call("trip")
    abroad = submit(host, first, destination="Tokyo", international=True)
    assert step(abroad) == {
        "name": "passport",
        "title": "Passport",
        "k": 2,
        "at_most": 3,
        "can_go_back": True,
    }
    assert fields(abroad) == ["passport_number"]
    dates = submit(host, abroad, passport_number="X1234567")
    assert step(dates) == {"name": "dates", "title": "Dates", "k": 3, "at_most": 3, "can_go_back": True}


def test_back_shows_the_step_before_with_its_answers(host):
    first = host.call("trip")
    abroad = submit(host, first, destination="Tokyo", international=True)
    again = back(host, abroad, passport_number="X12")  # typed, not valid yet: kept for the way back
    assert step(again) == {
        "name": "destination",
        "title": "Destination",
        "k": 1,
        "at_most": 3,
        "can_go_back": False,
    }
    assert again["structuredContent"]["values"] == {"destination": "Tokyo", "international": True}
    passport = submit(host, again, destination="Tokyo", international=True)
    assert step(passport)["name"] == "passport"
    assert passport["structuredContent"]["values"] == {"passport_number": "X12"}
    assert TripWizard.handled == []


def test_on_again_after_back_each_step_the_user_saw_is_shown_again_though_it_is_valid(host):
    first = host.call("trip")
    abroad = submit(host, first, destination="Tokyo", international=True)
    dates = submit(host, abroad, passport_number="X1234567")
    passport = back(host, dates)
    assert passport["structuredContent"]["values"] == {"passport_number": "X1234567"}
    destination = back(host, passport, passport_number="X1234567")  # as the App sends the shown step
    assert step(destination)["name"] == "destination"
    passport = submit(host, destination, destination="Tokyo", international=True)
    assert step(passport) == {
        "name": "passport",
        "title": "Passport",
        "k": 2,
        "at_most": 3,
        "can_go_back": True,
    }
    assert passport["structuredContent"]["values"] == {"passport_number": "X1234567"}
    assert step(submit(host, passport, passport_number="X1234567"))["name"] == "dates"
    assert TripWizard.handled == []


def test_an_answer_changed_after_back_switches_the_condition(host):
    first = host.call("trip")
    abroad = submit(host, first, destination="Tokyo", international=True)
    dates = submit(host, abroad, passport_number="X1234567")
    passport = back(host, dates, budget=50)
    assert step(passport)["name"] == "passport"
    destination = back(host, passport, passport_number="X1234567")
    assert step(destination)["k"] == 1
    # Staying at home: the passport step no longer applies, and the dates step comes second of two.
    home = submit(host, destination, destination="Oslo")
    assert step(home) == {"name": "dates", "title": "Dates", "k": 2, "at_most": 2, "can_go_back": True}
    assert home["structuredContent"]["values"] == {"budget": 50}  # what was typed there before
    done = submit(host, home, start="2027-01-02", budget=300)
    assert "isError" not in done
    assert done["structuredContent"] == {
        "destination": "Oslo",
        "international": "False",
        "start": "2027-01-02",
        "budget": "300",
    }
    assert TripWizard.handled == [["destination", "dates"]]
    # And back from the dates of a domestic trip is the destination, the passport step skipped.
    first = host.call("trip")
    home = submit(host, first, destination="Oslo")
    assert step(back(host, home))["name"] == "destination"


def test_the_final_submit_runs_the_handler_once_and_a_replay_gets_its_outcome(host):
    first = host.call("trip")
    home = submit(host, first, destination="Oslo")
    done = submit(host, home, start="2027-01-02", budget=300)
    assert done["structuredContent"]["budget"] == "300"
    assert submit(host, home, start="2027-01-02", budget=300) == done  # the final submit again
    assert submit(host, home, start="2028-01-02", budget=1) == done  # other values: the same flow
    assert submit(host, first, destination="Rome") == done  # an earlier step of the flow
    assert back(host, home) == done
    assert TripWizard.handled == [["destination", "dates"]]


def test_a_tampered_or_foreign_state_is_invalid_params(server, host, django_user_model):
    register(OtherWizard, server=server)
    first = host.call("trip")
    state = first["structuredContent"][STEP_STATE]
    tampered = state[:-3] + ("AAA" if not state.endswith("AAA") else "BBB")
    invalid = {"code": -32602, "message": "Invalid or expired requestState"}

    def sent(name: str, token: Any, client: CoreClient = host) -> dict[str, Any]:
        body = client.send(
            "tools/call", {"name": name, "arguments": {"destination": "Oslo", STEP_STATE: token}}
        )
        return body

    assert sent("trip_submit", tampered)["error"] == invalid | {"data": {"reason": "invalid_request_state"}}
    assert sent("other_trip_submit", state)["error"]["code"] == -32602  # another wizard's
    signed_in = CoreClient(server, capabilities=APPS, user=django_user_model.objects.create(username="ada"))
    assert sent("trip_submit", state, signed_in)["error"]["code"] == -32602  # another principal's
    assert sent("trip_submit", 12)["error"]["code"] == -32602
    # The requestState of the rounds (a client that elicits) is not the App's.
    rounds = CoreClient(server).call("trip")
    assert sent("trip_submit", rounds["requestState"])["error"]["code"] == -32602
    missing = host.call("trip_submit", {"destination": "Oslo"})
    assert missing["isError"] is True
    assert f"{STEP_STATE} is missing" in text(missing)
    assert TripWizard.handled == []


def test_a_client_without_apps_neither_lists_nor_calls_the_submit_tool(server):
    plain = CoreClient(server, capabilities=ELICITATION)
    listed = plain.result("tools/list")["tools"]
    assert [tool["name"] for tool in listed] == ["trip"]
    state = CoreClient(server, capabilities=APPS).call("trip")["structuredContent"][STEP_STATE]
    body = plain.send("tools/call", {"name": "trip_submit", "arguments": {STEP_STATE: state}})
    assert body["error"] == {"code": -32602, "message": "Unknown tool: trip_submit"}
    # Its call walks the steps by form elicitation instead.
    assert asked(plain.call("trip"), "trip")["message"] == "Step 1 of at most 3: Destination"


def test_a_host_with_apps_and_form_elicitation_gets_the_app_as_a_form_tool_does(server):
    both = CoreClient(server, capabilities=APPS | ELICITATION)
    assert step(both.call("trip"))["name"] == "destination"


def test_the_models_arguments_skip_a_step_they_satisfy_and_prefill_the_later_ones(host):
    first = host.call("trip", {"destination": "Oslo", "budget": 40})
    assert step(first) == {"name": "dates", "title": "Dates", "k": 2, "at_most": 2, "can_go_back": True}
    assert first["structuredContent"]["values"] == {"budget": 40}
    destination = back(host, first, start="2027-05-06")
    assert destination["structuredContent"]["values"] == {"destination": "Oslo"}
    dates = submit(host, destination, destination="Oslo")
    assert dates["structuredContent"]["values"] == {"start": "2027-05-06"}  # the user's, not the model's

    # The model's arguments for a step further on prefill it when the user gets there.
    first = host.call("trip", {"budget": 40})
    assert step(first)["name"] == "destination"
    assert submit(host, first, destination="Oslo")["structuredContent"]["values"] == {"budget": 40}

    # A step the arguments fill with an invalid value shows Django's message for it.
    wrong = host.call("trip", {"destination": "Oslo", "budget": 0})
    assert wrong["structuredContent"]["errors"] == {
        "budget": ["Ensure this value is greater than or equal to 1."]
    }


def test_a_wizard_the_arguments_fill_completes_in_the_call(host):
    done = host.call("trip", {"destination": "Oslo", "start": "2027-03-04", "budget": 200})
    assert done["structuredContent"]["budget"] == "200"
    assert TripWizard.handled == [["destination", "dates"]]


def test_a_wizard_changed_mid_flow_starts_over_from_the_first_step(server, host):
    first = host.call("trip")
    abroad = submit(host, first, destination="Tokyo", international=True)

    class LongerPassportForm(PassportForm):
        expires = forms.DateField()

    class TripWizardV2(TripWizard):
        name = "trip"
        form_list = [("destination", DestinationForm), ("passport", LongerPassportForm), ("dates", DatesForm)]

    registry_for(server).unregister("trip")
    register(TripWizardV2, server=server)
    again = submit(host, abroad, passport_number="X1234567")
    assert step(again)["name"] == "destination"
    assert again["structuredContent"]["notice"] == STARTED_OVER
    assert again["structuredContent"]["values"] == {}
    assert TripWizard.handled == []


def test_each_step_shown_counts_against_max_rounds(host):
    with override_settings(MCPFORMS={**getattr(settings, "MCPFORMS", {}), "MAX_ROUNDS": 2}):
        first = host.call("trip")  # round 1
        abroad = submit(host, first, destination="Tokyo", international=True)  # round 2
        over = back(host, abroad)
    assert over["isError"] is True
    assert "MAX_ROUNDS" in text(over)


def test_the_ui_resource_holds_every_step_and_shows_the_first(host):
    (content,) = host.result("resources/read", {"uri": "ui://mcpforms/trip"})["contents"]
    assert content["mimeType"] == "text/html;profile=mcp-app"
    html = content["text"]
    sections = re.findall(r'<section class="step" data-step="(\w+)"[^>]*?( hidden)?>', html)
    assert sections == [("destination", ""), ("passport", " hidden"), ("dates", " hidden")]
    assert 'id="mcpforms-back" hidden>Back</button>' in html
    assert '"submit": "trip_submit"' in html
    assert f'"state": "{STEP_STATE}"' in html and f'"back": "{STEP_BACK}"' in html
    for name in ("id_destination", "id_passport_number", "id_start", "id_budget"):
        assert f'id="{name}"' in html


class ConfirmedTripWizard(TripWizard):
    """A trip whose dates the user answers themselves: the model's arguments only prefill them."""

    name = "confirmed_trip"
    always_ask = {"dates"}


FILLED = {"destination": "Oslo", "start": "2027-01-02", "budget": 300}


def test_a_wizard_with_a_step_the_user_must_answer_has_no_app_and_no_submit_tool(server):
    register(ConfirmedTripWizard, server=server)
    host = CoreClient(server, capabilities=APPS | ELICITATION)
    listed = {tool["name"]: tool for tool in host.result("tools/list")["tools"]}
    # The App's submit tool is one any caller may call, the model included: it cannot confirm for the user.
    assert "confirmed_trip_submit" not in listed
    assert "ui" not in listed["confirmed_trip"].get("_meta", {})
    assert_unknown_tool(host, "confirmed_trip_submit", {**FILLED, STEP_STATE: "x"})
    read = host.send("resources/read", {"uri": "ui://mcpforms/confirmed_trip"})
    assert read["error"] == {
        "code": -32602,
        "message": "Resource not found",
        "data": {"uri": "ui://mcpforms/confirmed_trip"},
    }
    # The user answers the step in a form elicitation, prefilled with the model's arguments.
    first = host.call("confirmed_trip", FILLED)
    params = asked(first, "confirmed_trip")
    assert params["message"] == "Step 2 of at most 2: Dates"
    assert params["requestedSchema"]["properties"]["budget"]["default"] == 300
    done = host.answer(
        first,
        "confirmed_trip",
        FILLED,
        confirmed_trip={"action": "accept", "content": {"start": "2027-01-02", "budget": 250}},
    )
    assert done["structuredContent"]["budget"] == "250"
    assert TripWizard.handled == [["destination", "dates"]]


def test_a_signed_state_whose_pending_step_the_wizard_has_not_is_walked_from_the_start(server, host):
    # Only a key holder can sign one (a state of another kind, or of an older wizard whose steps were
    # renamed); what it names is no step, and the walk starts from the answers it proves.
    tool = registry_for(server).form_tool("trip")
    assert isinstance(tool, TripWizard)

    def signed(binding: str) -> str:
        return dump_state(
            server=server.key,
            tool=binding,
            arguments={},
            principal=ANONYMOUS,
            answers={},
            pending=["international", "destination"],
            version=tool.digest,
        )

    shown = host.call("trip_submit", {"destination": "Oslo", STEP_STATE: signed("app:trip")})
    assert step(shown)["name"] == "destination"
    # The rounds read the same pending list: asked again from the first step, never a crash.
    rounds = CoreClient(server).call("trip", requestState=signed(tool_binding("trip")))
    assert asked(rounds, "trip")["requestedSchema"]["properties"].keys() >= {"destination"}
