"""What the checks share: how a check of the ``MCPFORMS`` dict is registered, the value checks the rows of
``mcpforms.conf`` declare, and the questions more than one check asks."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core.checks import CheckMessage, Error, register

from mcpforms.conf import SETTINGS, Section, user_settings
from mcpforms.protocol.context import DEFAULT_SERVER

SettingsCheck = Callable[[dict[str, Any]], list[CheckMessage]]
Check = Callable[..., list[CheckMessage]]

OAUTH = "mcpforms.oauth.OAuth2Auth"

# Every check settings_check registered, in order: what manage.py check runs over the MCPFORMS dict.
SETTINGS_CHECKS: list[Check] = []


def settings_check(*tags: str) -> Callable[[SettingsCheck], Check]:
    """Register ``check`` with Django's checks, called with the ``MCPFORMS`` dict. When ``MCPFORMS`` is no
    dict it is not called: ``mcpforms.E001`` says so, once."""

    def decorate(check: SettingsCheck) -> Check:
        def run(app_configs: Sequence[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
            configured = user_settings()
            return check(configured) if isinstance(configured, dict) else []

        # The check's own name and docstring, but not functools.wraps' __wrapped__: Django reads the
        # signature through it to see that a check takes **kwargs.
        run.__name__, run.__qualname__, run.__doc__ = check.__name__, check.__qualname__, check.__doc__
        run.__module__ = check.__module__
        SETTINGS_CHECKS.append(run)
        return register(*tags)(run)

    return decorate


def invalid_values(configured: Mapping[str, Any], *sections: Section) -> dict[str, CheckMessage]:
    """The settings of ``sections`` whose value (as configured, or the default) their row refuses, each with
    the error that says why, under the row's check id."""
    found: dict[str, CheckMessage] = {}
    for row in SETTINGS.values():
        if row.section not in sections:
            continue
        value = configured.get(row.name, row.default)
        if (problem := row.kind.problem(value)) is not None:
            found[row.name] = Error(f"MCPFORMS[{row.name!r}] {problem}.", hint=row.hint, id=row.check)
        elif row.bounds is not None and not row.bounds.contains(value):
            found[row.name] = Error(
                f"MCPFORMS[{row.name!r}] is {value}; it must be between {row.bounds.minimum} and "
                f"{row.bounds.maximum()}.",
                hint=f"{row.bounds.why} The default is {row.default!r}.",
                id=row.bounds.check,
            )
    return found


def on_server(server: Any) -> str:
    """Where a message's tool lives, for a server other than the default one."""
    return "" if server.key == DEFAULT_SERVER else f" on the server {server.key!r}"


def toolkit_installed() -> bool:
    """Whether django-oauth-toolkit (``mcpforms[oauth]``) is among the installed apps."""
    return "oauth2_provider" in settings.INSTALLED_APPS


def oauth_in_use(configured: Mapping[str, Any]) -> bool:
    """Whether ``mcpforms.oauth.OAuth2Auth`` is among the endpoint's authentication methods."""
    methods = configured.get("AUTHENTICATION", SETTINGS["AUTHENTICATION"].default)
    return isinstance(methods, list | tuple) and OAUTH in methods
