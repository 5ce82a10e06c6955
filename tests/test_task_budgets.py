"""What a task keeps, and how many a caller may make the server keep: only the arguments the tool declares,
and budgets on live tasks per user and, for anonymous callers, per address and all together, refused with
429 and ``Retry-After`` on the wire of either era (``task_store.start_task``, ``protocol.budgets``)."""

from __future__ import annotations

import json

import pytest

from mcpforms.models import ToolTask
from tests.test_approvals import REFUND, ColourForm, Site, site_with
from tests.testapp.models import Colour

pytestmark = pytest.mark.django_db

JUNK = {"junk": "x" * 90_000, "nested": {"deeper": ["y" * 1000] * 20}}


@pytest.fixture
def site() -> Site:
    return site_with()


# What a task keeps ------------------------------------------------------------------------------------


def test_a_task_keeps_only_the_arguments_its_tool_declares(site):
    task = site.client().call(site.tool.name, {**REFUND, **JUNK})
    assert task["resultType"] == "task"
    row = ToolTask.objects.get()
    assert row.arguments == {"arguments": REFUND, "values": REFUND}
    assert len(json.dumps(row.arguments)) < 200


def test_an_update_keeps_its_lookup_and_the_forms_fields_only():
    colour = Colour.objects.create(name="Teal", code="#088")
    site = site_with(ColourForm, name="rename_colour", update=True)
    site.ask(pk=colour.pk, name="Petrol", **JUNK)
    kept = ToolTask.objects.get().arguments
    assert kept["arguments"] == {"pk": colour.pk, "name": "Petrol"}
    assert kept["values"] == {"name": "Petrol", "code": "#088"}
