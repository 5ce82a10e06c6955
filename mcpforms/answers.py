"""Untrusted ``inputResponses`` → accepted values → a bound Django form.

Whatever the client sends back is attacker-controlled (spec §6.4). ``accepted_form_input`` keeps only what
the advertised schema allows and never raises; ``validate_with_form`` then gives the real Django form the
last word, so validators, ``clean_*`` methods and model uniqueness still hold.
"""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import EmailValidator, URLValidator
from django.forms.fields import BaseTemporalField
from django.utils.datastructures import MultiValueDict

from mcpforms.fields import AutoFormField
from mcpforms.schema import form_mode_fields

Action = Literal["accept", "decline", "cancel"]
_ACTIONS: frozenset[str] = frozenset({"accept", "decline", "cancel"})


@dataclass(frozen=True)
class InputResponse:
    """The client's answer to one input request: what the user did, and the form content on accept."""

    action: Action
    content: dict[str, Any] | None = None


def input_response(responses: Any, key: str) -> InputResponse | None:
    """Read the answer stored under ``key``; None when it is missing or malformed."""
    if not isinstance(responses, dict):
        return None
    entry = responses.get(key)
    if not isinstance(entry, dict):
        return None
    action = entry.get("action")
    if not isinstance(action, str) or action not in _ACTIONS:
        return None
    content = entry.get("content")
    if action != "accept":
        return InputResponse(action, None)  # type: ignore[arg-type]
    if content is not None and not isinstance(content, dict):
        return None
    return InputResponse("accept", content)


def _within(value: float, low: Any, high: Any) -> bool:
    return (low is None or value >= low) and (high is None or value <= high)


MISSING = object()
_validate_email = EmailValidator()
_validate_url = URLValidator()


def _valid_format(kind: str, text: str) -> bool:
    try:
        if kind == "email":
            _validate_email(text)
        elif kind == "url":
            _validate_url(text)
        elif kind == "date":
            datetime.date.fromisoformat(text)
        elif kind == "datetime":
            datetime.datetime.fromisoformat(text)
    except (ValidationError, ValueError):
        return False
    return True


def accepted_value(field: AutoFormField, value: Any) -> Any:
    """Return ``value`` when it is one the field's schema allows, else ``MISSING``."""
    if field.options:
        offered = {option.value for option in field.options}
        if not field.multiple:
            return value if isinstance(value, str) and value in offered else MISSING
        if not isinstance(value, list) or not all(isinstance(v, str) and v in offered for v in value):
            return MISSING
        picked = list(dict.fromkeys(value))  # a repeated pick is one pick
        return picked if _within(len(picked), field.min, field.max) else MISSING
    if field.type in ("boolean", "checkbox"):
        return value if isinstance(value, bool) else MISSING
    if field.type in ("number", "integer", "range"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return MISSING
        # An int is never turned into a float here: one of 309 digits or more would overflow.
        if isinstance(value, float) and not math.isfinite(value):
            return MISSING
        if field.type == "integer" and isinstance(value, float):
            if not value.is_integer():
                return MISSING
            value = int(value)
        return value if _within(value, field.min, field.max) else MISSING
    if not isinstance(value, str) or not _within(len(value), field.min, field.max):
        return MISSING
    return value if _valid_format(field.type, value) else MISSING


def accepted_form_input(responses: Any, key: str, fields: Sequence[AutoFormField]) -> dict[str, Any] | None:
    """Return the accepted answer to a form elicitation, keeping only what ``fields`` allow.

    None when the answer is missing, declined or cancelled, or lacks a valid value for a required field.
    """
    response = input_response(responses, key)
    if response is None or response.action != "accept" or response.content is None:
        return None
    accepted: dict[str, Any] = {}
    for auto in form_mode_fields(fields):
        value = accepted_value(auto, response.content.get(auto.name, MISSING))
        if value is not MISSING:
            accepted[auto.name] = value
        elif auto.required:
            return None
    return accepted


@dataclass(frozen=True)
class FormOutcome:
    """What the Django form made of the values: cleaned data when valid, messages per field when not."""

    form: forms.BaseForm
    cleaned_data: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, list[str]] = field(default_factory=dict)

    @property
    def is_valid(self) -> bool:
        return not self.errors


def _as_form_data(form: forms.BaseForm, values: Mapping[str, Any]) -> dict[str, Any]:
    """Lay JSON values out the way each field's widget reads them from POST data."""
    data: dict[str, Any] = {}
    for name, form_field in form.fields.items():
        if name not in values:
            continue
        key, value = form.add_prefix(name), values[name]
        if isinstance(form_field.widget, forms.SplitDateTimeWidget) and isinstance(value, str):
            # One ISO value becomes the widget's two inputs, name_0 (date) and name_1 (time).
            date_part, _, time_part = value.partition("T")
            data[f"{key}_0"], data[f"{key}_1"] = date_part, time_part
        else:
            data[key] = _as_posted(form_field, value)
    return data


def posted_data(form: forms.BaseForm, values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` (JSON) laid out as ``form``'s widgets read POST data, under its prefix (a formset's row)."""
    return _as_form_data(form, values)


def _as_posted(form_field: forms.Field, value: Any) -> Any:
    """A JSON value as the field's widget and cleaning can read it.

    A browser posts text, or several texts for a field of several values; Django's fields and widgets
    are written for that, and some fail on anything else: a date, time or IP address field calls
    ``strip()`` on what it is given, ``NullBooleanSelect`` looks it up in a dict. So a number or boolean
    for a field that reads text, and a list or object for a field of one value, go in as their JSON text,
    which the field then refuses (or reads) with its own message. A JSON field reads JSON values as they
    are, and so does every other field a number or boolean suits.
    """
    if isinstance(form_field, forms.JSONField):
        return value
    if isinstance(value, list) and not _takes_several(form_field):
        return json.dumps(value, default=str)
    if isinstance(value, dict) or (
        isinstance(value, bool | int | float) and isinstance(form_field, _READ_AS_TEXT)
    ):
        return json.dumps(value, default=str)
    return value


def _refuse_the_field_being_cleaned(form: forms.BaseForm) -> None:
    """Give the field whose cleaning overflowed its own message: it is the first one that has neither a
    cleaned value nor an error yet (``BaseForm._clean_fields`` goes in order). A choice field names the
    key no row holds ("Select a valid choice."); any other (a ``FloatField`` given a number past a
    double) says what it takes ("Enter a number.")."""
    done = set(form.cleaned_data) | set(form.errors)
    name = next(name for name in form.fields if name not in done)
    messages = form.fields[name].error_messages
    if "invalid_choice" not in messages:
        form.add_error(
            name, forms.ValidationError(messages.get("invalid", "Enter a valid value."), code="invalid")
        )
        return
    posted = form.data.get(form.add_prefix(name))
    items = posted if isinstance(posted, list) else [posted]
    value = next((item for item in items if _no_key(item)), posted)
    error = forms.ValidationError(messages["invalid_choice"], code="invalid_choice", params={"value": value})
    form.add_error(name, error)


def _no_key(item: Any) -> bool:
    """Whether ``item`` is an integer no database key holds (signed 64 bits is the widest there is)."""
    text = str(item).strip()
    digits = text.removeprefix("-")
    if not (digits.isascii() and digits.isdigit()):
        return False
    return len(digits) > 19 or not -(2**63) <= int(text) < 2**63


def _takes_several(form_field: forms.Field) -> bool:
    return isinstance(form_field, forms.MultipleChoiceField | forms.ModelMultipleChoiceField) or bool(
        getattr(form_field.widget, "allow_multiple_selected", False)
    )


# The fields whose cleaning takes text only: a number or a boolean is no value they can read.
_READ_AS_TEXT = (BaseTemporalField, forms.GenericIPAddressField)


def validate_with_form(
    form_class: type[forms.BaseForm],
    values: Mapping[str, Any],
    *,
    files: Mapping[str, Any] | None = None,
    **form_kwargs: Any,
) -> FormOutcome:
    """Bind ``values`` to a fresh ``form_class`` (with ``initial``, ``instance``… as given) and validate."""
    data: dict[str, Any] = {}
    uploads = MultiValueDict({name: [upload] for name, upload in (files or {}).items()})
    form = form_class(data=data, files=uploads, **form_kwargs)
    # Widgets and the prefix come from the instance (its __init__ may change them), so the data is laid
    # out after construction, into the dict the form is already bound to and before anything reads it.
    data.update(_as_form_data(form, values))
    try:
        valid = form.is_valid()
    except OverflowError:
        # SQLite cannot bind an integer past 64 bits, and a ModelMultipleChoiceField's pk__in lookup hands
        # it one as it came (Django answers an exact lookup out of range itself): no row has such a key.
        valid = False
        _refuse_the_field_being_cleaned(form)
    if valid:
        return FormOutcome(form, cleaned_data=dict(form.cleaned_data))
    errors = {
        name: [str(error["message"]) for error in entries]
        for name, entries in form.errors.get_json_data().items()
    }
    return FormOutcome(form, errors=errors)
