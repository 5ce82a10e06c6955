"""The demo's multi-step tool, ``travel_request``: one step per round, the passport step only on the
international path, a confirmation last, and one stored request at the end."""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings

from mcpforms.protocol.server import default_server
from project.demo.models import TravelRequest
from project.tests.test_demo import cards, config
from tests.core_client import APPS, ELICITATION, CoreClient, accept, asked, text

pytestmark = pytest.mark.django_db

DATES = {"departure": "2027-03-01", "return_date": "2027-03-08", "budget": "1800.00"}
PASSPORT = {"passport_number": "X1234567", "passport_expiry": "2030-05-31"}


@pytest.fixture
def staff() -> User:
    return User.objects.create_superuser("staff", "staff@example.com", "mcpforms-demo")


def walk(client: CoreClient, destination: Mapping[str, object], *answers: Mapping[str, object]) -> list[str]:
    """Call ``travel_request`` with nothing, answer each step in turn; the messages of the steps asked."""
    result = client.call("travel_request", {})
    messages = []
    for answer in (destination, *answers):
        messages.append(asked(result, "travel_request")["message"])
        result = client.answer(result, "travel_request", travel_request=accept(**answer))
    assert result.get("resultType") != "input_required", result
    assert not result.get("isError"), result
    messages.append(text(result))
    return messages


def test_the_international_path_asks_the_passport_step_and_ends_with_the_confirmation(staff):
    client = CoreClient(default_server, capabilities=ELICITATION, user=staff)
    passport = {"passport_number": "X1234567", "passport_expiry": "2030-05-31"}
    messages = walk(
        client, {"destination": "Tokyo", "international": True}, passport, DATES, {"confirmed": True}
    )
    assert messages[:4] == [
        "Step 1 of at most 4: Destination",
        "Step 2 of at most 4: Passport",
        "Step 3 of at most 4: Dates and budget",
        "Step 4 of at most 4: Confirmation",
    ]
    (travel,) = TravelRequest.objects.all()
    assert (travel.destination, travel.international, travel.passport_number) == ("Tokyo", True, "X1234567")
    assert (str(travel.departure), str(travel.return_date), travel.budget) == (
        "2027-03-01",
        "2027-03-08",
        Decimal("1800.00"),
    )
    assert travel.requested_by == staff
    assert messages[4] == f"Travel request #{travel.pk} to Tokyo, 2027-03-01 to 2027-03-08, is recorded."


def test_the_domestic_path_skips_the_passport_step(staff):
    client = CoreClient(default_server, capabilities=ELICITATION, user=staff)
    messages = walk(client, {"destination": "Bergen", "international": False}, DATES, {"confirmed": True})
    assert messages[:3] == [
        "Step 1 of at most 4: Destination",
        "Step 2 of at most 3: Dates and budget",
        "Step 3 of at most 3: Confirmation",
    ]
    (travel,) = TravelRequest.objects.all()
    assert (travel.destination, travel.international, travel.passport_number) == ("Bergen", False, "")
    assert travel.passport_expiry is None


def test_nothing_is_stored_until_the_user_confirms(staff):
    client = CoreClient(default_server, capabilities=ELICITATION, user=staff)
    arguments = {"destination": "Bergen", **DATES}  # the model passed all but the confirmation
    result = client.call("travel_request", arguments)
    confirm = asked(result, "travel_request")
    assert confirm["message"] == "Step 3 of at most 3: Confirmation"
    assert list(confirm["requestedSchema"]["properties"]) == ["confirmed"]
    again = client.answer(result, "travel_request", arguments, travel_request=accept(confirmed=False))
    assert asked(again, "travel_request")["message"].startswith("Step 3 of at most 3: Confirmation\n")
    assert TravelRequest.objects.count() == 0


def test_an_apps_host_gets_no_app_whose_submit_tool_could_confirm_for_the_user(staff):
    # The App's submit tool is one the model may call too: a wizard with a step the user answers
    # themselves is asked by form elicitation (or on the URL-mode page) instead.
    host = CoreClient(default_server, capabilities=APPS | ELICITATION, user=staff)
    listed = {tool["name"]: tool for tool in host.result("tools/list")["tools"]}
    assert "travel_request_submit" not in listed
    assert "ui" not in listed["travel_request"].get("_meta", {})
    arguments = {"destination": "Bergen", **DATES, "confirmed": True}
    confirm = asked(host.call("travel_request", arguments), "travel_request")
    assert confirm["message"] == "Step 3 of at most 3: Confirmation"
    assert TravelRequest.objects.count() == 0


def test_the_return_cannot_come_before_the_departure(staff):
    client = CoreClient(default_server, capabilities=ELICITATION, user=staff)
    result = client.call("travel_request", {"destination": "Bergen", **DATES, "return_date": "2027-02-01"})
    message = asked(result, "travel_request")["message"]
    assert message.startswith("Step 2 of at most 3: Dates and budget\nPlease correct:")
    assert "The return date cannot be before the departure." in message


def home_page(user: User) -> str:
    client = Client()
    client.force_login(user)
    with override_settings(MCPFORMS={"ALLOW_ANONYMOUS": ["signup"]}):
        return client.get("/").content.decode()


def test_the_home_page_lists_the_steps_and_keeps_each_steps_fields_until_the_tool_asks_for_it(staff):
    page = home_page(staff)
    card = cards(page)["travel_request"]
    assert '<li class="badge badge-steps">Multi-step</li>' in card
    assert "cannot be shown" not in card
    step_item = r'<li data-step="(\w+)"><span class="wizard-step-title">([^<]+)</span>([^\n]*)'
    overview = re.findall(step_item, card)
    assert [(step, title, "earlier answer" in note) for step, title, note in overview] == [
        ("destination", "Destination", False),
        ("passport", "Passport", True),
        ("dates_and_budget", "Dates and budget", False),
        ("confirmation", "Confirmation", False),
    ]
    # Every step's fields are on the page, hidden: the page's script shows the one step each round asks.
    fieldsets = re.findall(r'<fieldset class="wizard-step" data-step="(\w+)" hidden>', card)
    assert fieldsets == ["destination", "passport", "dates_and_budget", "confirmation"]
    walk = config(page)["tools"]["travel_request"]
    assert walk["steps"] == [
        {"name": "destination", "fields": ["destination", "international"]},
        {"name": "passport", "fields": ["passport_number", "passport_expiry"]},
        {"name": "dates_and_budget", "fields": ["departure", "return_date", "budget"]},
        {"name": "confirmation", "fields": ["confirmed"]},
    ]
    assert walk["arguments"] == []  # nothing but hidden fields is passed as arguments: the user answers
    every_steps_fields = [name for step in walk["steps"] for name in step["fields"]]
    assert [entry["name"] for entry in walk["fields"]] == every_steps_fields


def test_each_step_the_tool_asks_the_home_pages_call_is_one_step_of_its_card(staff):
    card = config(home_page(staff))["tools"]["travel_request"]
    steps = {tuple(step["fields"]): step["name"] for step in card["steps"]}
    # What the page's script declares: it can show a step (form) or open a URL-mode page.
    client = CoreClient(default_server, capabilities={"elicitation": {"form": {}, "url": {}}}, user=staff)
    answers: list[Mapping[str, object]] = [
        {"destination": "Tokyo", "international": True},
        PASSPORT,
        DATES,
        {"confirmed": True},
    ]
    result = client.call("travel_request", {})
    shown = []
    for answer in answers:
        shown.append(steps[tuple(asked(result, "travel_request")["requestedSchema"]["properties"])])
        result = client.answer(result, "travel_request", travel_request=accept(**answer))
    assert shown == ["destination", "passport", "dates_and_budget", "confirmation"]
    assert text(result).startswith("Travel request #")
