"""``AutoFormField`` lists → real Django form classes: the way back from ``fields``.

``display_form``'s UI renders such a class, and every admin-defined form is one, so a form built from a
field list takes exactly the path a code-defined form takes: same fields, schema, flow and validation.
``fields_for_form(form_factory(name, fields)) == fields`` for every field list the admin can define.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms
from django.core.validators import BaseValidator, MaxLengthValidator, MinLengthValidator
from django.utils.html import escape
from django.utils.safestring import SafeString

from mcpforms.fields import AutoFormField


class EscapedText(SafeString):
    """Help text typed by staff (an admin definition), escaped once and marked safe, so it reads as text
    even where a template prints ``help_text|safe`` (Django's own form templates do: they trust it as the
    developer's HTML). ``text`` keeps it as typed, which ``fields`` reads back for the schema."""

    text: str


def escaped(text: str) -> EscapedText:
    html = EscapedText(escape(text))
    html.text = text
    return html


def django_field(auto: AutoFormField) -> forms.Field:
    """The Django form field that reads back as ``auto``."""
    common: dict[str, Any] = {
        "label": auto.label,
        "required": auto.required,
        "help_text": escaped(auto.description),
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


def form_factory(name: str, fields: Sequence[AutoFormField], *, doc: str = "") -> type[forms.Form]:
    """Build the Django form class whose fields read back as ``fields``."""
    attrs: dict[str, Any] = {auto.name: django_field(auto) for auto in fields}
    attrs["__doc__"] = doc or None
    class_name = "".join(part.capitalize() for part in name.replace(".", "_").replace("-", "_").split("_"))
    return type(f"{class_name}Form", (forms.Form,), attrs)
