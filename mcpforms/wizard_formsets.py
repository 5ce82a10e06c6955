"""A wizard step that is a formset: its rows as JSON, the formset bound from them, what the model reads.

A restricted elicitation schema has no list of objects, so a formset step is asked only in an MCP Apps
host (``mcpforms.wizard_app`` shows its rows) or taken from the model's arguments: the step's name is one
property of the tool's inputSchema, an array of objects with the row form's fields. The step's answer is
that list, one object per row, kept in the requestState under the step like a form step's values.

The formset is bound as formtools binds it, under the step's name as its prefix, with a management form
built here: ``TOTAL_FORMS`` is the number of rows and ``INITIAL_FORMS`` is 0, so every row is a new one
(for a model formset, a new object, and its queryset is ``get_form_instance(step)`` or none at all, never
the whole table). Django validates the rest: each row, ``clean()``, ``min_num``/``max_num`` with
``validate_min``/``validate_max``.

Errors are keyed the way the formset names its inputs: ``<step>-<row>-<field>`` for a row's field,
``<step>-<row>-__all__`` for a row as a whole, ``<step>`` for the formset's own (``non_form_errors()``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django import forms
from django.forms.formsets import INITIAL_FORM_COUNT, TOTAL_FORM_COUNT, BaseFormSet
from django.forms.models import BaseModelFormSet

from mcpforms.answers import posted_data
from mcpforms.fields import AutoFormField
from mcpforms.flow import NON_FIELD
from mcpforms.schema import OTHER_PATH_TYPES, property_schema


def is_formset(form_class: Any) -> bool:
    return isinstance(form_class, type) and issubclass(form_class, BaseFormSet)


def is_model_formset(form_class: Any) -> bool:
    return isinstance(form_class, type) and issubclass(form_class, BaseModelFormSet)


def row_form(formset_class: Any) -> type[forms.BaseForm]:
    """The form of one row."""
    form: type[forms.BaseForm] = formset_class.form
    return form


@dataclass(frozen=True)
class RowsOutcome:
    """What Django made of the rows: the bound formset, and its messages (keyed as the module says)."""

    formset: BaseFormSet[Any]
    errors: dict[str, list[str]] = field(default_factory=dict)

    @property
    def is_valid(self) -> bool:
        return not self.errors


def validate_rows(
    formset_class: type[BaseFormSet[Any]], rows: Any, *, prefix: str, **kwargs: Any
) -> RowsOutcome:
    """Bind ``rows`` (untrusted JSON: a list of objects) to a fresh ``formset_class`` and validate it."""
    shaped = isinstance(rows, list) and all(isinstance(row, Mapping) for row in rows)
    listed: list[Mapping[str, Any]] = list(rows) if shaped else []
    data: dict[str, Any] = {
        f"{prefix}-{TOTAL_FORM_COUNT}": str(len(listed)),
        f"{prefix}-{INITIAL_FORM_COUNT}": "0",
    }
    formset = formset_class(data=data, prefix=prefix, **kwargs)
    if not shaped:
        return RowsOutcome(formset, errors={prefix: ["Enter a list of objects, one per row."]})
    # The forms read the dict the formset is bound to, so each row is laid out through its own form's
    # widgets and prefix once the forms exist, before anything validates them.
    for form, row in zip(formset.forms, listed, strict=False):
        data.update(posted_data(form, row))
    if formset.is_valid():
        return RowsOutcome(formset)
    errors: dict[str, list[str]] = {}
    for index, form in enumerate(formset.forms):
        for name, entries in form.errors.get_json_data().items():
            errors[f"{prefix}-{index}-{name}"] = [str(entry["message"]) for entry in entries]
    if messages := [str(message) for message in formset.non_form_errors()]:
        errors[prefix] = messages
    return RowsOutcome(formset, errors=errors)


def rows_schema(formset_class: type[BaseFormSet[Any]], fields: Sequence[AutoFormField]) -> dict[str, Any]:
    """The step as one property of the tool's inputSchema (full JSON Schema): an array of row objects."""
    properties = {
        auto.name: property_schema(auto) if auto.type not in OTHER_PATH_TYPES else {"type": "string"}
        for auto in fields
    }
    schema: dict[str, Any] = {
        "type": "array",
        "description": "One object per row.",
        "items": {"type": "object", "properties": properties},
    }
    if formset_class.validate_min and formset_class.min_num:
        schema["minItems"] = formset_class.min_num
    if formset_class.validate_max:
        schema["maxItems"] = formset_class.max_num
    return schema


def describe_rows(fields: Sequence[AutoFormField]) -> str:
    """A row's fields the way the model passes them: ``name`` (Name, required), …"""
    return ", ".join(
        f"{auto.name} ({auto.label}{', required' if auto.required else ''})"
        for auto in fields
        if auto.type not in OTHER_PATH_TYPES
    )


def describe_row_problems(
    errors: Mapping[str, list[str]], *, prefix: str, fields: Sequence[AutoFormField]
) -> list[str]:
    """One line per message, naming the row (from 1) and the field as the user sees them."""
    labels = {auto.name: auto.label for auto in fields}
    lines = []
    for key, messages in errors.items():
        text = " ".join(messages)
        if key == prefix:
            lines.append(text)
            continue
        index, _, name = key.removeprefix(f"{prefix}-").partition("-")
        where = f"row {int(index) + 1}" if index.isdigit() else key
        if name and name != NON_FIELD:
            where += f", {labels.get(name, name)} ({name})"
        lines.append(f"{where}: {text}")
    return lines
