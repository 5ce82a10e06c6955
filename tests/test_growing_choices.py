"""A ``ModelChoiceField`` whose queryset outgrows ``MAX_MODEL_CHOICES`` — growth users can drive, by
signing up — never breaks its tool: the field becomes a plain string the model passes (the pk), the real
form still validates it, and the developer reads one warning in the log."""

from __future__ import annotations

import itertools
import logging
from typing import Any

import pytest
from django import forms
from django.test import override_settings

import mcpforms.fields as fields
from mcpforms.protocol.server import Server
from mcpforms.registry import registry_for
from mcpforms.tools import tool_class
from tests.core_client import CoreClient, asked, text
from tests.testapp.models import Colour

pytestmark = pytest.mark.django_db
_keys = itertools.count()


class PaintForm(forms.Form):
    """Paint a wall."""

    wall = forms.CharField()
    colour = forms.ModelChoiceField(queryset=Colour.objects.order_by("name"))
    accents = forms.ModelMultipleChoiceField(queryset=Colour.objects.order_by("name"), required=False)


def painter(**options: Any) -> CoreClient:
    def paint(request: Any, form: forms.BaseForm) -> str:
        data = form.cleaned_data
        accents = ", ".join(colour.name for colour in data["accents"]) or "none"
        return f"{data['wall']} painted {data['colour'].name}; accents: {accents}"

    server = Server(key=f"choices-{next(_keys)}")
    registry_for(server).add_tool(tool_class(PaintForm, name="paint", handler=paint, **options)())
    return CoreClient(server)


@pytest.fixture(autouse=True)
def untold() -> None:
    fields._grown.clear()  # another test may have had the log told already


@pytest.fixture
def colours() -> list[Colour]:
    return [
        Colour.objects.create(name=name, code=f"#{n:03}") for n, name in enumerate(["Blue", "Green", "Red"])
    ]


@override_settings(MCPFORMS={"MAX_MODEL_CHOICES": 2, "ALLOW_ANONYMOUS": True})
def test_past_the_cap_the_tool_is_listed_with_a_string_and_called_with_a_pk(colours, caplog):
    caplog.set_level(logging.WARNING, logger="mcpforms.fields")
    client = painter()
    (listed,) = client.result("tools/list")["tools"]
    colour = listed["inputSchema"]["properties"]["colour"]
    assert colour["type"] == "string" and "oneOf" not in colour and "enum" not in colour
    red = colours[2]
    done = client.call("paint", {"wall": "North", "colour": str(red.pk), "accents": [str(colours[0].pk)]})
    assert text(done) == "North painted Red; accents: Blue"
    warnings = [record for record in caplog.records if "MAX_MODEL_CHOICES" in record.getMessage()]
    # Once per kind of field and model, however often the form is read.
    assert [record.getMessage().split(" has ")[0] for record in warnings] == [
        "A ModelChoiceField over testapp.Colour",
        "A ModelMultipleChoiceField over testapp.Colour",
    ]


@override_settings(MCPFORMS={"MAX_MODEL_CHOICES": 2, "ALLOW_ANONYMOUS": True})
def test_past_the_cap_a_wrong_pk_is_an_error_naming_the_field(colours):
    refused = painter(ask="never").call("paint", {"wall": "North", "colour": "999999"})
    assert refused["isError"] is True
    assert "colour" in text(refused) and "Select a valid choice" in text(refused)


@override_settings(MCPFORMS={"MAX_MODEL_CHOICES": 2, "ALLOW_ANONYMOUS": True})
def test_past_the_cap_the_user_is_asked_for_it_as_text(colours):
    first = painter().call("paint", {"wall": "North"})
    schema = asked(first, "paint")["requestedSchema"]["properties"]["colour"]
    assert schema["type"] == "string" and "oneOf" not in schema
