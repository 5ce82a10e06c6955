"""``AutoFormField`` lists → the restricted JSON Schema of a form-mode elicitation (spec §7.2).

The wire accepts a flat object of primitive properties and nothing else, so the mapping is narrow on
purpose, and every keyword emitted here is one the spec lists. Pure functions: no I/O, no settings.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from mcpforms.fields import PAGE_TYPES, AutoFormField

# Form mode must not carry secrets (spec §7.2) and cannot carry files; hidden fields are not the user's to
# fill. These fields take another path: URL-mode elicitation or the HTML form.
OTHER_PATH_TYPES: frozenset[str] = PAGE_TYPES | {"hidden"}

_STRING_FORMATS = {"email": "email", "url": "uri", "date": "date", "datetime": "date-time"}


def form_mode_fields(fields: Sequence[AutoFormField]) -> list[AutoFormField]:
    """Return the fields a form-mode elicitation can ask for."""
    return [field for field in fields if field.type not in OTHER_PATH_TYPES]


# RFC 8259 §6: a number beyond an IEEE 754 double is one implementations disagree on (a JavaScript host
# reads it as Infinity). A client's answer is offered back as the default of the field it failed, so a
# 309-digit integer may reach this module: it is no bound or default any client could use.
_LARGEST = sys.float_info.max


def _is_number(value: Any) -> bool:
    """A JSON number every client reads: no bool, nothing a double cannot hold (NaN fails both tests)."""
    # Comparing an int with a float is exact in Python: no float() of it, which overflows past 1e308.
    return isinstance(value, int | float) and not isinstance(value, bool) and -_LARGEST <= value <= _LARGEST


def _is_whole(value: Any) -> bool:
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_count(value: Any) -> bool:
    """A bound usable as minLength/maxLength/minItems/maxItems: a non-negative whole number."""
    return _is_number(value) and value >= 0 and _is_whole(value)


def _bounds(field: AutoFormField, low: str, high: str, *, counts: bool) -> dict[str, Any]:
    fits = _is_count if counts else _is_number
    bounds: dict[str, Any] = {}
    if fits(field.min):
        bounds[low] = int(field.min) if counts else field.min  # type: ignore[arg-type]
    if fits(field.max):
        bounds[high] = int(field.max) if counts else field.max  # type: ignore[arg-type]
    return bounds


def property_schema(field: AutoFormField) -> dict[str, Any]:
    """Return the PrimitiveSchemaDefinition of one form-mode field."""
    schema: dict[str, Any] = {}
    default = field.default
    if field.options:
        choices = [{"const": option.value, "title": option.label} for option in field.options]
        offered = {option.value for option in field.options}
        if field.multiple:
            schema |= {"type": "array", "items": {"anyOf": choices}}
            schema |= _bounds(field, "minItems", "maxItems", counts=True)
            fits = isinstance(default, list) and all(isinstance(v, str) and v in offered for v in default)
        else:
            schema |= {"type": "string", "oneOf": choices}
            fits = isinstance(default, str) and default in offered
    elif field.type in ("number", "integer", "range"):
        schema["type"] = "integer" if field.type == "integer" else "number"
        schema |= _bounds(field, "minimum", "maximum", counts=False)
        fits = _is_number(default) and (field.type != "integer" or _is_whole(default))
    elif field.type in ("boolean", "checkbox"):
        schema["type"] = "boolean"
        fits = isinstance(default, bool)
    else:
        schema["type"] = "string"
        if field.type in _STRING_FORMATS:
            schema["format"] = _STRING_FORMATS[field.type]
        schema |= _bounds(field, "minLength", "maxLength", counts=True)
        fits = isinstance(default, str)
    schema["title"] = field.label
    if field.description:
        schema["description"] = field.description
    if default is not None and fits:
        schema["default"] = default
    return schema


def form_schema(fields: Sequence[AutoFormField]) -> dict[str, Any]:
    """Return the ``requestedSchema`` for the form-mode fields among ``fields``."""
    asked = form_mode_fields(fields)
    return {
        "type": "object",
        "properties": {field.name: property_schema(field) for field in asked},
        "required": [field.name for field in asked if field.required],
    }


def form_input_request(
    fields: Sequence[AutoFormField],
    *,
    key: str = "form",
    message: str,
    request_state: str | None = None,
) -> dict[str, Any]:
    """Return an ``input_required`` result asking the user to fill ``fields`` in a form elicitation."""
    if not fields:
        raise ValueError("form_input_request needs at least one field.")
    if not form_mode_fields(fields):
        names = ", ".join(field.name for field in fields)
        raise ValueError(
            f"None of these fields can be asked in form mode ({names}): passwords, files and hidden "
            "inputs need URL mode or the HTML form."
        )
    result: dict[str, Any] = {
        "resultType": "input_required",
        "inputRequests": {
            key: {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": message,
                    "requestedSchema": form_schema(fields),
                },
            }
        },
    }
    if request_state is not None:
        result["requestState"] = request_state
    return result
