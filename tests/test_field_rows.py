"""Admin field rows read as AutoFormFields, or refused with a message that names the admin input."""

from __future__ import annotations

from typing import Any

import pytest

from mcpforms.field_rows import DefinitionError, auto_field_from_row, parse_choices
from mcpforms.fields import Option
from mcpforms.models import FieldDefinition


def row(**values: Any) -> FieldDefinition:
    return FieldDefinition(**{"name": "f", "type": "text", **values})


def test_parse_choices():
    assert parse_choices("a|Apple\n\n b \nc | Cherry ") == (
        Option("a", "Apple"),
        Option("b", "b"),
        Option("c", "Cherry"),
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("|Apple", "Line 1 has no value"),
        ("a|", "Line 1 has a '|' but no label"),
        ("a\nb\na|A", "'a' appears twice"),
    ],
)
def test_malformed_choices_name_the_problem(text, message):
    with pytest.raises(DefinitionError, match=message) as caught:
        parse_choices(text)
    assert caught.value.field == "choices"


@pytest.mark.parametrize(
    ("values", "field", "message"),
    [
        ({"min": 5, "max": 2}, "max", r"Min \(5\) is greater than max \(2\)"),
        ({"min": 1.5}, "min", "whole numbers"),
        ({"min": -1}, "min", "whole numbers"),
        ({"multiple": True}, "choices", "needs choices"),
        ({"type": "integer", "default": "many"}, "default", "a whole number"),
        ({"type": "number", "default": "x"}, "default", "a number"),
        ({"type": "boolean", "default": "perhaps"}, "default", "true or false"),
        ({"type": "date", "default": "31/12/2026"}, "default", "YYYY-MM-DD"),
        ({"type": "datetime", "default": "2026-05-01T09:00"}, "default", "with offset"),
        ({"type": "time", "default": "noon"}, "default", "HH:MM"),
        ({"choices": "a\nb", "default": "c"}, "default", "one of the choices: a, b"),
        ({"choices": "a\nb", "multiple": True, "default": "a, c"}, "default", "among the choices"),
    ],
)
def test_inconsistent_rows_are_refused_with_the_admin_field_named(values, field, message):
    with pytest.raises(DefinitionError, match=message) as caught:
        auto_field_from_row(row(**values))
    assert caught.value.field == field


def test_numbers_may_have_fractional_and_negative_bounds():
    field = auto_field_from_row(row(type="number", min=-1.5, max=2.5, default="0.5"))
    assert (field.min, field.max, field.default) == (-1.5, 2.5, 0.5)
