from __future__ import annotations

import datetime
import decimal
import json
import uuid

import mcp_types
import pytest
from django.core.files.base import ContentFile
from django.utils.translation import gettext_lazy

from mcpforms.output import error_result, model_payload, to_json, tool_result
from tests.testapp.models import Colour, Gadget


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        (True, True),
        (3, 3),
        (1.5, 1.5),
        ("text", "text"),
        (datetime.date(2026, 1, 2), "2026-01-02"),
        (datetime.datetime(2026, 1, 2, 3, 4, tzinfo=datetime.UTC), "2026-01-02T03:04:00+00:00"),
        (datetime.time(9, 30), "09:30:00"),
        (datetime.timedelta(minutes=2), 120.0),
        (decimal.Decimal("2.50"), "2.50"),
        (uuid.UUID(int=1), "00000000-0000-0000-0000-000000000001"),
        (gettext_lazy("Yes"), "Yes"),
        ({"a": (1, {2}), 3: [datetime.date(2026, 1, 1)]}, {"a": [1, [2]], "3": ["2026-01-01"]}),
        (ContentFile(b"x", name="notes.txt"), "notes.txt"),
    ],
)
def test_to_json(value, expected):
    assert to_json(value) == expected
    json.dumps(to_json(value))


@pytest.mark.django_db
def test_models_become_their_primary_key_and_querysets_lists():
    red = Colour.objects.create(name="Red", code="#f00")
    assert to_json(red) == red.pk
    assert to_json(Colour.objects.all()) == [red.pk]


@pytest.mark.django_db
def test_model_payload_has_every_field_and_many_to_many_pks():
    red = Colour.objects.create(name="Red", code="#f00")
    gadget = Gadget.objects.create(name="Lamp", slug="lamp", colour=red)
    gadget.tags.add(red)
    gadget.refresh_from_db()
    payload = model_payload(gadget)
    assert payload["pk"] == gadget.pk
    assert payload["colour"] == red.pk
    assert payload["tags"] == [red.pk]
    assert payload["manual"] is None  # an empty FileField
    assert payload["price"] == "1.00"  # Decimal keeps its digits


def test_tool_result_shapes():
    ready = {"content": [{"type": "text", "text": "done"}], "isError": False}
    assert tool_result(ready) == ready
    assert tool_result("Saved.") == {"content": [{"type": "text", "text": "Saved."}]}
    listed = tool_result([1, 2])
    assert listed == {"content": [{"type": "text", "text": "[1, 2]"}]}  # structuredContent must be an object
    structured = tool_result({"name": "Ada", "when": datetime.date(2026, 1, 1)})
    assert structured["structuredContent"] == {"name": "Ada", "when": "2026-01-01"}
    assert json.loads(structured["content"][0]["text"]) == structured["structuredContent"]
    for result in (ready, listed, structured, error_result("No.")):
        mcp_types.CallToolResult.model_validate(result)
    assert error_result("No.") == {"content": [{"type": "text", "text": "No."}], "isError": True}
