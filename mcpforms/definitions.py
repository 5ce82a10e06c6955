"""Forms defined in the admin → real ``forms.Form`` classes → the same tools as code-registered forms.

One factory turns a ``FormDefinition`` into a Django form class, so admin-defined forms go through exactly
the pipeline code-defined ones do: fields, schema, flow, validation. The tool list follows the database: a
cheap version read on every listing picks up edits from any process, with no restart.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Hashable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from django import forms
from django.core.mail import send_mail
from django.core.validators import BaseValidator, MaxLengthValidator, MinLengthValidator
from django.db import connections, router, transaction

from mcpforms.fields import AutoFormField, Option
from mcpforms.output import to_json
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.primitives import Tool
from mcpforms.tools import Handler, form_tool

if TYPE_CHECKING:
    from mcpforms.models import FieldDefinition, FormDefinition

logger = logging.getLogger(__name__)

TRUE_WORDS = frozenset({"true", "yes", "1", "on"})
FALSE_WORDS = frozenset({"false", "no", "0", "off"})


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


def _bound(value: float | None) -> int | float | None:
    return int(value) if value is not None and float(value).is_integer() else value


def parse_default(field: AutoFormField, text: str) -> Any:
    """Read the admin's default text as a value of the field's type; raise ``DefinitionError`` otherwise."""
    if not text:
        return None
    offered = {option.value for option in field.options}
    if field.options and field.multiple:
        picks = [part.strip() for part in text.split(",") if part.strip()]
        if not set(picks) <= offered:
            raise DefinitionError(
                f"Default picks must be among the choices: {', '.join(sorted(offered))}.", field="default"
            )
        return picks
    if field.options:
        if text not in offered:
            raise DefinitionError(
                f"The default must be one of the choices: {', '.join(sorted(offered))}.", field="default"
            )
        return text
    try:
        if field.type in ("boolean", "checkbox"):
            if text.lower() not in TRUE_WORDS | FALSE_WORDS:
                raise ValueError
            return text.lower() in TRUE_WORDS
        if field.type == "integer":
            return int(text)
        if field.type in ("number", "range"):
            return _bound(float(text))
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
        raise DefinitionError(f"The default must be {hint}.", field="default") from None
    return text


def auto_field(row: FieldDefinition) -> AutoFormField:
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
        min=_bound(row.min),
        max=_bound(row.max),
        description=row.help_text,
        placeholder=row.placeholder,
    )
    default = parse_default(field, row.default)
    return field if default is None else replace(field, default=default)


def _django_field(auto: AutoFormField) -> forms.Field:
    common: dict[str, Any] = {
        "label": auto.label,
        "required": auto.required,
        "help_text": auto.description,
        "initial": auto.default,
    }
    attrs = {"placeholder": auto.placeholder} if auto.placeholder else {}
    low, high = auto.min, auto.max
    if auto.options:
        choices = [(option.value, option.label) for option in auto.options]
        if auto.multiple:
            picks: list[BaseValidator] = []
            if low is not None:
                picks.append(MinLengthValidator(int(low), message="Pick at least %(limit_value)d."))
            if high is not None:
                picks.append(MaxLengthValidator(int(high), message="Pick at most %(limit_value)d."))
            return forms.MultipleChoiceField(choices=choices, validators=picks, **common)
        return forms.ChoiceField(choices=[("", "---------"), *choices], **common)
    if auto.type in ("boolean", "checkbox"):
        return forms.BooleanField(**common)
    if auto.type == "integer":
        common["min_value"] = None if low is None else int(low)
        common["max_value"] = None if high is None else int(high)
        return forms.IntegerField(widget=forms.NumberInput(attrs), **common)
    if auto.type in ("number", "range"):
        widget = forms.NumberInput({"type": "range", **attrs} if auto.type == "range" else attrs)
        return forms.FloatField(min_value=low, max_value=high, widget=widget, **common)
    if auto.type == "date":
        return forms.DateField(widget=forms.DateInput(attrs), **common)
    if auto.type == "datetime":
        return forms.DateTimeField(widget=forms.DateTimeInput(attrs), **common)
    if auto.type == "time":
        return forms.TimeField(widget=forms.TimeInput(attrs), **common)
    if auto.type == "file":
        return forms.FileField(**common)
    common["min_length"] = None if low is None else int(low)
    common["max_length"] = None if high is None else int(high)
    if auto.type == "email":
        return forms.EmailField(widget=forms.EmailInput(attrs), **common)
    if auto.type == "url":
        return forms.URLField(widget=forms.URLInput(attrs), assume_scheme="https", **common)
    widgets: dict[str, type[forms.Widget]] = {
        "textarea": forms.Textarea,
        "password": forms.PasswordInput,
        "hidden": forms.HiddenInput,
    }
    return forms.CharField(widget=widgets.get(auto.type, forms.TextInput)(attrs), **common)


def form_class_for(name: str, fields: Sequence[AutoFormField], *, doc: str = "") -> type[forms.Form]:
    """Build the Django form class whose fields read back as ``fields``."""
    attrs: dict[str, Any] = {auto.name: _django_field(auto) for auto in fields}
    attrs["__doc__"] = doc or None
    class_name = "".join(part.capitalize() for part in name.replace(".", "_").replace("-", "_").split("_"))
    return type(f"{class_name}Form", (forms.Form,), attrs)


def definition_form_class(definition: FormDefinition) -> type[forms.Form]:
    rows = list(definition.fields.all())
    return form_class_for(definition.name, [auto_field(row) for row in rows], doc=definition.description)


def _submission_handler(definition: FormDefinition) -> Handler:
    definition_id, tool_name, email_to, title = (
        definition.pk,
        definition.name,
        definition.email_to,
        definition.title,
    )

    def store(request: RequestContext, form: forms.BaseForm) -> dict[str, Any]:
        from mcpforms.models import Submission

        secret = {
            name for name, field in form.fields.items() if isinstance(field.widget, forms.PasswordInput)
        }
        data = {name: to_json(value) for name, value in form.cleaned_data.items() if name not in secret}
        user = request.user if getattr(request.user, "is_authenticated", False) else None
        client_info = request.meta.get("io.modelcontextprotocol/clientInfo")
        submission = Submission.objects.create(
            definition_id=definition_id,
            tool_name=tool_name,
            data=data,
            user=user,
            client_info=client_info if isinstance(client_info, dict) else {},
        )
        if email_to:
            # After commit: a mail must not announce a submission that was rolled back, and a mail server
            # that is down must not lose the submission.
            transaction.on_commit(lambda: _mail(submission.pk, title, data, email_to))
        return {"submission": submission.pk, "form": tool_name, "data": data}

    return store


def _mail(pk: int, title: str, data: dict[str, Any], to: str) -> None:
    body = "\n".join(f"{name}: {value}" for name, value in data.items())
    try:
        send_mail(f"New submission #{pk}: {title}", body, None, [to])
    except Exception:  # the submission is stored; a failed notification is logged, not raised
        logger.exception("Could not e-mail submission %s to %s", pk, to)


def definition_tools() -> list[Tool]:
    """The tools of every enabled definition; a broken one is logged and left out, never a broken list."""
    from mcpforms.models import FormDefinition

    tools: list[Tool] = []
    for definition in FormDefinition.objects.filter(enabled=True).prefetch_related("fields"):
        try:
            built = form_tool(
                definition_form_class(definition),
                name=definition.name,
                title=definition.title,
                description=definition.description,
                message=definition.message or None,
                ask=definition.ask,  # type: ignore[arg-type]  # constrained by the model's choices
                permission=definition.permission or None,
                handler=_submission_handler(definition),
                version=str(definition.version),
            )
            tools.extend(built.tools)  # the tool and its app-only submit tool for the form UI
        except Exception:
            logger.exception("The admin-defined form %r cannot be offered", definition.name)
    return tools


def catalog_version() -> Hashable:
    """Changes whenever a definition is added, edited, enabled, disabled or deleted, in any process.

    Read on every request that looks a tool up, so it is one plain SQL statement: the ORM would spend
    more time compiling this aggregate than the database spends answering it.
    """
    from mcpforms.models import FormDefinition

    connection = connections[router.db_for_read(FormDefinition)]
    table = connection.ops.quote_name(FormDefinition._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*), MAX(updated), SUM(version) FROM {table}")  # noqa: S608 (no input)
        row: tuple[Hashable, ...] = tuple(cursor.fetchone() or ())
    return row
