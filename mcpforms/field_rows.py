"""One admin field row (a ``FieldDefinition``) → an ``AutoFormField``, or a message for the admin.

The model's ``clean()`` and the tool built from a definition read rows with the same function, so what
the admin accepts always becomes a working field. Nothing here touches the database.
"""

from __future__ import annotations

import datetime
from dataclasses import replace
from typing import Any, Protocol

from mcpforms.fields import AutoFormField, Option

_TRUE_WORDS = frozenset({"true", "yes", "1", "on"})
_FALSE_WORDS = frozenset({"false", "no", "0", "off"})


class FieldRow(Protocol):
    """What is read of a row: the columns of ``mcpforms.models.FieldDefinition``."""

    name: str
    label: str
    type: str
    required: bool
    help_text: str
    min: float | None
    max: float | None
    choices: str
    multiple: bool
    default: str
    placeholder: str


class DefinitionError(ValueError):
    """A field definition that cannot become a form field; the message is written for the admin, and
    ``field`` names the admin input it is about."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def parse_choices(text: str) -> tuple[Option, ...]:
    """Read one choice per line, ``value|Label`` or just ``value``; blank lines are skipped."""
    options: list[Option] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        value, bar, label = (part.strip() for part in line.partition("|"))
        if not value:
            raise DefinitionError(f"Line {number} has no value before the '|'.", field="choices")
        if bar and not label:
            raise DefinitionError(f"Line {number} has a '|' but no label after it.", field="choices")
        if any(option.value == value for option in options):
            raise DefinitionError(f"The value {value!r} appears twice.", field="choices")
        options.append(Option(value, label))
    return tuple(options)


def plain_number(value: float | None) -> int | float | None:
    """A whole number as an int (``100``, never ``100.0``): min and max are stored as floats, and are most
    often a length or a count."""
    return int(value) if value is not None and float(value).is_integer() else value


def parse_value(
    field: AutoFormField, text: str, *, noun: str = "default", admin_field: str = "default"
) -> Any:
    """Read text staff typed (a default, a step condition's value) as a value of the field's type; raise
    ``DefinitionError`` about the admin input ``admin_field`` otherwise."""
    if not text:
        return None
    offered = {option.value for option in field.options}
    if field.options and field.multiple:
        picks = [part.strip() for part in text.split(",") if part.strip()]
        if not set(picks) <= offered:
            raise DefinitionError(
                f"{noun.capitalize()} picks must be among the choices: {', '.join(sorted(offered))}.",
                field=admin_field,
            )
        return picks
    if field.options:
        if text not in offered:
            raise DefinitionError(
                f"The {noun} must be one of the choices: {', '.join(sorted(offered))}.", field=admin_field
            )
        return text
    try:
        if field.type in ("boolean", "checkbox"):
            if text.lower() not in _TRUE_WORDS | _FALSE_WORDS:
                raise ValueError
            return text.lower() in _TRUE_WORDS
        if field.type == "integer":
            return int(text)
        if field.type in ("number", "range"):
            return plain_number(float(text))
        if field.type == "date":
            return datetime.date.fromisoformat(text).isoformat()
        if field.type == "datetime":
            parsed = datetime.datetime.fromisoformat(text)
            if parsed.tzinfo is None:
                raise ValueError
            return parsed.isoformat()
        if field.type == "time":
            return datetime.time.fromisoformat(text).isoformat()
    except ValueError:
        hint = {
            "boolean": "true or false",
            "checkbox": "true or false",
            "integer": "a whole number",
            "number": "a number",
            "range": "a number",
            "date": "a date as YYYY-MM-DD",
            "datetime": "a date and time with offset, as 2026-05-01T09:00:00+00:00",
            "time": "a time as HH:MM",
        }[field.type]
        raise DefinitionError(f"The {noun} must be {hint}.", field=admin_field) from None
    return text


def auto_field_from_row(row: FieldRow) -> AutoFormField:
    """Read one admin field row as an AutoFormField; raise ``DefinitionError`` when it is inconsistent."""
    options = parse_choices(row.choices)
    if row.multiple and not options:
        raise DefinitionError("A multiple-choice field needs choices.", field="choices")
    if row.min is not None and row.max is not None and row.min > row.max:
        raise DefinitionError(f"Min ({row.min:g}) is greater than max ({row.max:g}).", field="max")
    counts = options and row.multiple or row.type not in ("number", "integer", "range")
    if counts and any(
        bound is not None and (bound < 0 or not float(bound).is_integer()) for bound in (row.min, row.max)
    ):
        raise DefinitionError(
            "Min and max count characters or picks here: use whole numbers from 0.", field="min"
        )
    field = AutoFormField(
        name=row.name,
        label=row.label,
        type=row.type,  # type: ignore[arg-type]  # constrained by the model's choices
        required=row.required,
        options=options,
        multiple=row.multiple,
        min=plain_number(row.min),
        max=plain_number(row.max),
        description=row.help_text,
        placeholder=row.placeholder,
    )
    default = parse_value(field, row.default)
    return field if default is None else replace(field, default=default)
