"""What is registered: forms that convert, servers with keys of their own, and at least one tool."""

from __future__ import annotations

import gc
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.apps import AppConfig, apps
from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning, register

from mcpforms.checks.common import on_server


@register()
def check_registered_forms(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    """Every registered form, on every server, converts to fields (its ``__init__`` included), or the tool
    could never run."""
    from mcpforms.registry import registries

    return [
        Error(
            f"The form registered as {name!r}{on_server(server)} cannot be offered: {error}",
            hint="Register a converter with mcpforms.fields.register_converter, or change the field.",
            id="mcpforms.E101",
        )
        for server, registry in registries()
        for name, error in registry.conversion_failures()
    ]


@register()
def check_server_keys(app_configs: Sequence[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Each server's ``key`` binds what it mints (requestState, URL-mode links, sessions): two servers
    sharing one would accept each other's, and a numbered default key is stable only by luck."""
    from mcpforms.protocol.server import servers
    from mcpforms.registry import registries

    gc.collect()  # a server left only in a reference cycle is gone, not a second server with its key
    messages: list[CheckMessage] = []
    seen: set[str] = set()
    for server in servers():
        if server.key in seen:
            messages.append(
                Error(
                    f"Two servers share the key {server.key!r}: each would accept what the other mints, "
                    "and URL-mode links open only the first one's tools.",
                    hint="Give each Server its own key=, e.g. Server(key='billing').",
                    id="mcpforms.E020",
                )
            )
        seen.add(server.key)
    for server, registry in registries():
        if not server.key_given and (registry.tools or registry.prompts):
            messages.append(
                Warning(
                    f"A server with tools was built without a key (it is numbered {server.key!r}): its "
                    "requestStates, URL-mode links and sessions are accepted only while every process builds "
                    "its servers in the same order.",
                    hint="Build it with Server(key='…'), a name of its own that never changes.",
                    id="mcpforms.W004",
                )
            )
    return messages


@register()
def check_something_is_registered(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    """mcpforms is installed but no form or tool reached the default server: almost always a
    ``mcp_tools.py`` outside every installed app, which autodiscovery never imports."""
    from mcpforms.protocol.server import default_server
    from mcpforms.registry import registry_for

    registry = registry_for(default_server)
    if registry.tools or registry.prompts or default_server.tools.declared():
        return []
    stray = _stray_mcp_tools()
    where = f" {stray} belongs to no installed app, so it is never imported." if stray else ""
    return [
        Warning(
            f"No form is registered as an MCP tool.{where}",
            hint="Put mcp_tools.py inside an app listed in INSTALLED_APPS (next to its admin.py), or call "
            "mcpforms.register() from an AppConfig.ready(). A project whose forms are all defined in the "
            "admin can silence this check: SILENCED_SYSTEM_CHECKS = ['mcpforms.W102'].",
            id="mcpforms.W102",
        )
    ]


def _stray_mcp_tools() -> str | None:
    """A ``mcp_tools.py`` next to the settings module or manage.py that no installed app contains."""
    settings_module = sys.modules.get(getattr(settings, "SETTINGS_MODULE", "") or "")
    places = [Path.cwd()]
    if settings_module is not None and getattr(settings_module, "__file__", None):
        places.insert(0, Path(settings_module.__file__).resolve().parent)  # type: ignore[arg-type]
    app_dirs = {Path(config.path).resolve() for config in apps.get_app_configs()}
    for place in places:
        candidate = place / "mcp_tools.py"
        if candidate.exists() and candidate.resolve().parent not in app_dirs:
            return str(candidate)
    return None
