"""The MCP endpoint's settings (``mcpforms.api``), its 2025-era session store, and the Host check it relies
on against DNS rebinding (spec §8.6)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from django.apps import AppConfig
from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.http.request import validate_host
from django.utils.module_loading import import_string

from mcpforms.checks.common import invalid_values, settings_check
from mcpforms.conf import SETTINGS, Section
from mcpforms.mounts import endpoint_paths

# What a session store needs besides storing, and what fails without each.
_BUDGETS_FAIL = (
    "the 2025 era's budgets (SESSIONS_PER_PRINCIPAL, ANONYMOUS_SESSIONS_PER_ADDRESS, ANONYMOUS_SESSIONS, "
    "CALLS_PER_SESSION) cannot be kept, and every initialize would fail"
)
_STORE_NEEDS = {
    "count_sessions": _BUDGETS_FAIL,
    "count_calls": _BUDGETS_FAIL,
    # SessionStore.adopt: how a 2025 client goes on in its session once it signed in.
    "adopt": "a client that signs in on the 2025-era session it opened anonymously could not go on in it",
}


@settings_check(Tags.security)
def check_endpoint_settings(configured: dict[str, Any]) -> list[CheckMessage]:
    """The endpoint's settings, and the Host check it relies on against DNS rebinding (spec §8.6)."""
    invalid = invalid_values(configured, Section.ENDPOINT, Section.SESSIONS)
    messages = list(invalid.values())
    if "SESSION_STORE" not in invalid:
        messages += _store_abilities(configured.get("SESSION_STORE", SETTINGS["SESSION_STORE"].default))
    if "BASE_URL" not in invalid:
        messages += _base_url_host(configured.get("BASE_URL"))
    if "*" in settings.ALLOWED_HOSTS:
        messages.append(
            Warning(
                "ALLOWED_HOSTS contains '*': the MCP endpoint's Host check cannot stop DNS rebinding.",
                hint="List the host names the site is served under; only the Origin check is left otherwise.",
                id="mcpforms.W003",
            )
        )
    return messages


@register(Tags.urls)
def check_endpoint_mounted(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    """An endpoint in no URLconf is a bare 404 to every client ("Error: Not Found"): say so now."""
    if not getattr(settings, "ROOT_URLCONF", None):
        return []  # no URLconf to read (a settings-only project, as some checks are run in)
    try:
        if endpoint_paths():
            return []
    except Exception:
        return []  # a URLconf that does not import: Django's own checks report it

    return [
        Warning(
            "No MCP endpoint is in the URLconf: every client gets 404 Not Found.",
            hint='Add path("mcp", mcpforms.api.urls) to urlpatterns in your urls.py, after "import '
            'mcpforms.api".',
            id="mcpforms.W005",
        )
    ]


def _allowed_hosts() -> list[str]:
    """ALLOWED_HOSTS as Django applies it: with DEBUG and an empty list, the local names."""
    hosts = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not hosts:
        return [".localhost", "127.0.0.1", "[::1]"]
    return hosts


def _base_url_host(base: object) -> list[CheckMessage]:
    """Every link and OAuth address is built on BASE_URL: its host must be one Django serves, or each
    request that follows one gets Django's bare "Bad Request (400)"."""
    if not isinstance(base, str) or not base:
        return []
    host = urlsplit(base).netloc.rpartition("@")[2]
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    if validate_host(name.lower(), _allowed_hosts()):
        return []
    return [
        Error(
            f"MCPFORMS['BASE_URL'] is {base!r}, but its host {name!r} is not in ALLOWED_HOSTS: every "
            "URL-mode link and sign-in address built on it answers Bad Request (400).",
            hint=f"Add {name!r} to ALLOWED_HOSTS, or set BASE_URL to the address the site is served under "
            "(behind a proxy, the public one).",
            id="mcpforms.E022",
        )
    ]


def _store_abilities(store: str) -> list[CheckMessage]:
    """A session store class counts what it holds and adopts a session, or the 2025 era cannot work."""
    store_class = import_string(store)
    missing = [name for name in _STORE_NEEDS if not callable(getattr(store_class, name, None))]
    if not missing:
        return []
    # dict.fromkeys: the two counts fail the same way, said once.
    failures = "; ".join(dict.fromkeys(_STORE_NEEDS[name] for name in missing))
    return [
        Error(
            f"MCPFORMS['SESSION_STORE'] ({store}) has no {' nor '.join(missing)}: {failures}.",
            hint="Add them as mcpforms.protocol.era2025.sessions.SessionStore describes, or use "
            "mcpforms.session_stores.DatabaseSessions or mcpforms.session_stores.CacheSessions.",
            id="mcpforms.E015",
        )
    ]
