"""Django forms and models → ``AutoFormField`` lists.

A field list is what every later step works from: the elicitation schema, the checks on untrusted answers
and the rendered HTML form. It is read from an *instantiated* form, so whatever ``__init__`` changes counts.
"""

from __future__ import annotations

import datetime
import decimal
import logging
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from django import forms
from django.core import validators
from django.db import models
from django.forms.utils import pretty_name
from django.utils.choices import CallableChoiceIterator
from django.utils.translation import get_language

from mcpforms.conf import DEFAULTS, conf

logger = logging.getLogger(__name__)

FieldType = Literal[
    "text",
    "textarea",
    "email",
    "url",
    "date",
    "datetime",
    "time",
    "number",
    "integer",
    "range",
    "checkbox",
    "boolean",
    "password",
    "file",
    "hidden",
]
FIELD_TYPES: frozenset[str] = frozenset(FieldType.__args__)  # type: ignore[attr-defined]
# Secrets and files never travel through the conversation: not as arguments, not in form mode (spec §7.2),
# not in a state token, not through an App's tools/call. Only the URL-mode page collects them (§7.3).
PAGE_TYPES: frozenset[str] = frozenset({"password", "file"})

Number = int | float


@dataclass(frozen=True)
class Option:
    """One choice of a select field; the label defaults to the value."""

    value: str
    label: str = ""

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", self.value)


@dataclass(frozen=True)
class AutoFormField:
    """One input of a form, independent of Django and of the wire.

    ``min``/``max`` bound the value for numbers, the length for text and the number of picks for a
    multi-select. A field with ``options`` is a select whatever its ``type``.
    """

    name: str
    label: str = ""
    type: FieldType = "text"
    required: bool = False
    options: Sequence[Option] = ()
    multiple: bool = False
    min: Number | None = None
    max: Number | None = None
    description: str = ""
    default: Any = None
    placeholder: str = ""

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("An AutoFormField needs a name.")
        if self.type not in FIELD_TYPES:
            raise ValueError(
                f"Field {self.name!r} has type {self.type!r}; valid types: {', '.join(sorted(FIELD_TYPES))}."
            )
        # Accept any iterable of options (lists read naturally in user code) but store a tuple: frozen means
        # hashable and safe to cache.
        object.__setattr__(self, "options", tuple(self.options))
        if not self.label:
            object.__setattr__(self, "label", pretty_name(self.name))

    @property
    def page_only(self) -> bool:
        """Whether only the URL-mode page (or the HTML form) may collect this field: see ``PAGE_TYPES``."""
        return self.type in PAGE_TYPES

    @property
    def secret(self) -> bool:
        """Whether the value is a secret: never stored, never echoed back in a result."""
        return self.type == "password"


class FormConversionError(Exception):
    """A form field has no mapping, or cannot be offered as it is."""


def too_many_fields(count: int) -> str | None:
    """Say why a form of ``count`` fields cannot be offered, or None when it can: past ``MAX_FORM_FIELDS``
    it is more than a person is walked through, and its schema grows without bound."""
    limit = conf.MAX_FORM_FIELDS
    # A limit that is no number is the settings check's to report (mcpforms.E011): a form check that
    # raised over it would stop manage.py check before that one is shown.
    if not isinstance(limit, int) or count <= limit:
        return None
    return f"{count} fields, more than the {limit} a form may have (MCPFORMS['MAX_FORM_FIELDS'])"


# A converter reads one Django form field and returns the AutoFormField attributes specific to its kind.
Converter = Callable[[forms.Field], dict[str, Any]]

_converters: dict[type[forms.Field], Converter] = {}


def register_converter(field_class: type[forms.Field]) -> Callable[[Converter], Converter]:
    """Map a Django form field class (and its subclasses, unless they have their own) to a converter."""

    def decorator(converter: Converter) -> Converter:
        _converters[field_class] = converter
        return converter

    return decorator


def converter_for(field_class: type[forms.Field]) -> Converter | None:
    """The converter of ``field_class``, or of its nearest base class that has one; None for none."""
    # Walk the MRO so a user's subclass of EmailField is an email without registering anything.
    for klass in field_class.__mro__:
        if klass in _converters:
            return _converters[klass]
    return None


def _limit(validator: validators.BaseValidator) -> Any:
    limit = validator.limit_value
    return limit() if callable(limit) else limit


def _json_number(value: Any) -> Number | None:
    if isinstance(value, bool) or not isinstance(value, int | float | decimal.Decimal):
        return None
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def _bounds(
    field: forms.Field,
    min_class: type[validators.BaseValidator],
    max_class: type[validators.BaseValidator],
) -> dict[str, Any]:
    """Read the tightest lower and upper bound from a field's validators."""
    lows = [_json_number(_limit(v)) for v in field.validators if isinstance(v, min_class)]
    highs = [_json_number(_limit(v)) for v in field.validators if isinstance(v, max_class)]
    low = max((n for n in lows if n is not None), default=None)
    high = min((n for n in highs if n is not None), default=None)
    return {"min": low, "max": high}


@register_converter(forms.CharField)
def _text(field: forms.Field) -> dict[str, Any]:
    widget = field.widget
    kind = "text"
    if isinstance(widget, forms.PasswordInput):
        kind = "password"
    elif isinstance(widget, forms.Textarea):
        kind = "textarea"
    return {"type": kind} | _bounds(field, validators.MinLengthValidator, validators.MaxLengthValidator)


def _typed_text(kind: str) -> Converter:
    def convert(field: forms.Field) -> dict[str, Any]:
        return _text(field) | {"type": kind}

    return convert


register_converter(forms.EmailField)(_typed_text("email"))
register_converter(forms.URLField)(_typed_text("url"))


@register_converter(forms.IntegerField)
def _integer(field: forms.Field) -> dict[str, Any]:
    return {"type": "integer"} | _bounds(field, validators.MinValueValidator, validators.MaxValueValidator)


@register_converter(forms.FloatField)
@register_converter(forms.DecimalField)
def _number(field: forms.Field) -> dict[str, Any]:
    # A slider is still a number on the wire; the HTML form keeps it a slider.
    kind = "range" if getattr(field.widget, "input_type", None) == "range" else "number"
    return _integer(field) | {"type": kind}


@register_converter(forms.BooleanField)
def _boolean(field: forms.Field) -> dict[str, Any]:
    return {"type": "boolean"}


@register_converter(forms.NullBooleanField)
def _null_boolean(field: forms.Field) -> dict[str, Any]:
    # The values NullBooleanSelect itself posts, so the bound form reads them back unchanged.
    options = (Option("true", "Yes"), Option("false", "No"), Option("unknown", "Unknown"))
    return {"type": "text", "options": options}


@register_converter(forms.DateField)
def _date(field: forms.Field) -> dict[str, Any]:
    return {"type": "date"}


@register_converter(forms.DateTimeField)
@register_converter(forms.SplitDateTimeField)
def _datetime(field: forms.Field) -> dict[str, Any]:
    return {"type": "datetime"}


@register_converter(forms.TimeField)
def _time(field: forms.Field) -> dict[str, Any]:
    return {"type": "time"}


@register_converter(forms.DurationField)
@register_converter(forms.UUIDField)
@register_converter(forms.JSONField)
def _plain_text(field: forms.Field) -> dict[str, Any]:
    return {"type": "text"}


@register_converter(forms.FileField)
def _file(field: forms.Field) -> dict[str, Any]:
    return {"type": "file"}


def _flatten_choices(choices: Any) -> list[Option]:
    options: list[Option] = []
    for value, label in choices:
        if isinstance(label, list | tuple):  # an optgroup: (group label, [(value, label), ...])
            options.extend(_flatten_choices(label))
        elif value not in ("", None):  # the empty choice means "nothing picked", not an option
            options.append(Option(str(value), str(label)))
    return options


@register_converter(forms.ChoiceField)
def _choice(field: forms.Field) -> dict[str, Any]:
    assert isinstance(field, forms.ChoiceField)
    return {"type": "text", "options": tuple(_flatten_choices(field.choices))}


@register_converter(forms.MultipleChoiceField)
def _multiple_choice(field: forms.Field) -> dict[str, Any]:
    # Length validators on a multi-select count picks.
    picks = _bounds(field, validators.MinLengthValidator, validators.MaxLengthValidator)
    return _choice(field) | {"multiple": True} | picks


@register_converter(forms.ModelChoiceField)
def _model_choice(field: forms.Field) -> dict[str, Any]:
    assert isinstance(field, forms.ModelChoiceField)
    cap = conf.MAX_MODEL_CHOICES
    if not isinstance(cap, int) or isinstance(cap, bool) or cap < 1:
        # A malformed limit is the settings check's to report (mcpforms.E002); the default holds until it
        # is fixed, so that neither manage.py check nor a call crashes over it before that is shown.
        cap = DEFAULTS["MAX_MODEL_CHOICES"]
    # Slice one past the cap: enough to know the cap is exceeded without loading the whole table.
    rows = list(field.queryset[: cap + 1]) if field.queryset is not None else []
    if len(rows) > cap:
        # The table grew past what a select can list (sign-ups do that): the field is the value the
        # form takes (a pk, or the ``to_field_name``), which the form still validates.
        _warn_grown(field, cap)
        return {"type": "text"}
    options = tuple(
        Option(str(field.prepare_value(row)), str(field.label_from_instance(row))) for row in rows
    )
    return {"type": "text", "options": options}


# The (model, field class) pairs the log was told of: once each per process is enough for a developer.
_grown: set[tuple[str, str]] = set()


def _warn_grown(field: forms.ModelChoiceField[Any], cap: int) -> None:
    model = field.queryset.model._meta.label if field.queryset is not None else "?"
    key = (model, type(field).__name__)
    if key in _grown:
        return
    _grown.add(key)
    logger.warning(
        "A %s over %s has more than %s choices (MCPFORMS['MAX_MODEL_CHOICES']): it is asked as plain text, "
        "the value the form takes, without its list. Narrow its queryset or raise the limit.",
        key[1],
        model,
        cap,
    )


@register_converter(forms.ModelMultipleChoiceField)
def _model_multiple_choice(field: forms.Field) -> dict[str, Any]:
    return _model_choice(field) | {"multiple": True}


def _fits(kind: str, value: Any) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind in ("boolean", "checkbox"):
        return isinstance(value, bool)
    return isinstance(value, str)


def _iso_default(kind: str, initial: Any) -> str | None:
    """An initial given as text counts when it is the ISO form the field's type needs."""
    if not isinstance(initial, str):
        return None
    try:
        if kind == "date":
            return datetime.date.fromisoformat(initial).isoformat()
        if kind == "time":
            return datetime.time.fromisoformat(initial).isoformat()
        moment = datetime.datetime.fromisoformat(initial)
    except ValueError:
        return None
    return moment.isoformat() if moment.tzinfo is not None else None


def _json_default(auto: AutoFormField, initial: Any) -> Any:
    """Return ``initial`` as the JSON value the field would submit, or None when it does not fit."""
    if initial is None or auto.type in PAGE_TYPES:
        return None
    if isinstance(initial, models.Model):
        initial = initial.pk
    if auto.options:
        offered = {option.value for option in auto.options}
        if auto.multiple:
            if isinstance(initial, str) or not isinstance(initial, Iterable):
                return None
            picked = [str(item.pk if isinstance(item, models.Model) else item) for item in initial]
            return picked if set(picked) <= offered else None
        if isinstance(initial, bool):  # NullBooleanField initial True/False
            initial = "true" if initial else "false"
        return str(initial) if str(initial) in offered else None
    if isinstance(initial, datetime.datetime):
        # date-time (RFC 3339) needs an offset; a naive value would misstate the moment.
        if auto.type != "datetime" or initial.tzinfo is None:
            return None
        return initial.isoformat()
    if isinstance(initial, datetime.date):
        return initial.isoformat() if auto.type == "date" else None
    if isinstance(initial, datetime.time):
        return initial.isoformat() if auto.type == "time" else None
    if auto.type in ("date", "datetime", "time"):
        return _iso_default(auto.type, initial)
    if auto.type in ("number", "range"):
        return _json_number(initial)
    return initial if _fits(auto.type, initial) else None


def auto_field_from_form_field(name: str, field: forms.Field, *, initial: Any = None) -> AutoFormField:
    """Convert one Django form field to an ``AutoFormField``; raise ``FormConversionError`` when it has no
    mapping."""
    converter = converter_for(type(field))
    if converter is None:
        raise FormConversionError(
            f"{type(field).__name__} has no mapping; register one with mcpforms.fields.register_converter"
        )
    attrs = converter(field)
    if field.widget.is_hidden:
        attrs["type"] = "hidden"
    placeholder = field.widget.attrs.get("placeholder", "")
    auto = AutoFormField(
        name=name,
        label=str(field.label) if field.label else "",
        required=field.required,
        # mcpforms.form_factory escaped its help text for HTML; the schema wants it as typed.
        description=str(getattr(field.help_text, "text", None) or field.help_text or ""),
        placeholder=str(placeholder),
        **attrs,
    )
    default = _json_default(auto, initial)
    return replace(auto, default=default) if default is not None else auto


def fields_for_form(form: forms.BaseForm | type[forms.BaseForm]) -> list[AutoFormField]:
    """Return the fields of a form (class or instance), in form order."""
    instance = form() if isinstance(form, type) else form
    form_name = type(instance).__name__
    result = []
    for name, field in instance.fields.items():
        try:
            result.append(
                auto_field_from_form_field(name, field, initial=instance.get_initial_for_field(field, name))
            )
        except FormConversionError as error:
            raise FormConversionError(f"{form_name}.{name}: {error}") from None
    return result


def declared_fields(form_class: type[forms.BaseForm]) -> list[AutoFormField]:
    """The fields ``form_class`` declares, read without instantiating it: for a form whose ``__init__``
    needs arguments only a request can give (the user, say) when there is no request, as in a listing."""
    result = []
    for name, field in getattr(form_class, "base_fields", {}).items():
        initial = None if callable(field.initial) else field.initial
        try:
            result.append(auto_field_from_form_field(name, field, initial=initial))
        except FormConversionError as error:
            raise FormConversionError(f"{form_class.__name__}.{name}: {error}") from None
    return result


def secret_names(form: forms.BaseForm) -> set[str]:
    """The names of the form's secret fields (see ``AutoFormField.secret``), read from this instance."""
    return {auto.name for auto in fields_for_form(form) if auto.secret}


# Field lists of forms that come out the same on every instantiation, per class and language (labels
# are translated when read). Weak keys: admin-defined form classes are rebuilt when staff edit them.
_static_fields: weakref.WeakKeyDictionary[type[forms.BaseForm], dict[str | None, list[AutoFormField]]] = (
    weakref.WeakKeyDictionary()
)
_BASE_INITS = {forms.BaseForm.__init__, forms.BaseModelForm.__init__}
_DYNAMIC_FIELDS = (forms.ModelChoiceField, forms.FilePathField)


def is_static_form(form_class: type[forms.BaseForm]) -> bool:
    """Whether every instance of the class has the same fields: no ``__init__`` of its own, no choices
    read from the database, the file system or a callable, and no callable initial value."""
    if form_class.__init__ not in _BASE_INITS:
        return False
    declared: dict[str, forms.Field] = getattr(form_class, "base_fields", {})
    for field in declared.values():
        if isinstance(field, _DYNAMIC_FIELDS) or callable(field.initial):
            return False
        if isinstance(field, forms.ChoiceField) and isinstance(field.choices, CallableChoiceIterator):
            return False
    return True


def form_fields(form_class: type[forms.BaseForm], **form_kwargs: Any) -> list[AutoFormField]:
    """``fields_for_form(form_class(**form_kwargs))``, remembered when nothing could make it differ.

    The hot path of every round needs the field list: a plain form is read once per language, while a
    form with an ``__init__``, database choices, callable initials or arguments is read every time.
    """
    if form_kwargs:
        return fields_for_form(form_class(**form_kwargs))
    language = get_language()
    by_language = _static_fields.get(form_class)
    if by_language is not None and language in by_language:
        return by_language[language]  # only a static class was ever remembered
    if not is_static_form(form_class):
        return fields_for_form(form_class())
    by_language = _static_fields.setdefault(form_class, {})
    by_language[language] = fields_for_form(form_class)
    return by_language[language]


def fields_for_model(
    model: type[models.Model],
    *,
    fields: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
) -> list[AutoFormField]:
    """Return the fields of the ModelForm Django would build for ``model``."""
    form_class = forms.modelform_factory(
        model, fields=list(fields) if fields is not None else "__all__", exclude=exclude
    )
    return fields_for_form(form_class)


# The public names (docs/reference/api.md); the rest serve the package's other modules.
__all__ = [
    "AutoFormField",
    "FieldType",
    "FormConversionError",
    "Option",
    "fields_for_form",
    "fields_for_model",
    "register_converter",
]
