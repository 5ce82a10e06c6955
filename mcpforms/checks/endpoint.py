"""The MCP endpoint's settings (``mcpforms.api``), its 2025-era session store, and the Host check it relies
on against DNS rebinding (spec §8.6)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning
from django.utils.module_loading import import_string

from mcpforms.checks.common import invalid_values, settings_check
from mcpforms.conf import SETTINGS, Section

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
    if "*" in settings.ALLOWED_HOSTS:
        messages.append(
            Warning(
                "ALLOWED_HOSTS contains '*': the MCP endpoint's Host check cannot stop DNS rebinding.",
                hint="List the host names the site is served under; only the Origin check is left otherwise.",
                id="mcpforms.W003",
            )
        )
    return messages


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
