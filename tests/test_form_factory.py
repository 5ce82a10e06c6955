"""AutoFormField lists back to Django form classes: every type reads back as it was defined."""

from __future__ import annotations

import pytest

from mcpforms.field_rows import auto_field_from_row
from mcpforms.fields import fields_for_form
from mcpforms.form_factory import form_factory
from tests.test_field_rows import row


@pytest.mark.parametrize(
    "values",
    [
        {"type": "textarea", "min": 2, "max": 9, "placeholder": "Say hi"},
        {"type": "url"},
        {"type": "email", "max": 50},
        {"type": "date", "default": "2026-07-01"},
        {"type": "datetime", "default": "2026-07-01T10:00:00+00:00"},
        {"type": "time", "default": "09:30"},
        {"type": "boolean", "default": "yes"},
        {"type": "range", "min": 0, "max": 10},
        {"type": "password", "required": True},
        {"type": "file"},
        {"type": "hidden", "default": "campaign-7"},
        {"choices": "a|A\nb|B\nc|C", "multiple": True, "min": 1, "max": 2, "default": "a,b"},
    ],
)
def test_every_type_round_trips_through_a_django_form(values):
    expected = auto_field_from_row(row(required=values.pop("required", False), **values))
    (read_back,) = fields_for_form(form_factory("x", [expected]))
    assert read_back == expected


def test_multi_select_pick_counts_are_validated_by_the_form():
    form_class = form_factory("x", [auto_field_from_row(row(choices="a\nb\nc", multiple=True, min=1, max=2))])
    assert form_class(data={"f": ["a", "b", "c"]}).errors == {"f": ["Pick at most 2."]}
    assert form_class(data={"f": ["a"]}).is_valid()
