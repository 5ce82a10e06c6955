"""An existing django-formtools view, registered as it is with ``register_wizard``, on the wire: its
conditions (written for formtools, on the view) pick the steps, and its ``done()`` becomes the result."""

from __future__ import annotations

import importlib.metadata
from typing import Any

import pytest
from django import forms
from django.conf import settings
from django.http import HttpResponse, HttpResponseRedirect
from django.test import override_settings
from formtools.wizard.views import SessionWizardView

from mcpforms.protocol.server import Server
from mcpforms.registry import register_wizard, registry_for
from mcpforms.tools import RegistrationError
from mcpforms.wizards import WizardTool
from tests.core_client import CoreClient, accept, asked, text

pytestmark = pytest.mark.django_db  # a completed wizard records its flow


class TripForm(forms.Form):
    destination = forms.CharField(max_length=60)
    international = forms.BooleanField(required=False)


class PassportForm(forms.Form):
    passport_number = forms.CharField(min_length=6)


class BudgetForm(forms.Form):
    budget = forms.IntegerField(min_value=1)

    def __init__(self, *args: Any, currency: str = "EUR", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["budget"].label = f"Budget ({currency})"


def goes_abroad(wizard: SessionWizardView) -> bool:
    """A condition as formtools' documentation writes one: on the view, from an earlier step."""
    trip = wizard.get_cleaned_data_for_step("trip") or {}
    return bool(trip.get("international"))


class TravelWizard(SessionWizardView):  # type: ignore[misc]  # formtools is untyped
    """Request a business trip."""

    form_list = [("trip", TripForm), ("passport", PassportForm), ("budget", BudgetForm)]
    condition_dict = {"passport": goes_abroad}
    done_with: list[tuple[str, list[str], dict[str, Any]]] = []

    def get_form_kwargs(self, step: str | None = None) -> dict[str, Any]:
        if step == "budget":  # a hook that reads an earlier step, as formtools' hooks do
            abroad = (self.get_cleaned_data_for_step("trip") or {}).get("international")
            return {"currency": "USD" if abroad else "EUR"}
        return {}

    def get_form_initial(self, step: str) -> dict[str, Any]:
        return {"destination": "Oslo"} if step == "trip" else {}

    def done(self, form_list: Any, form_dict: Any = None, **kwargs: Any) -> HttpResponse:
        self.done_with.append((self.request.user.username, list(form_dict), self.get_all_cleaned_data()))
        return HttpResponseRedirect(f"/trips/{len(self.done_with)}/")


@pytest.fixture
def client(django_user_model: Any) -> CoreClient:
    TravelWizard.done_with = []
    server = Server()
    register_wizard(TravelWizard, server=server)
    user = django_user_model.objects.create(username="ada")
    return CoreClient(server, user=user)


def step(result: dict[str, Any], name: str = "travel") -> tuple[str, dict[str, Any]]:
    params = asked(result, name)
    return params["message"].splitlines()[0], params["requestedSchema"]["properties"]


def test_the_view_is_the_tool_its_name_and_docstring_say(client):
    (listed,) = client.result("tools/list")["tools"]
    assert listed["name"] == "travel"
    assert listed["description"].startswith("Request a business trip.")
    assert list(listed["inputSchema"]["properties"]) == [
        "destination",
        "international",
        "passport_number",
        "budget",
    ]


def test_the_views_condition_picks_the_steps_on_both_paths(client):
    first = client.call("travel")
    message, fields = step(first)
    assert message == "Step 1 of at most 3: Trip"
    assert fields["destination"]["default"] == "Oslo"  # the view's get_form_initial

    abroad = client.answer(first, "travel", travel=accept(destination="Tokyo", international=True))
    assert step(abroad)[0] == "Step 2 of at most 3: Passport"
    budget = client.answer(abroad, "travel", travel=accept(passport_number="X1234567"))
    message, fields = step(budget)
    assert message == "Step 3 of at most 3: Budget"
    assert fields["budget"]["title"] == "Budget (USD)"  # the view's get_form_kwargs saw the trip step
    done = client.answer(budget, "travel", travel=accept(budget=900))
    assert text(done) == "Done.\n/trips/1/"  # no BASE_URL: the path as done() gave it

    first = client.call("travel")
    home = client.answer(first, "travel", travel=accept(destination="Oslo"))
    message, fields = step(home)
    assert message == "Step 2 of at most 2: Budget"
    assert fields["budget"]["title"] == "Budget (EUR)"
    client.answer(home, "travel", travel=accept(budget=300))

    assert TravelWizard.done_with == [
        (
            "ada",
            ["trip", "passport", "budget"],
            {"destination": "Tokyo", "international": True, "passport_number": "X1234567", "budget": 900},
        ),
        ("ada", ["trip", "budget"], {"destination": "Oslo", "international": False, "budget": 300}),
    ]


def test_a_redirect_from_done_is_done_and_the_absolute_url(client):
    with override_settings(
        MCPFORMS={**getattr(settings, "MCPFORMS", {}), "BASE_URL": "https://forms.example.com"}
    ):
        done = client.call("travel", {"destination": "Oslo", "budget": 5})
    assert done.get("isError") is not True
    assert text(done) == "Done.\nhttps://forms.example.com/trips/1/"


class ReceiptWizard(TravelWizard):
    def done(self, form_list: Any, form_dict: Any = None, **kwargs: Any) -> HttpResponse:
        return HttpResponse(f"Trip to {form_dict['trip'].cleaned_data['destination']} booked.")


def test_a_response_from_done_is_its_text():
    server = Server()
    register_wizard(ReceiptWizard, server=server)
    done = CoreClient(server).call("receipt", {"destination": "Rome", "budget": 5})
    assert text(done) == "Trip to Rome booked."


def test_a_handle_option_wins_over_done(client):
    def handle(request: Any, form_list: list[forms.BaseForm], form_dict: dict[str, forms.BaseForm]) -> Any:
        return {"steps": list(form_dict), "budget": form_dict["budget"].cleaned_data["budget"]}

    register_wizard(TravelWizard, server=client.server, name="travel_handled", handle=handle)
    done = client.call("travel_handled", {"destination": "Oslo", "budget": 7})
    assert done["structuredContent"] == {"steps": ["trip", "budget"], "budget": 7}
    assert TravelWizard.done_with == []


class ScanForm(forms.Form):
    scan = forms.FileField()


class UploadWizard(SessionWizardView):  # type: ignore[misc]
    form_list = [TripForm, ScanForm]


def test_a_file_step_registers_and_an_unknown_option_is_refused():
    server = Server()
    register_wizard(UploadWizard, server=server)  # its file step is filled on the URL-mode page
    assert registry_for(server).form_tool("upload") is not None
    with pytest.raises(RegistrationError, match="Unknown option"):
        register_wizard(TravelWizard, server=Server(), ask="always")


def test_a_wizard_with_more_steps_than_max_rounds_is_warned(client):
    (tool,) = [registry_for(client.server).form_tool("travel")]
    assert tool is not None
    assert [m.id for m in tool.check()] == []
    with override_settings(MCPFORMS={**getattr(settings, "MCPFORMS", {}), "MAX_ROUNDS": 2}):
        (warning,) = tool.check()
    assert warning.id == "mcpforms.W413"
    assert "3 steps" in warning.msg
    assert not warning.is_serious()  # still served: the arguments may fill steps


def test_options_a_wizard_does_not_act_on_are_an_error():
    class Refund(WizardTool):
        form_list = [TripForm]
        ask = "always"
        background = True

    (error,) = [m for m in Refund().check() if m.id == "mcpforms.E414"]
    assert "ask='always', background=True" in error.msg


@pytest.mark.parametrize(
    ("installed", "found"),
    [
        ("2.6.1", "django-formtools 2.6.1 is installed"),
        (None, "django-formtools is not installed"),
    ],
)
def test_a_view_wizard_without_formtools_27_is_an_error(client, monkeypatch, installed, found):
    tool = registry_for(client.server).form_tool("travel")
    assert tool is not None
    real_version = importlib.metadata.version

    def version(distribution: str) -> str:
        if distribution != "django-formtools":
            return real_version(distribution)
        if installed is None:
            raise importlib.metadata.PackageNotFoundError(distribution)
        return str(installed)

    monkeypatch.setattr(importlib.metadata, "version", version)
    (error,) = [m for m in tool.check() if m.id == "mcpforms.E415"]
    assert f"{found}; mcpforms needs 2.7 or later" in error.msg
    assert error.hint == (
        'python -m pip install "path/to/mcpforms[wizards]" (from mcpforms\' checkout: not on PyPI yet)'
    )
    monkeypatch.setattr(importlib.metadata, "version", lambda distribution: "2.7.0")
    assert [m.id for m in tool.check()] == []
