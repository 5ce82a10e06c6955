"""URL-mode elicitation (spec §7.3; ``mcpforms.url_mode``, ``mcpforms.views``): where its links point, how
long they live, and whether the page they open is served."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from django.apps import AppConfig
from django.core.checks import CheckMessage, Warning, register
from django.db import DatabaseError
from django.urls import NoReverseMatch, reverse

from mcpforms.checks.common import invalid_values, on_server, settings_check
from mcpforms.conf import Section, user_settings


def page_mounted() -> bool:
    """Whether ``mcpforms.urls`` (the URL-mode page) is in the URLconf."""
    try:
        reverse("mcpforms_ui:page", args=["token"])
    except NoReverseMatch:
        return False
    return True


@settings_check()
def check_url_mode_settings(configured: dict[str, Any]) -> list[CheckMessage]:
    """The link of a URL-mode elicitation: how long it lives and where it points (spec §7.3)."""
    invalid = invalid_values(configured, Section.URL_MODE)
    messages = list(invalid.values())
    base = configured.get("BASE_URL")
    if base is None or "BASE_URL" in invalid:
        return messages
    if base.startswith("http://") and urlsplit(base).hostname not in ("localhost", "127.0.0.1", "::1"):
        messages.append(
            Warning(
                f"MCPFORMS['BASE_URL'] is {base!r}: URL-mode links should use HTTPS outside development.",
                hint="Serve the site over HTTPS and use an https:// BASE_URL (spec: URL-mode elicitation).",
                id="mcpforms.W201",
            )
        )
    if not page_mounted():
        messages.append(
            Warning(
                "MCPFORMS['BASE_URL'] is set but the URL-mode page is not in the URLconf.",
                hint='Add path("", include("mcpforms.urls")) to the root urls.py.',
                id="mcpforms.W202",
            )
        )
    return messages


@register()
def check_page_only_fields_have_a_page(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    """A registered form with a password or file field can only be filled on the URL-mode page, which
    needs ``BASE_URL`` and ``mcpforms.urls``; say so now rather than at the first call."""
    from mcpforms.fields import FormConversionError
    from mcpforms.registry import registries

    needing: list[str] = []
    for server, registry in registries():
        for name, tool in registry.tools.items():
            try:
                fields = tool.fields_for(None)
            except (FormConversionError, DatabaseError):
                continue  # mcpforms.E101 reports forms that do not convert; the database may not exist yet
            if any(field.page_only for field in fields):
                needing.append(name + on_server(server))
    if not needing:
        return []
    configured = user_settings()
    base = configured.get("BASE_URL") if isinstance(configured, dict) else None
    missing = [
        what for what, ok in (("MCPFORMS['BASE_URL']", base), ("mcpforms.urls", page_mounted())) if not ok
    ]
    if not missing:
        return []
    return [
        Warning(
            f"Tools that ask for a password or a file ({', '.join(sorted(needing))}) need the URL-mode "
            f"page, but {' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing: they will "
            "answer every call with an error.",
            hint='Set MCPFORMS["BASE_URL"] to the site\'s address and add '
            'path("", include("mcpforms.urls")) to the root urls.py.',
            id="mcpforms.W103",
        )
    ]
