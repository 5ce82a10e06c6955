"""Who may call the endpoint (``mcpforms.auth``, ``mcpforms.oauth``): the methods import, anonymous access is
said plainly, and OAuth is wired up, down to the scopes each tool needs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning
from django.shortcuts import resolve_url
from django.urls import NoReverseMatch, Resolver404, resolve, reverse

from mcpforms.checks.common import invalid_values, oauth_in_use, on_server, settings_check, toolkit_installed
from mcpforms.conf import SETTINGS, Section, install_extra


@settings_check(Tags.security)
def check_auth_settings(configured: dict[str, Any]) -> list[CheckMessage]:
    """The authentication methods import, anonymous access is said plainly, and OAuth is wired up."""
    if oauth_in_use(configured) and not toolkit_installed():
        # Importing OAuth2Auth loads django-oauth-toolkit's models, which need its app: say that first.
        return [_toolkit_missing()]
    invalid = invalid_values(configured, Section.AUTH)
    messages = list(invalid.values())
    if "AUTHENTICATION" not in invalid and oauth_in_use(configured):
        messages += _oauth_wiring()
        messages += _login_url()
        messages += _oauth_audience(configured.get("BASE_URL"))
        if "OAUTH_SCOPES" not in invalid:
            messages += _oauth_scopes_on_offer(
                configured.get("OAUTH_SCOPES", SETTINGS["OAUTH_SCOPES"].default)
            )
    return messages


def _oauth_audience(base: object) -> list[CheckMessage]:
    """A token's audience is judged against BASE_URL and the endpoint's path, never the Host header."""
    if isinstance(base, str) and base:
        return []  # mcpforms.E202 judges its shape
    return [
        Error(
            "mcpforms.oauth.OAuth2Auth is configured without MCPFORMS['BASE_URL']: every OAuth token is "
            "refused, since nothing says which URL a token must have been issued for (RFC 8707).",
            hint="Set MCPFORMS['BASE_URL'] to the site's public address, e.g. 'https://forms.example.com'; "
            "tokens must then be issued for resource=<BASE_URL>/<the endpoint's path>.",
            id="mcpforms.E305",
        )
    ]


def _oauth_scopes_on_offer(scopes: Sequence[str]) -> list[CheckMessage]:
    """Each required scope is one django-oauth-toolkit grants, or no token could ever carry it."""
    if not toolkit_installed():
        return []  # mcpforms.E304 already says so
    offered = _offered_scopes()
    missing = [scope for scope in scopes if scope not in offered]
    if not missing:
        return []
    return [
        Warning(
            f"MCPFORMS['OAUTH_SCOPES'] requires {', '.join(map(repr, missing))}, which django-oauth-toolkit "
            "does not offer: its tokens can never carry it, so every one is refused with a 403.",
            hint="Add it to OAUTH2_PROVIDER['SCOPES'] (and DEFAULT_SCOPES), e.g. "
            "{'mcp': 'Use the forms of this site'}, or change MCPFORMS['OAUTH_SCOPES'].",
            id="mcpforms.W302",
        )
    ]


def _offered_scopes() -> Any:
    from oauth2_provider.settings import oauth2_settings  # optional: mcpforms[oauth]

    return oauth2_settings.SCOPES_BACKEND_CLASS().get_all_scopes()


def _login_url() -> list[CheckMessage]:
    """The consent page sends a visitor who is not signed in to LOGIN_URL: a name no URL has is a 500
    (NoReverseMatch) there, a path no view serves a 404, and either stops every sign-in."""
    login = settings.LOGIN_URL
    try:
        url = resolve_url(login)
    except NoReverseMatch:
        problem = f"names no URL of the URLconf ({login!r})"
    else:
        parts = urlsplit(str(url))
        if parts.scheme or parts.netloc:
            return []  # another site signs people in: nothing here to hold it to
        try:
            resolve(parts.path)
        except Resolver404:
            problem = f"is the path {parts.path!r}, which no view of the URLconf serves"
        except Exception:
            return []  # a URLconf that does not import: Django's own checks report it
        else:
            return []
    return [
        Error(
            f"Sign-in is configured, but LOGIN_URL {problem}: the consent page sends people there first, "
            "so nobody could sign in.",
            hint="Set LOGIN_URL to a login page your site serves: LOGIN_URL = 'admin:login' when the people "
            "who sign in are staff, or add path('accounts/', include('django.contrib.auth.urls')) with a "
            "registration/login.html template and keep LOGIN_URL = '/accounts/login/'.",
            id="mcpforms.E316",
        )
    ]


def _sign_in_shadowed() -> list[CheckMessage]:
    """mcpforms.urls mounted before mcpforms.oauth.urls answers the well-known documents itself, with
    its word that the site does not sign in: every client is told so."""
    from mcpforms.discovery import metadata

    try:
        found = resolve("/.well-known/oauth-authorization-server")
    except Exception:
        return []  # not served at all (W301), or a URLconf Django's own checks report
    if found.func is not metadata:
        return []
    return [
        Error(
            "mcpforms.urls is mounted before mcpforms.oauth.urls: it answers the OAuth documents clients "
            "look for with its word that this site does not sign in, so no client can sign in.",
            hint='Put path("", include(mcpforms.oauth.urls)) before path("", include("mcpforms.urls")) in '
            "the root urls.py.",
            id="mcpforms.E317",
        )
    ]


def _toolkit_missing() -> CheckMessage:
    return Error(
        "mcpforms.oauth.OAuth2Auth needs django-oauth-toolkit's app: add 'oauth2_provider' to "
        "INSTALLED_APPS.",
        hint='INSTALLED_APPS += ["oauth2_provider"], then run manage.py migrate (if it is not installed: '
        f"{install_extra('oauth')}).",
        id="mcpforms.E304",
    )


def _oauth_wiring() -> list[CheckMessage]:
    from mcpforms.oauth.resource import METADATA_URL_NAME

    messages: list[CheckMessage] = _sign_in_shadowed()
    try:
        reverse(METADATA_URL_NAME, args=["mcp"])
    except NoReverseMatch:
        messages.append(
            Warning(
                "mcpforms.oauth.urls is not mounted: clients told to authenticate cannot find the "
                "protected-resource metadata (RFC 9728), so they cannot find the authorization server.",
                hint='Add path("", include(mcpforms.oauth.urls)) to the root urls.py.',
                id="mcpforms.W301",
            )
        )
    return messages


# Per-tool OAuth scopes (FormTool.scope) -------------------------------------------------------------------


@settings_check(Tags.security)
def check_tool_scopes(configured: dict[str, Any]) -> list[CheckMessage]:
    """Each scope a form tool needs is one django-oauth-toolkit grants, or no OAuth caller can use it."""
    if not oauth_in_use(configured):
        return []  # without OAuth every caller carries every scope: a tool's scope changes nothing
    if not toolkit_installed():
        return []  # mcpforms.E304 already says so
    from mcpforms.registry import registries

    offered = _offered_scopes()
    messages: list[CheckMessage] = []
    for server, registry in registries():
        for name, tool in registry.tools.items():
            if missing := [scope for scope in tool.required_scopes if scope not in offered]:
                messages.append(
                    Warning(
                        f"The tool {name!r}{on_server(server)} needs the scope "
                        f"{', '.join(map(repr, missing))}, which django-oauth-toolkit does not offer: no "
                        "access token can carry it, so every OAuth caller is refused it with a 403.",
                        hint="Add it to OAUTH2_PROVIDER['SCOPES'] (mcpforms.oauth.settings(SCOPES=...)), "
                        "or change the tool's scope.",
                        id="mcpforms.W326",
                    )
                )
    return messages
