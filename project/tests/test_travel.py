"""The demo's multi-step tool, ``travel_request``: one step per round, the passport step only on the
international path, a confirmation last, and one stored request at the end."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings

from mcpforms.protocol.server import default_server
from project.demo.models import TravelRequest
from project.tests.test_demo import cards, config
from tests.core_client import ELICITATION, CoreClient, accept, asked, text

pytestmark = pytest.mark.django_db

DATES = {"departure": "2027-03-01", "return_date": "2027-03-08", "budget": "1800.00"}


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


def test_the_return_cannot_come_before_the_departure(staff):
    client = CoreClient(default_server, capabilities=ELICITATION, user=staff)
    result = client.call("travel_request", {"destination": "Bergen", **DATES, "return_date": "2027-02-01"})
    message = asked(result, "travel_request")["message"]
    assert message.startswith("Step 2 of at most 3: Dates and budget\nPlease correct:")
    assert "The return date cannot be before the departure." in message


def test_the_home_page_shows_the_wizard_with_its_steps_and_every_steps_fields(staff):
    client = Client()
    client.force_login(staff)
    with override_settings(MCPFORMS={"ALLOW_ANONYMOUS": ["signup"]}):
        page = client.get("/").content.decode()
    card = cards(page)["travel_request"]
    assert '<li class="badge badge-steps">Multi-step</li>' in card
    assert "This form can not be shown" not in card and "cannot be shown" not in card
    steps = [line.strip() for line in card.split('<legend class="step-title">')[1:]]
    assert [step.split("</legend>")[0] for step in steps] == [
        "Step 1: Destination",
        "Step 2: Passport (asked only when an earlier answer calls for it)",
        "Step 3: Dates and budget",
        "Step 4: Confirmation",
    ]
    fields = [entry["name"] for entry in config(page)["tools"]["travel_request"]["fields"]]
    assert fields == [
        "destination",
        "international",
        "passport_number",
        "passport_expiry",
        "departure",
        "return_date",
        "budget",
        "confirmed",
    ]


def test_the_home_pages_one_call_with_every_step_runs_the_wizard_and_names_a_missing_field(staff):
    # The page declares URL-mode elicitation only, so nothing is asked: each step is judged on the arguments.
    client = CoreClient(default_server, capabilities={"elicitation": {"url": {}}}, user=staff)
    abroad = client.call("travel_request", {"destination": "Tokyo", "international": True, **DATES})
    assert abroad["isError"]
    assert "- Passport number (passport_number): This field is required." in text(abroad)
    everything = {"destination": "Bergen", **DATES, "confirmed": True, "passport_number": "X1234567"}
    done = client.call("travel_request", everything)
    assert not done.get("isError"), done
    (travel,) = TravelRequest.objects.all()
    assert (travel.destination, travel.passport_number) == (
        "Bergen",
        "",
    )  # a skipped step's fields are not kept
