"""A WizardTool on the wire: one step per round, conditions on earlier answers, the handler once."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import override_settings

from mcpforms.protocol.era2025 import shim as era2025
from mcpforms.protocol.era2025.sessions import MemorySessions
from mcpforms.protocol.server import Server
from mcpforms.registry import register, registry_for
from mcpforms.tools import RegistrationError
from mcpforms.wizards import STARTED_OVER, WizardTool
from tests.core_client import CoreClient, accept, asked, text
from tests.protocol.test_era2025 import ELICITATION, Era2025Client

pytestmark = pytest.mark.django_db  # a completed wizard records its flow


class DestinationForm(forms.Form):
    destination = forms.CharField(max_length=60)
    international = forms.BooleanField(required=False)


class PassportForm(forms.Form):
    passport_number = forms.CharField(min_length=6)


class DatesForm(forms.Form):
    start = forms.DateField()
    budget = forms.IntegerField(min_value=1)


def international(tool: WizardTool, request: Any, cleaned: Any) -> bool:
    return bool(cleaned["destination"]["international"])


class TravelRequestWizard(WizardTool):
    form_list = [("destination", DestinationForm), ("passport", PassportForm), ("dates", DatesForm)]
    condition_dict = {"passport": international}
    handled: list[list[str]] = []

    def handle(self, request, form_list, form_dict):  # type: ignore[override]
        self.handled.append(list(form_dict))
        return {name: str(value) for form in form_list for name, value in form.cleaned_data.items()}


@pytest.fixture
def client() -> CoreClient:
    TravelRequestWizard.handled = []
    server = Server()
    register(TravelRequestWizard, server=server)
    return CoreClient(server)


def step(result: dict[str, Any]) -> tuple[str, list[str]]:
    """The first line of what is asked, and the fields asked."""
    params = asked(result, "travel_request")
    return params["message"].splitlines()[0], list(params["requestedSchema"]["properties"])


def test_the_input_schema_lists_every_steps_fields_as_optional(client):
    (listed,) = client.result("tools/list")["tools"]
    assert listed["name"] == "travel_request"
    schema = listed["inputSchema"]
    assert list(schema["properties"]) == [
        "destination",
        "international",
        "passport_number",
        "start",
        "budget",
    ]
    assert "required" not in schema


def test_the_international_and_domestic_paths_ask_different_steps(client):
    first = client.call("travel_request")
    assert step(first) == ("Step 1 of at most 3: Destination", ["destination", "international"])

    abroad = client.answer(
        first, "travel_request", travel_request=accept(destination="Tokyo", international=True)
    )
    assert step(abroad) == ("Step 2 of at most 3: Passport", ["passport_number"])
    dates = client.answer(abroad, "travel_request", travel_request=accept(passport_number="X1234567"))
    assert step(dates) == ("Step 3 of at most 3: Dates", ["start", "budget"])
    done = client.answer(dates, "travel_request", travel_request=accept(start="2027-01-02", budget=900))
    assert done["structuredContent"]["passport_number"] == "X1234567"

    first = client.call("travel_request")  # another flow: the first one is done
    home = client.answer(
        first, "travel_request", travel_request=accept(destination="Oslo", international=False)
    )
    assert step(home) == ("Step 2 of at most 2: Dates", ["start", "budget"])
    done = client.answer(home, "travel_request", travel_request=accept(start="2027-01-02", budget=300))
    assert done["structuredContent"] == {
        "destination": "Oslo",
        "international": "False",
        "start": "2027-01-02",
        "budget": "300",
    }
    assert TravelRequestWizard.handled == [["destination", "passport", "dates"], ["destination", "dates"]]


def test_an_invalid_answer_asks_the_same_step_again_with_djangos_message(client):
    first = client.call("travel_request")
    dates = client.answer(first, "travel_request", travel_request=accept(destination="Oslo"))
    wrong = client.answer(dates, "travel_request", travel_request=accept(start="2027-01-02", budget=0))
    message = asked(wrong, "travel_request")["message"]
    assert message.startswith("Step 2 of at most 2: Dates\nPlease correct:")
    assert "Budget (budget): Ensure this value is greater than or equal to 1." in message
    assert step(wrong)[1] == ["budget"]  # the valid start date is kept, not asked again
    done = client.answer(wrong, "travel_request", travel_request=accept(budget=5))
    assert done["structuredContent"]["start"] == "2027-01-02"
    assert TravelRequestWizard.handled == [["destination", "dates"]]


def test_a_step_the_arguments_satisfy_is_not_asked(client):
    first = client.call("travel_request", {"destination": "Oslo", "international": False, "budget": 200})
    assert step(first) == ("Step 2 of at most 2: Dates", ["start"])
    done = client.answer(
        first,
        "travel_request",
        {"destination": "Oslo", "international": False, "budget": 200},
        travel_request=accept(start="2027-03-04"),
    )
    assert done["structuredContent"]["budget"] == "200"


def test_a_wizard_the_arguments_fill_completes_in_one_round(client):
    arguments = {"destination": "Oslo", "start": "2027-03-04", "budget": 200}
    done = client.call("travel_request", arguments)
    assert done["structuredContent"]["destination"] == "Oslo"
    assert TravelRequestWizard.handled == [["destination", "dates"]]


def test_a_tampered_or_foreign_state_is_invalid_params(client):
    first = client.call("travel_request")
    state = first["requestState"]
    tampered = state[:-3] + ("AAA" if not state.endswith("AAA") else "BBB")
    answer = {"inputResponses": {"travel_request": accept(destination="Oslo")}}
    body = client.send(
        "tools/call", {"name": "travel_request", "arguments": {}, "requestState": tampered, **answer}
    )
    assert body["error"]["code"] == -32602
    # A state of this very wizard for other arguments is another call's.
    body = client.send(
        "tools/call", {"name": "travel_request", "arguments": {"budget": 3}, "requestState": state, **answer}
    )
    assert body["error"]["code"] == -32602
    assert TravelRequestWizard.handled == []


def test_a_wizard_changed_mid_flow_starts_over(client):
    first = client.call("travel_request")
    abroad = client.answer(
        first, "travel_request", travel_request=accept(destination="Tokyo", international=True)
    )

    class ExtendedPassportForm(PassportForm):
        expires = forms.DateField()

    class TravelRequestWizardV2(TravelRequestWizard):
        name = "travel_request"
        form_list = [
            ("destination", DestinationForm),
            ("passport", ExtendedPassportForm),
            ("dates", DatesForm),
        ]

    registry_for(client.server).unregister("travel_request")
    register(TravelRequestWizardV2, server=client.server)
    again = client.answer(abroad, "travel_request", travel_request=accept(passport_number="X1234567"))
    message = asked(again, "travel_request")["message"]
    assert message.splitlines() == [STARTED_OVER, "Step 1 of at most 3: Destination"]
    assert TravelRequestWizard.handled == []


def test_more_rounds_than_max_rounds_is_a_tool_error(client):
    with override_settings(MCPFORMS={**getattr(settings, "MCPFORMS", {}), "MAX_ROUNDS": 2}):
        first = client.call("travel_request", {"destination": "Oslo"})  # round 1 asks the dates
        wrong = client.answer(
            first,
            "travel_request",
            {"destination": "Oslo"},
            travel_request=accept(start="2027-01-02", budget=0),
        )  # round 2
        over = client.answer(
            wrong, "travel_request", {"destination": "Oslo"}, travel_request=accept(budget=0)
        )
    assert over["isError"] is True
    assert "MAX_ROUNDS" in text(over)


def test_a_state_over_max_state_bytes_is_a_tool_error(client):
    with override_settings(MCPFORMS={**getattr(settings, "MCPFORMS", {}), "MAX_STATE_BYTES": 1024}):
        first = client.call("travel_request")
        long = secrets.token_urlsafe(1500)  # an invalid answer too is kept, to be corrected
        over = client.answer(
            first, "travel_request", travel_request=accept(destination=long, international=True)
        )
    assert over["isError"] is True
    assert "MAX_STATE_BYTES" in text(over)


def test_replaying_the_final_or_an_earlier_round_returns_the_recorded_outcome(client):
    first = client.call("travel_request")
    home = client.answer(first, "travel_request", travel_request=accept(destination="Oslo"))
    final = accept(start="2027-01-02", budget=300)
    done = client.answer(home, "travel_request", travel_request=final)
    assert client.answer(home, "travel_request", travel_request=final) == done
    earlier = client.answer(first, "travel_request", travel_request=accept(destination="Rome"))
    assert earlier == done
    assert TravelRequestWizard.handled == [["destination", "dates"]]


def test_declining_mid_wizard_ends_it_and_runs_nothing(client):
    first = client.call("travel_request")
    abroad = client.answer(
        first, "travel_request", travel_request=accept(destination="Tokyo", international=True)
    )
    declined = client.answer(abroad, "travel_request", travel_request={"action": "decline"})
    assert declined["isError"] is True
    assert "declined" in text(declined)
    assert TravelRequestWizard.handled == []


class ApproverForm(forms.Form):
    approver = forms.ModelChoiceField(queryset=get_user_model().objects.all())


class ReasonForm(forms.Form):
    reason = forms.CharField()


class ApprovalWizard(WizardTool):
    form_list = [("approver", ApproverForm), ("reason", ReasonForm)]


def test_a_step_that_no_longer_validates_at_the_end_is_asked_again(django_user_model):
    server = Server()
    register(ApprovalWizard, server=server)
    client = CoreClient(server)
    boss = django_user_model.objects.create(username="boss")
    first = client.call("approval")
    reason = client.answer(first, "approval", approval=accept(approver=str(boss.pk)))
    assert asked(reason, "approval")["message"] == "Step 2 of at most 2: Reason"
    boss.delete()  # between the rounds: the answer of step 1 is no longer valid
    again = client.answer(reason, "approval", approval=accept(reason="a trip"))
    params = asked(again, "approval")
    assert params["message"].startswith("Step 1 of at most 2: Approver\nPlease correct:")
    assert "Select a valid choice." in params["message"]


def test_a_2025_session_walks_the_steps_through_server_requests():
    TravelRequestWizard.handled = []
    server = Server(name="legacy", sessions=MemorySessions())
    register(TravelRequestWizard, server=server)
    client = Era2025Client(server, capabilities=ELICITATION)
    reply = client.request("tools/call", {"name": "travel_request", "arguments": {}})
    (asking,) = reply.events or ()
    answers = [{"destination": "Tokyo", "international": True}, {"passport_number": "X1234567"}]
    seen = []
    for content in answers:
        assert asking.data is not None and asking.data["method"] == "elicitation/create"
        seen.append(asking.data["params"]["message"])
        client.send(
            {"jsonrpc": "2.0", "id": asking.data["id"], "result": {"action": "accept", "content": content}}
        )
        (asking,) = era2025.resume(server, client.headers, asking.id, None, server.sessions).events or ()
    assert asking.data is not None
    seen.append(asking.data["params"]["message"])
    client.send(
        {
            "jsonrpc": "2.0",
            "id": asking.data["id"],
            "result": {"action": "accept", "content": {"start": "2027-01-02", "budget": 9}},
        }
    )
    (final,) = era2025.resume(server, client.headers, asking.id, None, server.sessions).events or ()
    assert seen == [
        "Step 1 of at most 3: Destination",
        "Step 2 of at most 3: Passport",
        "Step 3 of at most 3: Dates",
    ]
    assert final.data is not None and final.data["result"]["structuredContent"]["budget"] == "9"
    assert TravelRequestWizard.handled == [["destination", "passport", "dates"]]


class PinForm(forms.Form):
    pin = forms.CharField(widget=forms.PasswordInput)


@pytest.mark.parametrize(
    ("form_list", "complaint"),
    [
        # A formset step is allowed (tests/test_wizard_formsets.py), unless its rows hold a secret.
        ([("people", forms.formset_factory(PinForm))], "step 'people' is a formset whose rows have pin"),
        ([DestinationForm, DestinationForm], "the field 'destination' is in step '0' and step '1'"),
        ([], "must list at least one form class"),
    ],
)
def test_steps_a_wizard_cannot_ask_are_refused_at_registration(form_list, complaint):
    wizard = type("RefusedWizard", (WizardTool,), {"form_list": form_list})
    with pytest.raises(RegistrationError, match=complaint.replace("(", r"\(").replace(")", r"\)")):
        register(wizard, server=Server())


class ConfirmForm(forms.Form):
    confirmed = forms.BooleanField(label="I confirm this trip")


class ConfirmedTripWizard(WizardTool):
    form_list = [("destination", DestinationForm), ("confirmation", ConfirmForm)]
    always_ask = {"confirmation"}


def test_a_step_in_always_ask_is_asked_even_when_the_arguments_fill_it():
    server = Server()
    register(ConfirmedTripWizard, server=server)
    client = CoreClient(server)
    arguments = {"destination": "Oslo", "confirmed": True}
    first = client.call("confirmed_trip", arguments)
    params = asked(first, "confirmed_trip")
    assert params["message"] == "Step 2 of at most 2: Confirmation"
    assert params["requestedSchema"]["properties"]["confirmed"]["default"] is True  # prefilled, not given
    refused = client.answer(first, "confirmed_trip", arguments, confirmed_trip=accept(confirmed=False))
    again = asked(refused, "confirmed_trip")["message"]
    assert "I confirm this trip (confirmed): This field is required." in again
    done = client.answer(refused, "confirmed_trip", arguments, confirmed_trip=accept(confirmed=True))
    assert done["structuredContent"] == {"destination": "Oslo", "international": False, "confirmed": True}


def test_a_client_that_cannot_ask_gets_an_error_for_a_step_the_user_must_answer():
    server = Server()
    register(ConfirmedTripWizard, server=server)
    client = CoreClient(server, capabilities={})
    result = client.call("confirmed_trip", {"destination": "Oslo", "confirmed": True})
    assert result["isError"] is True
    assert text(result).startswith(
        "Step 'confirmation' (Confirmation) of the Confirmed trip form is answered"
    )


def test_always_ask_must_name_steps():
    class Typo(WizardTool):
        form_list = [("destination", DestinationForm)]
        always_ask = {"confirm"}

    with pytest.raises(RegistrationError, match=r"Typo.always_ask names no step confirm"):
        register(Typo, server=Server())
