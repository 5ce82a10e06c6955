"""System checks for the ``MCPFORMS`` setting. Each id is stable and has its own test."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.core.checks import CheckMessage, Error, Tags, Warning, register

from mcpforms.conf import DEFAULTS, user_settings


def _is_positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


@register(Tags.security)
def check_settings(app_configs: Sequence[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    configured = user_settings()
    if not isinstance(configured, dict):
        return [
            Error(
                f"MCPFORMS must be a dict, not {type(configured).__name__}.",
                hint="Set MCPFORMS = {...} in your settings, or remove it to use the defaults.",
                id="mcpforms.E001",
            )
        ]
    messages: list[CheckMessage] = []
    for unknown in sorted(set(configured) - set(DEFAULTS)):
        messages.append(
            Warning(
                f"MCPFORMS has an unknown key {unknown!r}.",
                hint=f"Valid keys: {', '.join(sorted(DEFAULTS))}.",
                id="mcpforms.W001",
            )
        )
    for name in ("STATE_MAX_AGE", "MAX_MODEL_CHOICES"):
        if name in configured and not _is_positive_int(configured[name]):
            messages.append(
                Error(
                    f"MCPFORMS[{name!r}] must be a positive integer, not {configured[name]!r}.",
                    id="mcpforms.E002",
                )
            )
    key = configured.get("STATE_KEY")
    if key is not None and not (isinstance(key, str | bytes) and len(key) >= 32):
        messages.append(
            Error(
                "MCPFORMS['STATE_KEY'] must be a string of at least 32 characters, or None.",
                hint="None signs requestState with SECRET_KEY and SECRET_KEY_FALLBACKS.",
                id="mcpforms.E003",
            )
        )
    fallbacks = configured.get("STATE_KEY_FALLBACKS", [])
    if not (isinstance(fallbacks, list | tuple) and all(isinstance(k, str | bytes) for k in fallbacks)):
        messages.append(
            Error(
                "MCPFORMS['STATE_KEY_FALLBACKS'] must be a list of strings.",
                id="mcpforms.E004",
            )
        )
    elif fallbacks and key is None:
        messages.append(
            Warning(
                "MCPFORMS['STATE_KEY_FALLBACKS'] is set but STATE_KEY is not, so it is never used.",
                hint="Rotate SECRET_KEY with SECRET_KEY_FALLBACKS, or set STATE_KEY too.",
                id="mcpforms.W002",
            )
        )
    return messages


@register()
def check_registered_forms(app_configs: Sequence[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Every registered form converts to fields (its ``__init__`` included), or the tool could never run."""
    from mcpforms.registry import convert_all

    return [
        Error(
            f"The form registered as {name!r} cannot be offered: {error}",
            hint="Register a converter with mcpforms.fields.register_converter, or change the field.",
            id="mcpforms.E101",
        )
        for name, error in convert_all()
    ]
