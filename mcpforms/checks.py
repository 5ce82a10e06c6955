"""System checks for the ``MCPFORMS`` setting. Each id is stable and has its own test."""

from __future__ import annotations

import contextlib
import gc
import re
import sys
from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.db import DatabaseError
from django.utils.module_loading import import_string

from mcpforms.conf import DEFAULTS, user_settings
from mcpforms.protocol.context import DEFAULT_SERVER


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
def check_registered_forms(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    """Every registered form, on every server, converts to fields (its ``__init__`` included), or the tool
    could never run."""
    from mcpforms.registry import registries

    return [
        Error(
            f"The form registered as {name!r}{_on(registry.server)} cannot be offered: {error}",
            hint="Register a converter with mcpforms.fields.register_converter, or change the field.",
            id="mcpforms.E101",
        )
        for registry in registries()
        for name, error in registry.conversion_failures()
    ]


def _on(server: Any) -> str:
    """Where a message's tool lives, for a server other than the default one."""
    return "" if server.key == DEFAULT_SERVER else f" on the server {server.key!r}"


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
    for registry in registries():
        server = registry.server
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
    from pathlib import Path

    from django.apps import apps

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


@register()
def check_page_only_fields_have_a_page(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    """A registered form with a password or file field can only be filled on the URL-mode page, which
    needs ``BASE_URL`` and ``mcpforms.urls``; say so now rather than at the first call."""
    from django.urls import NoReverseMatch, reverse

    from mcpforms.fields import FormConversionError
    from mcpforms.registry import registries

    needing: list[str] = []
    for registry in registries():
        for name, tool in registry.tools.items():
            try:
                fields = tool.fields_for(None)
            except (FormConversionError, DatabaseError):
                continue  # mcpforms.E101 reports forms that do not convert; the database may not exist yet
            if any(field.page_only for field in fields):
                needing.append(name + _on(registry.server))
    if not needing:
        return []
    configured = user_settings()
    base = configured.get("BASE_URL") if isinstance(configured, dict) else None
    try:
        reverse("mcpforms_ui:page", args=["token"])
        mounted = True
    except NoReverseMatch:
        mounted = False
    missing = [what for what, ok in (("MCPFORMS['BASE_URL']", base), ("mcpforms.urls", mounted)) if not ok]
    if not missing:
        return []
    return [
        Warning(
            f"Tools that ask for a password or a file ({', '.join(sorted(needing))}) need the URL-mode "
            f"page, but {' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing: they will "
            "answer every call with an error.",
            hint='Set MCPFORMS["BASE_URL"] to the site\'s address and add '
            'path("mcpforms/", include("mcpforms.urls")) to your urls.',
            id="mcpforms.W103",
        )
    ]


# The MCP endpoint (mcpforms.api) ---------------------------------------------------------------------------

_ORIGIN = re.compile(r"https?://[^/\s?#]+")


@register(Tags.security)
def check_endpoint_settings(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    """The endpoint's settings, and the Host check it relies on against DNS rebinding (spec §8.6)."""
    configured = user_settings()
    if not isinstance(configured, dict):
        return []  # mcpforms.E001 already says so
    messages: list[CheckMessage] = []
    origins = configured.get("ALLOWED_ORIGINS", [])
    if not (
        isinstance(origins, list | tuple)
        and all(isinstance(o, str) and _ORIGIN.fullmatch(o) for o in origins)
    ):
        messages.append(
            Error(
                "MCPFORMS['ALLOWED_ORIGINS'] must be a list of origins such as 'https://app.example.com'.",
                hint="An origin is a scheme and a host (and a port), with no path and no trailing slash.",
                id="mcpforms.E005",
            )
        )
    if "PAGE_SIZE" in configured and not _is_positive_int(configured["PAGE_SIZE"]):
        messages.append(
            Error(
                f"MCPFORMS['PAGE_SIZE'] must be a positive integer, not {configured['PAGE_SIZE']!r}.",
                id="mcpforms.E006",
            )
        )
    ttl = configured.get("CACHE_TTL_MS", 0)
    if not (isinstance(ttl, int) and not isinstance(ttl, bool) and ttl >= 0):
        messages.append(
            Error(
                f"MCPFORMS['CACHE_TTL_MS'] must be an integer of milliseconds, 0 or more, not {ttl!r}.",
                hint="0 tells clients a result is stale at once (spec: ttlMs).",
                id="mcpforms.E007",
            )
        )
    for name in ("SERVER_NAME", "SERVER_VERSION", "INSTRUCTIONS"):
        if name not in configured:
            continue
        value, optional = configured[name], name != "SERVER_NAME"
        if not ((optional and value is None) or (isinstance(value, str) and value)):
            expected = "a non-empty string or None" if optional else "a non-empty string"
            messages.append(
                Error(
                    f"MCPFORMS[{name!r}] must be {expected}, not {value!r}.",
                    id="mcpforms.E008",
                )
            )
    messages += _session_settings(configured)
    if "*" in settings.ALLOWED_HOSTS:
        messages.append(
            Warning(
                "ALLOWED_HOSTS contains '*': the MCP endpoint's Host check cannot stop DNS rebinding.",
                hint="List the host names the site is served under; only the Origin check is left otherwise.",
                id="mcpforms.W003",
            )
        )
    return messages


def _session_settings(configured: dict[str, Any]) -> list[CheckMessage]:
    """The 2025 era's settings: a store that imports and can count, positive numbers, and budgets."""
    messages: list[CheckMessage] = []
    store = configured.get("SESSION_STORE", DEFAULTS["SESSION_STORE"])
    store_class: Any = None
    if isinstance(store, str):
        with contextlib.suppress(ImportError):
            store_class = import_string(store)
    if store_class is None:
        messages.append(
            Error(
                f"MCPFORMS['SESSION_STORE'] must be the dotted path of a session store class, not {store!r}.",
                hint="mcpforms.sessions.DatabaseSessions (the default) or mcpforms.sessions.CacheSessions.",
                id="mcpforms.E009",
            )
        )
    elif missing := [name for name in _COUNTING if not callable(getattr(store_class, name, None))]:
        messages.append(
            Error(
                f"MCPFORMS['SESSION_STORE'] ({store}) has no {' nor '.join(missing)}: the 2025 era's "
                "budgets (SESSIONS_PER_PRINCIPAL, ANONYMOUS_SESSIONS_PER_ADDRESS, ANONYMOUS_SESSIONS, "
                "CALLS_PER_SESSION) cannot be kept, and every initialize would fail.",
                hint="Add them as mcpforms.protocol.sessions.SessionStore describes, or use "
                "mcpforms.sessions.DatabaseSessions or mcpforms.sessions.CacheSessions.",
                id="mcpforms.E015",
            )
        )
    for name in ("SESSION_MAX_AGE", "RETRY_MS"):
        if name in configured and not _is_positive_int(configured[name]):
            messages.append(
                Error(
                    f"MCPFORMS[{name!r}] must be a positive integer, not {configured[name]!r}.",
                    id="mcpforms.E010",
                )
            )
    for name in BUDGETS:
        value = configured.get(name, DEFAULTS[name])
        if value is not None and not _is_positive_int(value):
            messages.append(
                Error(
                    f"MCPFORMS[{name!r}] must be a positive integer, or None for no limit, not {value!r}.",
                    hint=f"Remove it to use the default, {DEFAULTS[name]!r}.",
                    id="mcpforms.E014",
                )
            )
    return messages


# How many 2025-era sessions and calls a caller may make the server keep (mcpforms.protocol.budgets).
BUDGETS = (
    "SESSIONS_PER_PRINCIPAL",
    "ANONYMOUS_SESSIONS_PER_ADDRESS",
    "ANONYMOUS_SESSIONS",
    "CALLS_PER_SESSION",
)
# What a store needs besides storing, to keep them.
_COUNTING = ("count_sessions", "count_calls")


# HTML forms: URL-mode elicitation (mcpforms.ui, mcpforms.views) -------------------------------------------

_BASE_URL = re.compile(r"https?://[^/\s?#]+(/[^\s?#]*)?")


@register()
def check_url_mode_settings(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    """The link of a URL-mode elicitation: how long it lives and where it points (spec §7.3)."""
    from urllib.parse import urlsplit

    from django.urls import NoReverseMatch, reverse

    configured = user_settings()
    if not isinstance(configured, dict):
        return []  # mcpforms.E001 already says so
    messages: list[CheckMessage] = []
    if "URL_MODE_MAX_AGE" in configured and not _is_positive_int(configured["URL_MODE_MAX_AGE"]):
        messages.append(
            Error(
                "MCPFORMS['URL_MODE_MAX_AGE'] must be a positive integer of seconds, "
                f"not {configured['URL_MODE_MAX_AGE']!r}.",
                id="mcpforms.E201",
            )
        )
    base = configured.get("BASE_URL")
    if base is None:
        return messages
    if not (isinstance(base, str) and _BASE_URL.fullmatch(base)):
        messages.append(
            Error(
                f"MCPFORMS['BASE_URL'] must be an absolute http(s) URL or None, not {base!r}.",
                hint="The site's own address, such as 'https://forms.example.com', with no query string.",
                id="mcpforms.E202",
            )
        )
        return messages
    if base.startswith("http://") and urlsplit(base).hostname not in ("localhost", "127.0.0.1", "::1"):
        messages.append(
            Warning(
                f"MCPFORMS['BASE_URL'] is {base!r}: URL-mode links should use HTTPS outside development.",
                hint="Serve the site over HTTPS and use an https:// BASE_URL (spec: URL-mode elicitation).",
                id="mcpforms.W201",
            )
        )
    try:
        reverse("mcpforms_ui:page", args=["token"])
    except NoReverseMatch:
        messages.append(
            Warning(
                "MCPFORMS['BASE_URL'] is set but the URL-mode page is not in the URLconf.",
                hint='Add path("mcpforms/", include("mcpforms.urls")) to your urls.',
                id="mcpforms.W202",
            )
        )
    return messages


# Limits on what a client may send (mcpforms.api, mcpforms.protocol, mcpforms.tools) ----------------------

LIMITS = (
    "MAX_BODY_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_STRING_LENGTH",
    "MAX_FORM_FIELDS",
    "MAX_ROUNDS",
    "MAX_STATE_BYTES",
)
# Below this, a client's own capabilities (_meta, clientCapabilities, extensions, a list in them) nest
# too deep to arrive.
MIN_JSON_DEPTH = 16


@register(Tags.security)
def check_limits(app_configs: Sequence[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Each limit is a positive integer, the depth one Python can recurse through, and a requestState the
    server mints can come back: it fits in one string and in one body."""
    configured = user_settings()
    if not isinstance(configured, dict):
        return []  # mcpforms.E001 already says so
    messages: list[CheckMessage] = []
    limits = {name: configured.get(name, DEFAULTS[name]) for name in LIMITS}
    for name, value in limits.items():
        if not _is_positive_int(value):
            messages.append(
                Error(
                    f"MCPFORMS[{name!r}] must be a positive integer, not {value!r}.",
                    hint=f"Remove it to use the default, {DEFAULTS[name]!r}.",
                    id="mcpforms.E011",
                )
            )
    if messages:
        return messages
    # Half the recursion limit: the rest is for the request's own frames and every recursion after the
    # edge (validation, the arguments' digest, storing answers) over the same document.
    deepest = sys.getrecursionlimit() // 2
    depth = limits["MAX_JSON_DEPTH"]
    if not MIN_JSON_DEPTH <= depth <= deepest:
        messages.append(
            Error(
                f"MCPFORMS['MAX_JSON_DEPTH'] is {depth}; it must be between {MIN_JSON_DEPTH} and {deepest}.",
                hint="Deeper documents would exhaust Python's recursion limit; shallower ones could not "
                "carry a client's capabilities. The default is 64.",
                id="mcpforms.E012",
            )
        )
    state = limits["MAX_STATE_BYTES"]
    room = min(limits["MAX_STRING_LENGTH"], limits["MAX_BODY_BYTES"])
    if state > room:
        messages.append(
            Error(
                f"MCPFORMS['MAX_STATE_BYTES'] is {state}, more than MAX_STRING_LENGTH or MAX_BODY_BYTES "
                f"allow ({room}): a requestState that long would be refused when the client echoes it.",
                hint="Keep MAX_STATE_BYTES at most MAX_STRING_LENGTH and well under MAX_BODY_BYTES.",
                id="mcpforms.E013",
            )
        )
    return messages


# Who may call the endpoint (mcpforms.auth, mcpforms.oauth) -----------------------------------------------

_OAUTH = "mcpforms.oauth.OAuth2Auth"


@register(Tags.security)
def check_auth_settings(app_configs: Sequence[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """The authentication methods import, anonymous access is said plainly, and OAuth is wired up."""
    configured = user_settings()
    if not isinstance(configured, dict):
        return []  # mcpforms.E001 already says so
    messages: list[CheckMessage] = []
    methods = configured.get("AUTHENTICATION", DEFAULTS["AUTHENTICATION"])
    broken = _unimportable(methods)
    if broken is not None:
        messages.append(
            Error(
                f"MCPFORMS['AUTHENTICATION'] must be a list of dotted paths to auth classes: {broken}.",
                hint="e.g. ['mcpforms.auth.AccessTokenAuth', 'mcpforms.auth.SessionAuth'], and "
                "'mcpforms.oauth.OAuth2Auth' with `pip install mcpforms[oauth]`.",
                id="mcpforms.E301",
            )
        )
    anonymous = configured.get("ALLOW_ANONYMOUS", False)
    if not (
        isinstance(anonymous, bool)
        or (isinstance(anonymous, list | tuple) and all(isinstance(name, str) for name in anonymous))
    ):
        messages.append(
            Error(
                "MCPFORMS['ALLOW_ANONYMOUS'] must be True, False or a list of tool names, "
                f"not {anonymous!r}.",
                id="mcpforms.E302",
            )
        )
    scopes = configured.get("OAUTH_SCOPES", DEFAULTS["OAUTH_SCOPES"])
    scopes_ok = isinstance(scopes, list | tuple) and all(isinstance(scope, str) and scope for scope in scopes)
    if not scopes_ok:
        messages.append(
            Error(
                f"MCPFORMS['OAUTH_SCOPES'] must be a list of scope names, not {scopes!r}.", id="mcpforms.E303"
            )
        )
    origin_wide = configured.get("OAUTH_ACCEPT_ORIGIN_AUDIENCE", DEFAULTS["OAUTH_ACCEPT_ORIGIN_AUDIENCE"])
    if not isinstance(origin_wide, bool):
        messages.append(
            Error(
                f"MCPFORMS['OAUTH_ACCEPT_ORIGIN_AUDIENCE'] must be True or False, not {origin_wide!r}.",
                id="mcpforms.E306",
            )
        )
    if broken is None and _OAUTH in methods:
        messages += _oauth_wiring()
        messages += _oauth_audience(configured.get("BASE_URL"))
        if scopes_ok:
            messages += _oauth_scopes_on_offer(scopes)
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
    if "oauth2_provider" not in settings.INSTALLED_APPS:
        return []  # mcpforms.E304 already says so
    from oauth2_provider.settings import oauth2_settings  # optional: mcpforms[oauth]

    offered = oauth2_settings.SCOPES_BACKEND_CLASS().get_all_scopes()
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


def _unimportable(methods: object) -> str | None:
    """What is wrong with the AUTHENTICATION value, or None."""
    if not isinstance(methods, list | tuple) or not all(isinstance(path, str) for path in methods):
        return f"got {methods!r}"
    for path in methods:
        try:
            method = import_string(path)
        except ImportError as error:
            return f"{path!r} does not import ({error})"
        if not callable(method):
            return f"{path!r} is not a class"
    return None


def _oauth_wiring() -> list[CheckMessage]:
    from django.urls import NoReverseMatch, reverse

    from mcpforms.oauth.resource import METADATA_URL_NAME

    messages: list[CheckMessage] = []
    if "oauth2_provider" not in settings.INSTALLED_APPS:
        messages.append(
            Error(
                "mcpforms.oauth.OAuth2Auth needs django-oauth-toolkit's app: add 'oauth2_provider' to "
                "INSTALLED_APPS.",
                id="mcpforms.E304",
            )
        )
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
