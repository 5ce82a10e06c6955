"""``MCPFORMS`` values read on every request, cached until the setting changes.

``mcpforms.conf`` reads the setting on every access, which is right for code that runs rarely; the
endpoint reads a handful of keys per request, so it keeps them here and forgets them on
``setting_changed`` (which ``override_settings`` sends), never serving a stale value.
"""

from __future__ import annotations

from typing import Any

from django.core.signals import setting_changed
from django.dispatch import receiver

from mcpforms.conf import conf

_cache: dict[str, Any] = {}


def option(name: str) -> Any:
    """Return ``conf.<name>``, cached."""
    try:
        return _cache[name]
    except KeyError:
        value = _cache[name] = getattr(conf, name)
        return value


@receiver(setting_changed)
def _forget(*, setting: str, **kwargs: Any) -> None:
    if setting == "MCPFORMS":
        _cache.clear()
