"""What the Django form said of a first round's values, remembered: the round that only learns what to ask.

A first round binds the form to the model's arguments for one reason: to find the fields to ask for, and
Django's messages for the values it cannot take. For a form whose every instance is the same
(``fields.is_static_form``: no ``__init__`` of its own, no choices from the database) and that is built
with no keyword arguments, the answer depends on nothing but the values and the language, so it is worked
out once per form class, language and values, where binding the form each time deep-copies its fields
and builds every message again.

Only an invalid verdict is reused, and only to ask: a form the values make valid is bound for real, and
the final round of every flow binds it for real before anything runs, so Django keeps the last word. A
ModelForm is never remembered: its uniqueness checks read the database.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django import forms
from django.core.signals import setting_changed
from django.utils.translation import get_language

from mcpforms.answers import FormOutcome
from mcpforms.fields import is_static_form

# Verdicts kept per process, and the longest values (as JSON) worth keeping one for: arguments are the
# model's to choose, so neither may grow without bound.
KEPT = 512
LONGEST = 2048


Key = tuple[Any, str | None, str]
_kept: dict[Key, dict[str, tuple[str, ...]]] = {}
_writing = threading.Lock()


@dataclass(frozen=True)
class Remembered:
    """An invalid verdict, as ``FormOutcome`` has it, without the form: nothing can run from it."""

    errors: dict[str, list[str]]

    @property
    def is_valid(self) -> bool:
        return False


def verdict_key(form_class: type[forms.BaseForm], values: Mapping[str, Any]) -> Key | None:
    """What a verdict on ``values`` is remembered by; None when it is not one to remember (a form that may
    differ between instances or reads the database, values that are not plain JSON or too long)."""
    if issubclass(form_class, forms.BaseModelForm) or not is_static_form(form_class):
        return None
    try:
        canonical = json.dumps(values, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError):
        return None  # not plain JSON: a value two different objects could print the same way
    if len(canonical) > LONGEST:
        return None
    return (form_class, get_language(), canonical)


def remembered(key: Key) -> Remembered | None:
    """The invalid verdict remembered by ``key``, if any."""
    errors = _kept.get(key)
    return None if errors is None else Remembered({name: list(messages) for name, messages in errors.items()})


def remember(key: Key, judged: FormOutcome) -> None:
    """Keep ``judged`` by ``key`` when the form found the values invalid, forgetting the oldest verdict
    when ``KEPT`` are kept already."""
    if judged.is_valid:
        return
    with _writing:
        if len(_kept) >= KEPT:
            del _kept[next(iter(_kept))]
        _kept[key] = {name: tuple(messages) for name, messages in judged.errors.items()}


def forget(**_: Any) -> None:
    """Forget every verdict: on ``setting_changed`` (a setting may change what a validator says)."""
    with _writing:
        _kept.clear()


setting_changed.connect(forget, dispatch_uid="mcpforms.verdicts")
