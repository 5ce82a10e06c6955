"""System checks for the ``MCPFORMS`` setting. Each id is stable and has its own test."""

from __future__ import annotations

import contextlib
import gc
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.db import DatabaseError
from django.utils.module_loading import import_string

from mcpforms.conf import DEFAULTS, NEVER_REDIRECT_SCHEMES, user_settings
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
            f"The form registered as {name!r}{_on(server)} cannot be offered: {error}",
            hint="Register a converter with mcpforms.fields.register_converter, or change the field.",
            id="mcpforms.E101",
        )
        for server, registry in registries()
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
    for server, registry in registries():
        for name, tool in registry.tools.items():
            try:
                fields = tool.fields_for(None)
            except (FormConversionError, DatabaseError):
                continue  # mcpforms.E101 reports forms that do not convert; the database may not exist yet
            if any(field.page_only for field in fields):
                needing.append(name + _on(server))
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
    """The 2025 era's settings: a store that imports, counts and adopts, positive numbers, and budgets."""
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
                hint="mcpforms.session_stores.DatabaseSessions (the default) or "
                "mcpforms.session_stores.CacheSessions.",
                id="mcpforms.E009",
            )
        )
    elif missing := [name for name in _STORE_NEEDS if not callable(getattr(store_class, name, None))]:
        # dict.fromkeys: the two counts fail the same way, said once.
        failures = "; ".join(dict.fromkeys(_STORE_NEEDS[name] for name in missing))
        messages.append(
            Error(
                f"MCPFORMS['SESSION_STORE'] ({store}) has no {' nor '.join(missing)}: {failures}.",
                hint="Add them as mcpforms.protocol.era2025.sessions.SessionStore describes, or use "
                "mcpforms.session_stores.DatabaseSessions or mcpforms.session_stores.CacheSessions.",
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
# What a store needs besides storing, and what fails without each.
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


# Client ID Metadata Documents (mcpforms.oauth.cimd) --------------------------------------------------------


@register(Tags.security)
def check_cimd_settings(app_configs: Sequence[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """The CIMD keys are well formed, and django-oauth-toolkit resolves documents through mcpforms."""
    configured = user_settings()
    if not isinstance(configured, dict):
        return []  # mcpforms.E001 already says so
    messages: list[CheckMessage] = []
    hosts = configured.get("OAUTH_CIMD_HOSTS", DEFAULTS["OAUTH_CIMD_HOSTS"])
    hosts_ok = hosts == "*" or (
        isinstance(hosts, list | tuple) and all(isinstance(h, str) and h for h in hosts)
    )
    if not hosts_ok:
        messages.append(
            Error(
                f"MCPFORMS['OAUTH_CIMD_HOSTS'] must be a list of host names or '*', not {hosts!r}.",
                hint="ALLOWED_HOSTS syntax: ['claude.ai', 'claude.com', 'chatgpt.com', '.example.com'].",
                id="mcpforms.E310",
            )
        )
    toolkit = "oauth2_provider" in settings.INSTALLED_APPS
    pins = configured.get("OAUTH_CIMD_PINNED", DEFAULTS["OAUTH_CIMD_PINNED"])
    wrong_pin = _pin_problem(pins, toolkit=toolkit)
    if wrong_pin is not None:
        messages.append(
            Error(
                f"MCPFORMS['OAUTH_CIMD_PINNED'] {wrong_pin}.",
                hint="None uses mcpforms' own copies, {} none; otherwise {client_id: document}, each "
                "document the JSON its https client_id URL serves.",
                id="mcpforms.E311",
            )
        )
    if toolkit:
        messages += _cimd_wiring(check_pins=hosts_ok and wrong_pin is None)
    return messages


def _pin_problem(pins: object, *, toolkit: bool) -> str | None:
    """What is wrong with the OAUTH_CIMD_PINNED value, or None."""
    if pins is None:
        return None
    if not isinstance(pins, dict):
        return f"must be None or a dict, not {type(pins).__name__}"
    for client_id, document in pins.items():
        if not (isinstance(client_id, str) and client_id.startswith("https://")):
            return f"has {client_id!r}, which is no https client_id URL"
        if not isinstance(document, dict) or document.get("client_id") != client_id:
            return f"has a document for {client_id!r} whose client_id is not {client_id!r}"
        uris = document.get("redirect_uris")
        if not (isinstance(uris, list) and uris and all(isinstance(uri, str) for uri in uris)):
            return f"has a document for {client_id!r} without a list of redirect_uris"
        if toolkit:
            from oauth2_provider.cimd import CIMDError  # optional: mcpforms[oauth]

            from mcpforms.oauth.cimd import normalise

            try:
                normalise(document)
            except CIMDError as error:
                return f"has a document for {client_id!r} that cannot be used: {error}"
    return None


def _cimd_wiring(*, check_pins: bool) -> list[CheckMessage]:
    """With CIMD on, documents are fetched by mcpforms' fetcher, only where a signed-in user asks."""
    from oauth2_provider.settings import oauth2_settings  # optional: mcpforms[oauth]

    from mcpforms.oauth import cimd

    if not oauth2_settings.CIMD_ENABLED:
        return []
    messages: list[CheckMessage] = []
    try:
        permissions = list(oauth2_settings.CIMD_REGISTRATION_PERMISSION_CLASSES)
        backend = oauth2_settings.OAUTH2_BACKEND_CLASS
        fetcher = oauth2_settings.CIMD_METADATA_FETCHER
    except ImportError:
        return []  # a dotted path that does not import fails loudly at the first request anyway
    if permissions and not any(issubclass(cls, cimd.ResolutionPermission) for cls in permissions):
        messages.append(
            Warning(
                "CIMD documents can be resolved from the anonymous token endpoint: anyone can make the "
                "server fetch a URL and store an OAuth application for it.",
                hint="Set OAUTH2_PROVIDER['CIMD_REGISTRATION_PERMISSION_CLASSES'] to "
                "['mcpforms.oauth.cimd.ResolutionPermission'] (mcpforms.oauth.settings() does).",
                id="mcpforms.W320",
            )
        )
    elif permissions and not issubclass(backend, cimd.SignedInAuthorization):
        messages.append(
            Error(
                "mcpforms.oauth.cimd.ResolutionPermission resolves no CIMD document with this "
                "OAUTH2_BACKEND_CLASS: nothing tells it a signed-in user is authorizing, so every assistant "
                "signing in with a client ID metadata document is an unknown client.",
                hint="Set OAUTH2_PROVIDER['OAUTH2_BACKEND_CLASS'] to 'mcpforms.oauth.cimd.Backend', or mix "
                "mcpforms.oauth.cimd.SignedInAuthorization into your own backend.",
                id="mcpforms.E312",
            )
        )
    if not issubclass(fetcher, cimd.Fetcher):
        messages.append(
            Warning(
                "OAUTH2_PROVIDER['CIMD_METADATA_FETCHER'] is not mcpforms.oauth.cimd.Fetcher: claude.ai's "
                "and ChatGPT's documents are refused as they publish them, nothing falls back to a pinned "
                "copy, and a slow document body can hold a worker far beyond CIMD_FETCH_TIMEOUT_SECONDS.",
                hint="Set it to 'mcpforms.oauth.cimd.Fetcher', or a subclass.",
                id="mcpforms.W321",
            )
        )
    if check_pins:
        unused = [client_id for client_id in cimd.pinned_documents() if not cimd.host_allowed(client_id)]
        if unused:
            messages.append(
                Warning(
                    f"MCPFORMS['OAUTH_CIMD_HOSTS'] refuses the host of the pinned {', '.join(unused)}: those "
                    "clients are never resolved, so their pins are never used.",
                    hint="Add their hosts to OAUTH_CIMD_HOSTS, or leave them out of OAUTH_CIMD_PINNED.",
                    id="mcpforms.W322",
                )
            )
    return messages


# Dynamic client registration (mcpforms.oauth.dcr) --------------------------------------------------------

# The registration budgets: a positive count, or None for no limit. The prune horizon must be a count.
DCR_BUDGETS = ("OAUTH_DCR_PER_ADDRESS", "OAUTH_DCR_UNUSED")
_URI_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")  # RFC 3986 §3.1


@register(Tags.security)
def check_dcr_settings(app_configs: Sequence[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """The registration settings' values, and that django-oauth-toolkit registers clients through
    mcpforms' rules when it registers them at all."""
    configured = user_settings()
    if not isinstance(configured, dict):
        return []  # mcpforms.E001 already says so
    messages: list[CheckMessage] = []
    enabled = configured.get("OAUTH_DCR", DEFAULTS["OAUTH_DCR"])
    if not isinstance(enabled, bool):
        messages.append(
            Error(f"MCPFORMS['OAUTH_DCR'] must be True or False, not {enabled!r}.", id="mcpforms.E313")
        )
    for name in (*DCR_BUDGETS, "OAUTH_DCR_UNUSED_DAYS"):
        value = configured.get(name, DEFAULTS[name])
        if not (_is_positive_int(value) or (value is None and name in DCR_BUDGETS)):
            expected = (
                "a positive integer, or None for no limit" if name in DCR_BUDGETS else "a positive integer"
            )
            messages.append(
                Error(
                    f"MCPFORMS[{name!r}] must be {expected}, not {value!r}.",
                    hint=f"Remove it to use the default, {DEFAULTS[name]!r}.",
                    id="mcpforms.E314",
                )
            )
    schemes = configured.get("OAUTH_REDIRECT_SCHEMES", DEFAULTS["OAUTH_REDIRECT_SCHEMES"])
    schemes_ok = _redirect_schemes_ok(schemes)
    if not schemes_ok:
        messages.append(
            Error(
                "MCPFORMS['OAUTH_REDIRECT_SCHEMES'] must be a list of custom URI scheme names, "
                f"not {schemes!r}.",
                hint="e.g. ['cursor'] for Cursor's cursor:// callback. https and loopback http are always "
                "allowed; javascript:, data: and file: never are.",
                id="mcpforms.E315",
            )
        )
    if "oauth2_provider" in settings.INSTALLED_APPS and enabled in (True, False):
        messages += _dcr_wiring(enabled, schemes if schemes_ok else [])
    return messages


def _redirect_schemes_ok(schemes: object) -> bool:
    return isinstance(schemes, list | tuple) and all(
        isinstance(scheme, str)
        and _URI_SCHEME.fullmatch(scheme)
        and scheme.lower() not in {"http", "https", *NEVER_REDIRECT_SCHEMES}
        for scheme in schemes
    )


def _dcr_wiring(enabled: bool, schemes: Sequence[str]) -> list[CheckMessage]:
    from oauth2_provider.settings import oauth2_settings  # optional: mcpforms[oauth]

    from mcpforms.oauth.dcr import RegistrationPermission

    if not oauth2_settings.DCR_ENABLED:
        return []  # nothing registers; metadata advertises no registration endpoint
    if not enabled:
        return [
            Warning(
                "MCPFORMS['OAUTH_DCR'] is False but OAUTH2_PROVIDER['DCR_ENABLED'] is True: the metadata "
                "advertises a registration endpoint that answers 404, so clients that register (Cursor, "
                "mcp-remote, Claude without CIMD) fail instead of using another way.",
                hint="Set OAUTH2_PROVIDER['DCR_ENABLED'] = False too, or MCPFORMS['OAUTH_DCR'] = True.",
                id="mcpforms.W325",
            )
        ]
    messages: list[CheckMessage] = []
    try:
        permissions = list(oauth2_settings.DCR_REGISTRATION_PERMISSION_CLASSES)
    except ImportError:
        permissions = []  # the toolkit reports its own unimportable setting at the first registration
    if not any(isinstance(p, type) and issubclass(p, RegistrationPermission) for p in permissions):
        messages.append(
            Warning(
                "OAUTH2_PROVIDER['DCR_REGISTRATION_PERMISSION_CLASSES'] lacks "
                "mcpforms.oauth.dcr.RegistrationPermission: registration is either open without a limit per "
                "address or on never-used clients, or closed to the anonymous registrations hosted "
                "assistants make.",
                hint="Use mcpforms.oauth.settings(), or add "
                "'mcpforms.oauth.dcr.RegistrationPermission' to the list.",
                id="mcpforms.W323",
            )
        )
    allowed = {scheme.lower() for scheme in oauth2_settings.ALLOWED_REDIRECT_URI_SCHEMES}
    if missing := [scheme for scheme in schemes if scheme.lower() not in allowed]:
        messages.append(
            Warning(
                f"MCPFORMS['OAUTH_REDIRECT_SCHEMES'] allows {', '.join(map(repr, missing))}, which "
                "django-oauth-toolkit does not redirect to: such redirect URIs are dropped at registration "
                "(Cursor's cursor:// callback among them).",
                hint="Add them to OAUTH2_PROVIDER['ALLOWED_REDIRECT_URI_SCHEMES'] (mcpforms.oauth.settings() "
                "does), or remove them from OAUTH_REDIRECT_SCHEMES.",
                id="mcpforms.W324",
            )
        )
    return messages


# Per-tool OAuth scopes (FormTool.scope) -------------------------------------------------------------------


@register(Tags.security)
def check_tool_scopes(app_configs: Sequence[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Each scope a form tool needs is one django-oauth-toolkit grants, or no OAuth caller can use it."""
    configured = user_settings()
    methods = (
        configured.get("AUTHENTICATION", DEFAULTS["AUTHENTICATION"]) if isinstance(configured, dict) else []
    )
    if not isinstance(methods, list | tuple) or _OAUTH not in methods:
        return []  # without OAuth every caller carries every scope: a tool's scope changes nothing
    if "oauth2_provider" not in settings.INSTALLED_APPS:
        return []  # mcpforms.E304 already says so
    from oauth2_provider.settings import oauth2_settings  # optional: mcpforms[oauth]

    from mcpforms.registry import registries

    offered = oauth2_settings.SCOPES_BACKEND_CLASS().get_all_scopes()
    messages: list[CheckMessage] = []
    for server, registry in registries():
        for name, tool in registry.tools.items():
            if missing := [scope for scope in tool.required_scopes if scope not in offered]:
                messages.append(
                    Warning(
                        f"The tool {name!r}{_on(server)} needs the scope "
                        f"{', '.join(map(repr, missing))}, which django-oauth-toolkit does not offer: no "
                        "access token can carry it, so every OAuth caller is refused it with a 403.",
                        hint="Add it to OAUTH2_PROVIDER['SCOPES'] (mcpforms.oauth.settings(SCOPES=...)), "
                        "or change the tool's scope.",
                        id="mcpforms.W326",
                    )
                )
    return messages


# The authorization server's settings, against mcpforms.oauth.settings() ----------------------------------


@dataclass(frozen=True)
class _Advice:
    """One ``OAUTH2_PROVIDER`` item that matters to hosted assistants, and what they do if it falls short."""

    key: str
    falls_short: Callable[[Any, Any], bool]  # (the live value, the preset's)
    consequence: str
    id: str
    only_if: str | None = None  # a key whose live value must be true for this one to matter


def _is_false(live: Any, recommended: Any) -> bool:
    return not live  # a callable (PKCE_REQUIRED per client) counts as true


def _loaded(value: Any) -> Any:
    return import_string(value) if isinstance(value, str) else value


def _not_a_kind_of(live: Any, recommended: Any) -> bool:
    """Whether the live class (or any of a list) is not the preset's or a subclass of it."""
    paths = recommended if isinstance(recommended, tuple) else [recommended]
    try:
        wanted = [_loaded(path) for path in paths]
    except ImportError:
        return False  # mcpforms' own class does not import here: nothing to compare with
    try:
        found = [_loaded(path) for path in (live if isinstance(live, list | tuple) else [live])]
    except ImportError:
        return True  # the toolkit cannot import it either
    return not all(any(isinstance(cls, type) and issubclass(cls, each) for cls in found) for each in wanted)


def _without_none(live: Any, recommended: Any) -> bool:
    return "none" not in (live or ())


def _other_set(live: Any, recommended: Any) -> bool:
    return set(live or ()) != set(recommended)


def _longer(live: Any, recommended: Any) -> bool:
    return not _is_positive_int(live) or live > recommended


_ADVICE = [
    _Advice(
        key="CIMD_ENABLED",
        falls_short=_is_false,
        consequence="client ID metadata documents are off, so Claude, ChatGPT and VS Code fall back to "
        "dynamic registration, or cannot sign in where that is off too",
        id="mcpforms.W303",
    ),
    _Advice(
        key="CIMD_METADATA_FETCHER",
        falls_short=_not_a_kind_of,
        consequence="django-oauth-toolkit's own fetcher refuses the documents of claude.ai (an extra "
        "jwt-bearer grant) and ChatGPT (private_key_jwt offered with none) as they are published",
        id="mcpforms.W304",
        only_if="CIMD_ENABLED",
    ),
    _Advice(
        key="CIMD_REGISTRATION_PERMISSION_CLASSES",
        falls_short=_not_a_kind_of,
        consequence="anyone who posts to the anonymous token endpoint can make the server fetch a URL and "
        "store a client",
        id="mcpforms.W305",
        only_if="CIMD_ENABLED",
    ),
    _Advice(
        key="OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED",
        falls_short=_without_none,
        consequence="'none' is missing from the token endpoint's auth methods: Claude uses its client "
        "metadata document only when it is listed, so Claude falls back to dynamic registration",
        id="mcpforms.W306",
        only_if="CIMD_ENABLED",
    ),
    _Advice(
        key="DCR_ENABLED",
        falls_short=_is_false,
        consequence="dynamic registration is off: Cursor, mcp-remote, the MCP Inspector and Claude without "
        "client metadata documents cannot register",
        id="mcpforms.W307",
    ),
    _Advice(
        key="DCR_REGISTRATION_PERMISSION_CLASSES",
        falls_short=_not_a_kind_of,
        consequence="hosted assistants register anonymously: the toolkit's default turns them away, and "
        "letting everyone in has no throttle, no cap on unused registrations and no redirect URI policy",
        id="mcpforms.W308",
        only_if="DCR_ENABLED",
    ),
    _Advice(
        key="OAUTH2_GRANT_TYPES_SUPPORTED",
        falls_short=_other_set,
        consequence="the metadata advertises another grant type set than an MCP client may use",
        id="mcpforms.W309",
    ),
    _Advice(
        key="OAUTH2_BACKEND_CLASS",
        falls_short=_not_a_kind_of,
        consequence="the authorization response's iss comes from the request's Host header; a client whose "
        "browser reached the site under another name than BASE_URL's throws the code away",
        id="mcpforms.W310",
        only_if="COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS",
    ),
    _Advice(
        key="PKCE_REQUIRED",
        falls_short=_is_false,
        consequence="an authorization code without PKCE can be redeemed by whoever intercepts it (OAuth 2.1)",
        id="mcpforms.W311",
    ),
    _Advice(
        key="COMPLIANT_BCP_RFC9700_PKCE_METHOD",
        falls_short=_is_false,
        consequence="'plain' PKCE is advertised and accepted; MCP clients must use S256",
        id="mcpforms.W312",
    ),
    _Advice(
        key="COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS",
        falls_short=_is_false,
        consequence="authorization responses carry no iss (RFC 9207): ChatGPT then uses a client per "
        "connector instead of its stable one, and 2026-07-28 clients cannot detect a mix-up",
        id="mcpforms.W313",
    ),
    _Advice(
        key="COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT",
        falls_short=_is_false,
        consequence="the implicit grant is accepted (OAuth 2.1 removed it)",
        id="mcpforms.W314",
    ),
    _Advice(
        key="COMPLIANT_BCP_RFC9700_PASSWORD_GRANT",
        falls_short=_is_false,
        consequence="the password grant is accepted (OAuth 2.1 removed it): a client could ask for the "
        "user's password",
        id="mcpforms.W315",
    ),
    _Advice(
        key="ALLOW_LOCALHOST_LOOPBACK",
        falls_short=_is_false,
        consequence="Claude Code's http://localhost:<any port>/callback is refused (RFC 8252 §7.3)",
        id="mcpforms.W316",
    ),
    _Advice(
        key="ACCESS_TOKEN_EXPIRE_SECONDS",
        falls_short=_longer,
        consequence="access tokens outlive an hour; the MCP spec asks for short-lived ones, since "
        "assistants keep them in their stores",
        id="mcpforms.W317",
    ),
    _Advice(
        key="ROTATE_REFRESH_TOKEN",
        falls_short=_is_false,
        consequence="refresh tokens do not rotate, which OAuth 2.1 requires for public clients (every "
        "client metadata document client is one)",
        id="mcpforms.W318",
    ),
    _Advice(
        key="OAUTH2_VALIDATOR_CLASS",
        falls_short=_not_a_kind_of,
        consequence="tokens are issued for any resource, and unbound ones, which every MCP endpoint "
        "refuses, when a client names none: it signs in again and again",
        id="mcpforms.W319",
    ),
]
OAUTH_PROVIDER_CHECK_IDS = {advice.id for advice in _ADVICE} | {"mcpforms.E307", "mcpforms.E308"}


@register(Tags.security)
def check_oauth_provider(app_configs: Sequence[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """``OAUTH2_PROVIDER`` against ``mcpforms.oauth.settings()``, item by item, where OAuth is configured."""
    configured = user_settings()
    methods = (
        configured.get("AUTHENTICATION", DEFAULTS["AUTHENTICATION"]) if isinstance(configured, dict) else []
    )
    if not isinstance(methods, list | tuple) or _OAUTH not in methods:
        return []
    if "oauth2_provider" not in settings.INSTALLED_APPS:
        return []  # mcpforms.E304 already says so
    from oauth2_provider.settings import DEFAULTS as TOOLKIT_DEFAULTS  # optional: mcpforms[oauth]

    from mcpforms.oauth import settings as preset

    live = getattr(settings, "OAUTH2_PROVIDER", None) or {}
    if not isinstance(live, dict):
        return []  # the toolkit fails on it at once
    messages: list[CheckMessage] = [
        Error(
            f"OAUTH2_PROVIDER has a key django-oauth-toolkit does not know, {unknown!r}: it is ignored.",
            hint=f"Check its spelling: did you mean {_closest(unknown, TOOLKIT_DEFAULTS)!r}?",
            id="mcpforms.E307",
        )
        for unknown in sorted(set(live) - set(TOOLKIT_DEFAULTS))
    ]
    messages += _issuer_endpoint(live)
    recommended = preset()
    for advice in _ADVICE:
        if advice.only_if is not None and not live.get(advice.only_if, TOOLKIT_DEFAULTS[advice.only_if]):
            continue
        value = live.get(advice.key, TOOLKIT_DEFAULTS[advice.key])
        if advice.falls_short(value, recommended[advice.key]):
            messages.append(
                Warning(
                    f"OAUTH2_PROVIDER[{advice.key!r}] is {value!r}: {advice.consequence}.",
                    hint=f"Use OAUTH2_PROVIDER = mcpforms.oauth.settings(), which sets it to "
                    f"{recommended[advice.key]!r}.",
                    id=advice.id,
                )
            )
    return messages


def _closest(name: str, known: Any) -> str:
    import difflib

    found = difflib.get_close_matches(name, list(known), n=1)
    return found[0] if found else "ACCESS_TOKEN_EXPIRE_SECONDS"


def _issuer_endpoint(live: dict[str, Any]) -> list[CheckMessage]:
    """An OIDC_ISS_ENDPOINT is the ``iss`` the toolkit puts in responses: it must be the published issuer."""
    from mcpforms.oauth.metadata import issuer

    configured, published = live.get("OIDC_ISS_ENDPOINT"), issuer()
    if not configured or published is None or configured == published:
        return []
    return [
        Error(
            f"OAUTH2_PROVIDER['OIDC_ISS_ENDPOINT'] is {configured!r}, but the authorization server's "
            f"metadata names the issuer {published!r}: clients refuse every response whose iss differs.",
            hint=f"Remove OIDC_ISS_ENDPOINT, or set it to {published!r}.",
            id="mcpforms.E308",
        )
    ]
