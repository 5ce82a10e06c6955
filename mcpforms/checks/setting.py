"""The ``MCPFORMS`` setting as a whole: a dict of known keys, and its signing keys."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.core.checks import CheckMessage, Error, Tags, Warning, register

from mcpforms.checks.common import invalid_values
from mcpforms.conf import SETTINGS, Section, docs_page, user_settings


def _nearest(unknown: object) -> str:
    """What the key was probably meant to be (a typo, or another case), else where every key is listed."""
    typed = str(unknown)
    close = difflib.get_close_matches(typed.upper(), SETTINGS, n=1, cutoff=0.6)
    if close:
        return f"Did you mean {close[0]!r}?"
    return f"No setting has that name; every key is listed at {docs_page('reference/settings')}."


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
    messages: list[CheckMessage] = [
        Warning(f"MCPFORMS has an unknown key {unknown!r}.", hint=_nearest(unknown), id="mcpforms.W001")
        for unknown in sorted(set(configured) - set(SETTINGS), key=str)
    ]
    invalid = invalid_values(configured, Section.SIGNING, Section.TASKS, Section.CLEANUP)
    messages += invalid.values()
    fallbacks = configured.get("STATE_KEY_FALLBACKS")
    if "STATE_KEY_FALLBACKS" not in invalid and fallbacks and configured.get("STATE_KEY") is None:
        messages.append(
            Warning(
                "MCPFORMS['STATE_KEY_FALLBACKS'] is set but STATE_KEY is not, so it is never used.",
                hint="Rotate SECRET_KEY with SECRET_KEY_FALLBACKS, or set STATE_KEY too.",
                id="mcpforms.W002",
            )
        )
    return messages
