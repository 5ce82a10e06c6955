"""A first round's verdict, remembered: the same question for the same arguments, Django's messages in the
language of the request, and never a handler run or a uniqueness check from memory."""

from __future__ import annotations

from typing import Any

import pytest
from django import forms
from django.utils import translation

import mcpforms
import mcpforms.verdicts as verdicts
from mcpforms.protocol.server import Server
from mcpforms.registry import register
from tests.core_client import CoreClient, accept, asked
from tests.testapp.models import Gadget

pytestmark = pytest.mark.django_db


class CountedSignupForm(forms.Form):
    """Sign up; counts how often Django cleans it."""

    email = forms.EmailField()
    plan = forms.ChoiceField(choices=[("pro", "Pro"), ("team", "Team")])
    age = forms.IntegerField(min_value=18, max_value=120, required=False)

    cleaned: list[dict[str, Any]] = []

    def clean(self) -> dict[str, Any] | None:
        type(self).cleaned.append(dict(self.data))
        return super().clean()


class NamedGadgetForm(forms.ModelForm):
    """Add a gadget; its name is unique."""

    class Meta:
        model = Gadget
        fields = ["name", "slug", "stock"]


@pytest.fixture
def client() -> CoreClient:
    verdicts.forget()  # what earlier tests' rounds left
    CountedSignupForm.cleaned = []
    server = Server(name="verdicts")

    @mcpforms.tool(CountedSignupForm, name="signup", server=server, message="Create your account")
    def signup(request, form):
        return {"email": form.cleaned_data["email"]}

    register(NamedGadgetForm, name="add_gadget", server=server)
    return CoreClient(server, over_http=True)


def message_of(result: dict[str, Any], key: str) -> str:
    return str(asked(result, key)["message"])


def test_the_same_first_round_asks_the_same_question_and_the_form_is_cleaned_once(client):
    first = client.call("signup", {"plan": "pro", "age": 12})
    again = client.call("signup", {"plan": "pro", "age": 12})
    assert asked(first, "signup")["requestedSchema"] == asked(again, "signup")["requestedSchema"]
    assert "Age (age): Ensure this value is greater than or equal to 18." in message_of(again, "signup")
    assert len(CountedSignupForm.cleaned) == 1  # the second round reused what Django said
    client.call("signup", {"plan": "team"})  # other arguments: Django judges them
    assert len(CountedSignupForm.cleaned) == 2


def test_the_messages_come_in_the_language_of_each_request(client):
    with translation.override("en"):
        english = message_of(client.call("signup", {"plan": "pro", "age": 12}), "signup")
    with translation.override("de"):
        german = message_of(client.call("signup", {"plan": "pro", "age": 12}), "signup")
    assert "greater than or equal to 18" in english
    assert "größer oder gleich 18" in german


def test_valid_arguments_are_always_bound_for_real_and_the_handler_runs_each_time(client):
    for _ in range(2):
        result = client.call("signup", {"email": "ada@example.com", "plan": "pro"})
        assert result["structuredContent"] == {"email": "ada@example.com"}
    assert len(CountedSignupForm.cleaned) == 2


def test_answers_are_judged_by_the_form_itself(client):
    client.call("signup", {"plan": "pro", "age": 12})
    first = client.call("signup", {"plan": "pro", "age": 12})
    done = client.answer(
        first, "signup", {"plan": "pro", "age": 12}, signup=accept(email="ada@example.com", age=40)
    )
    assert done["structuredContent"] == {"email": "ada@example.com"}
    assert len(CountedSignupForm.cleaned) == 2  # round one once, the answer once


def test_a_model_form_checks_uniqueness_against_the_database_every_time(client):
    Gadget.objects.create(name="Widget", slug="widget")
    taken = message_of(client.call("add_gadget", {"name": "Widget"}), "add_gadget")
    assert "Gadget with this Name already exists." in taken
    Gadget.objects.all().delete()
    free = message_of(client.call("add_gadget", {"name": "Widget"}), "add_gadget")
    assert "already exists" not in free
