"""ModelForm steps: a wizard that changes an existing object through ``get_form_instance``."""

from __future__ import annotations

from typing import Any

import pytest
from django import forms

from mcpforms.protocol.server import Server
from mcpforms.registry import register
from mcpforms.wizards import WizardTool
from tests.core_client import CoreClient, accept, asked
from tests.testapp.models import Colour, Gadget

pytestmark = pytest.mark.django_db


class GadgetPriceForm(forms.ModelForm):
    class Meta:
        model = Gadget
        fields = ["name", "price"]


class GadgetColourForm(forms.ModelForm):
    class Meta:
        model = Gadget
        fields = ["colour"]


class RepriceGadget(WizardTool):
    form_list = [("price", GadgetPriceForm), ("colour", GadgetColourForm)]

    def get_form_instance(self, request: Any, step: str) -> Any:
        return Gadget.objects.get(slug="widget")

    def handle(self, request, form_list, form_dict):  # type: ignore[override]
        gadget = form_dict["price"].save(commit=False)
        gadget.colour = form_dict["colour"].cleaned_data["colour"]
        gadget.save()
        return {"gadget": gadget.pk, "price": str(gadget.price), "colour": gadget.colour.name}


@pytest.fixture
def client() -> CoreClient:
    server = Server()
    register(RepriceGadget, server=server)
    return CoreClient(server)


def test_model_form_steps_update_the_instance_and_add_no_row(client):
    red, blue = (
        Colour.objects.create(name="red", code="#f00"),
        Colour.objects.create(name="blue", code="#00f"),
    )
    widget = Gadget.objects.create(name="Widget", slug="widget", price="4.00", colour=red)
    first = client.call("reprice_gadget")
    params = asked(first, "reprice_gadget")
    assert params["message"] == "Step 1 of at most 2: Price"
    # The object's current values are what the user sees prefilled.
    assert params["requestedSchema"]["properties"]["name"]["default"] == "Widget"

    colour = client.answer(first, "reprice_gadget", reprice_gadget=accept(name="Widget", price="7.50"))
    params = asked(colour, "reprice_gadget")
    assert params["message"] == "Step 2 of at most 2: Colour"
    done = client.answer(colour, "reprice_gadget", reprice_gadget=accept(colour=str(blue.pk)))

    assert done["structuredContent"] == {"gadget": widget.pk, "price": "7.50", "colour": "blue"}
    assert Gadget.objects.count() == 1
    widget.refresh_from_db()
    assert (str(widget.price), widget.colour) == ("7.50", blue)


def test_a_unique_value_another_row_took_meanwhile_asks_its_step_again(client):
    Gadget.objects.create(name="Widget", slug="widget", price="4.00")
    first = client.call("reprice_gadget")
    colour = client.answer(first, "reprice_gadget", reprice_gadget=accept(name="Widget Pro", price="9.00"))
    Gadget.objects.create(name="Widget Pro", slug="pro")  # between the rounds: the new name is taken
    red = Colour.objects.create(name="red", code="#f00")
    again = client.answer(colour, "reprice_gadget", reprice_gadget=accept(colour=str(red.pk)))
    message = asked(again, "reprice_gadget")["message"]
    assert message.startswith("Step 1 of at most 2: Price\nPlease correct:")
    assert "Gadget with this Name already exists." in message
    assert Gadget.objects.get(slug="widget").name == "Widget"
