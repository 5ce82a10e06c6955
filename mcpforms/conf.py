"""The ``MCPFORMS`` setting: one typed accessor, ``conf``, for every layer.

Values are read from Django's settings on first use and kept until the setting changes: the endpoint reads
several of them on every request, and ``setting_changed`` (which ``override_settings`` sends) clears them,
so a test or a reload never sees a stale value. A malformed value is the checks' business
(``mcpforms.checks``): ``conf`` returns what is configured, or the default.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings as django_settings
from django.core.signals import setting_changed

DEFAULTS: dict[str, Any] = {
    # Seconds a requestState token stays valid after it was minted.
    "STATE_MAX_AGE": 3600,
    # A dedicated key for everything mcpforms signs (requestState, URL-mode links); None signs with
    # SECRET_KEY (and SECRET_KEY_FALLBACKS).
    "STATE_KEY": None,
    "STATE_KEY_FALLBACKS": [],
    # A ModelChoiceField with more rows than this cannot become a select list an assistant can show.
    "MAX_MODEL_CHOICES": 100,
    # The MCP endpoint (mcpforms.api). Origins allowed besides the endpoint's own, e.g. "https://app.example".
    "ALLOWED_ORIGINS": [],
    # serverInfo sent in every result's _meta; a None version is mcpforms' own.
    "SERVER_NAME": "mcpforms",
    "SERVER_VERSION": None,
    # server/discover's guidance for the model, or None.
    "INSTRUCTIONS": None,
    # Entries per page of tools/list, prompts/list, resources/list and resources/templates/list.
    "PAGE_SIZE": 100,
    # ttlMs of cacheable results (discover, lists, resource reads); 0 means "stale at once".
    "CACHE_TTL_MS": 60000,
    # URL-mode elicitation (spec §7.3): seconds a link to the form page stays valid, and the absolute base
    # of that link ("https://forms.example.com"), since an MCP request does not say where the site lives.
    "URL_MODE_MAX_AGE": 900,
    "BASE_URL": None,
    # The 2025-11-25 era: where sessions and the calls waiting on a client's answer live (a dotted path to
    # a SessionStore class), and how long a client waits before it reconnects to a closed stream.
    "SESSION_STORE": "mcpforms.session_stores.DatabaseSessions",
    # Seconds a 2025-era session lives; a client told 404 afterwards opens a new one, as the spec says.
    "SESSION_MAX_AGE": 86400,
    "RETRY_MS": 1000,
    # How many 2025-era sessions and pending calls the server keeps for a caller (mcpforms.protocol.budgets);
    # None turns one off. A session lives SESSION_MAX_AGE, and many clients never DELETE theirs, so a user's
    # budget leaves room for several clients reconnecting many times a day, while bounding what one leaked
    # token can make the server keep.
    "SESSIONS_PER_PRINCIPAL": 100,
    # Anonymous callers, per client address (REMOTE_ADDR; an IPv6 /64): an office behind one NAT address
    # fits. Behind a reverse proxy every client has the proxy's address: have the server set REMOTE_ADDR
    # from the proxy's header (X-Forwarded-For is never trusted here), or set this to None.
    "ANONYMOUS_SESSIONS_PER_ADDRESS": 50,
    # And all anonymous callers together: a session now keeps a few hundred bytes, so this is a few MB,
    # while many addresses cannot fill the store (nor, with CacheSessions, evict users' sessions).
    "ANONYMOUS_SESSIONS": 5000,
    # Calls of one session that asked the user something, kept STATE_MAX_AGE: a person answers one form at
    # a time, and fifty in an hour is far beyond anyone's pace.
    "CALLS_PER_SESSION": 50,
    # Who may call the endpoint (mcpforms.auth): django-ninja auth classes by dotted path, tried in order,
    # each returning the calling user or None.
    "AUTHENTICATION": ["mcpforms.auth.AccessTokenAuth", "mcpforms.auth.SessionAuth"],
    # Callers no authentication recognised: False refuses them (401), True lets them use every tool their
    # (anonymous) permissions allow, and a list of tool names lets them see and use only those.
    "ALLOW_ANONYMOUS": False,
    # OAuth access tokens (mcpforms.oauth.OAuth2Auth): the scopes every token must carry (one base scope, so
    # a token granted for something else on the site is not one for the forms; [] requires none), and
    # whether a token for the whole origin (RFC 8707 resource "https://site.example") counts as one for the
    # endpoint ("https://site.example/mcp"): by default only a token for the endpoint itself does.
    "OAUTH_SCOPES": ["mcp"],
    "OAUTH_ACCEPT_ORIGIN_AUDIENCE": False,
    # Client ID Metadata Documents (mcpforms.oauth.cimd): the hosts whose documents the server fetches, in
    # ALLOWED_HOSTS syntax ("claude.ai", ".example.com"), or "*" for any public host; and the documents
    # used when the live fetch of exactly that client id fails ({client_id: document}; None means
    # mcpforms' own copies of claude.ai's, Claude Code's and ChatGPT's, {} none).
    "OAUTH_CIMD_HOSTS": ["claude.ai", "claude.com", "chatgpt.com", "vscode.dev", "insiders.vscode.dev"],
    "OAUTH_CIMD_PINNED": None,
    # Dynamic client registration (mcpforms.oauth.dcr, RFC 7591): how Claude (without CIMD), Cursor,
    # mcp-remote, VS Code and the Inspector sign up, anonymously. False answers 404 at the endpoint.
    "OAUTH_DCR": True,
    # Registrations per client address (REMOTE_ADDR; an IPv6 /64) per hour, or None. Hosted assistants
    # register every user's connection from a few cloud addresses (Claude twice per connect), so this is
    # generous; the cap below is what bounds storage.
    "OAUTH_DCR_PER_ADDRESS": 60,
    # Registrations that never got a token the server keeps at most (then 429), or None; and the days
    # after which `manage.py mcpforms_prune` deletes one (every real client signs in within minutes).
    "OAUTH_DCR_UNUSED": 1000,
    "OAUTH_DCR_UNUSED_DAYS": 2,
    # Custom redirect URI schemes allowed besides https and loopback http (RFC 8252 §7.1): Cursor's.
    # They must be in OAUTH2_PROVIDER["ALLOWED_REDIRECT_URI_SCHEMES"] too. javascript:, data: and file:
    # never are.
    "OAUTH_REDIRECT_SCHEMES": ["cursor"],
    # Limits on what a client may send (and make the server carry), each refused with a clear answer.
    # A request body: far above any MCP message, far below what would let one request exhaust memory.
    "MAX_BODY_BYTES": 1024 * 1024,
    # Nesting of a request's JSON: deeper than any MCP message needs, shallow enough for every recursion
    # after the edge (validation, digests, storage) to stay far from Python's recursion limit.
    "MAX_JSON_DEPTH": 64,
    # Characters in any one JSON string of a request, keys included: a long textarea answer or a
    # requestState (MAX_STATE_BYTES) fits, a string that only wastes memory and CPU does not.
    "MAX_STRING_LENGTH": 100_000,
    # Fields of one form tool: a form an assistant can walk a person through, and a bounded schema.
    "MAX_FORM_FIELDS": 100,
    # Rounds one flow may ask before the tool gives up: a client answering badly forever stops somewhere.
    "MAX_ROUNDS": 20,
    # Size of a requestState, minted or echoed: the answers it carries travel in every later request.
    "MAX_STATE_BYTES": 64 * 1024,
}

# Schemes no redirect URI may use, whatever OAUTH_REDIRECT_SCHEMES says: each runs or reads something in
# the browser or on the machine instead of handing the code to a client.
NEVER_REDIRECT_SCHEMES = frozenset({"javascript", "data", "file", "vbscript", "blob", "about", "filesystem"})


def user_settings() -> Any:
    """Return the raw ``MCPFORMS`` value (a dict when configured correctly)."""
    return getattr(django_settings, "MCPFORMS", {})


class Conf:
    """Typed attribute access to ``MCPFORMS``, with its defaults."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}

    def _get(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            configured = user_settings()
            value = (
                configured[name] if isinstance(configured, dict) and name in configured else DEFAULTS[name]
            )
            self._values[name] = value
            return value

    def forget(self) -> None:
        self._values.clear()

    def __getattr__(self, name: str) -> Any:  # only reached for names that are no setting
        raise AttributeError(f"MCPFORMS has no setting {name!r}; valid: {', '.join(DEFAULTS)}")

    # The configured value as is: the checks judge it, conf never coerces it.

    @property
    def STATE_MAX_AGE(self) -> int:
        value: int = self._get("STATE_MAX_AGE")
        return value

    @property
    def STATE_KEY(self) -> str | None:
        value: str | None = self._get("STATE_KEY")
        return value

    @property
    def STATE_KEY_FALLBACKS(self) -> list[str]:
        value: list[str] = self._get("STATE_KEY_FALLBACKS")
        return value

    @property
    def MAX_MODEL_CHOICES(self) -> int:
        value: int = self._get("MAX_MODEL_CHOICES")
        return value

    @property
    def ALLOWED_ORIGINS(self) -> list[str]:
        value: list[str] = self._get("ALLOWED_ORIGINS")
        return value

    @property
    def SERVER_NAME(self) -> str:
        value: str = self._get("SERVER_NAME")
        return value

    @property
    def SERVER_VERSION(self) -> str | None:
        value: str | None = self._get("SERVER_VERSION")
        return value

    @property
    def INSTRUCTIONS(self) -> str | None:
        value: str | None = self._get("INSTRUCTIONS")
        return value

    @property
    def PAGE_SIZE(self) -> int:
        value: int = self._get("PAGE_SIZE")
        return value

    @property
    def CACHE_TTL_MS(self) -> int:
        value: int = self._get("CACHE_TTL_MS")
        return value

    @property
    def URL_MODE_MAX_AGE(self) -> int:
        value: int = self._get("URL_MODE_MAX_AGE")
        return value

    @property
    def BASE_URL(self) -> str | None:
        value: str | None = self._get("BASE_URL")
        return value

    @property
    def SESSION_STORE(self) -> str:
        value: str = self._get("SESSION_STORE")
        return value

    @property
    def SESSION_MAX_AGE(self) -> int:
        value: int = self._get("SESSION_MAX_AGE")
        return value

    @property
    def RETRY_MS(self) -> int:
        value: int = self._get("RETRY_MS")
        return value

    @property
    def SESSIONS_PER_PRINCIPAL(self) -> int | None:
        value: int | None = self._get("SESSIONS_PER_PRINCIPAL")
        return value

    @property
    def ANONYMOUS_SESSIONS_PER_ADDRESS(self) -> int | None:
        value: int | None = self._get("ANONYMOUS_SESSIONS_PER_ADDRESS")
        return value

    @property
    def ANONYMOUS_SESSIONS(self) -> int | None:
        value: int | None = self._get("ANONYMOUS_SESSIONS")
        return value

    @property
    def CALLS_PER_SESSION(self) -> int | None:
        value: int | None = self._get("CALLS_PER_SESSION")
        return value

    @property
    def AUTHENTICATION(self) -> list[str]:
        value: list[str] = self._get("AUTHENTICATION")
        return value

    @property
    def ALLOW_ANONYMOUS(self) -> bool | list[str]:
        value: bool | list[str] = self._get("ALLOW_ANONYMOUS")
        return value

    @property
    def OAUTH_SCOPES(self) -> list[str]:
        value: list[str] = self._get("OAUTH_SCOPES")
        return value

    @property
    def OAUTH_ACCEPT_ORIGIN_AUDIENCE(self) -> bool:
        value: bool = self._get("OAUTH_ACCEPT_ORIGIN_AUDIENCE")
        return value

    @property
    def OAUTH_CIMD_HOSTS(self) -> str | list[str]:
        value: str | list[str] = self._get("OAUTH_CIMD_HOSTS")
        return value

    @property
    def OAUTH_CIMD_PINNED(self) -> dict[str, dict[str, Any]] | None:
        value: dict[str, dict[str, Any]] | None = self._get("OAUTH_CIMD_PINNED")
        return value

    @property
    def OAUTH_DCR(self) -> bool:
        value: bool = self._get("OAUTH_DCR")
        return value

    @property
    def OAUTH_DCR_PER_ADDRESS(self) -> int | None:
        value: int | None = self._get("OAUTH_DCR_PER_ADDRESS")
        return value

    @property
    def OAUTH_DCR_UNUSED(self) -> int | None:
        value: int | None = self._get("OAUTH_DCR_UNUSED")
        return value

    @property
    def OAUTH_DCR_UNUSED_DAYS(self) -> int:
        value: int = self._get("OAUTH_DCR_UNUSED_DAYS")
        return value

    @property
    def OAUTH_REDIRECT_SCHEMES(self) -> list[str]:
        value: list[str] = self._get("OAUTH_REDIRECT_SCHEMES")
        return value

    @property
    def MAX_BODY_BYTES(self) -> int:
        value: int = self._get("MAX_BODY_BYTES")
        return value

    @property
    def MAX_JSON_DEPTH(self) -> int:
        value: int = self._get("MAX_JSON_DEPTH")
        return value

    @property
    def MAX_STRING_LENGTH(self) -> int:
        value: int = self._get("MAX_STRING_LENGTH")
        return value

    @property
    def MAX_FORM_FIELDS(self) -> int:
        value: int = self._get("MAX_FORM_FIELDS")
        return value

    @property
    def MAX_ROUNDS(self) -> int:
        value: int = self._get("MAX_ROUNDS")
        return value

    @property
    def MAX_STATE_BYTES(self) -> int:
        value: int = self._get("MAX_STATE_BYTES")
        return value


conf = Conf()


def _forget(*, setting: str, **kwargs: Any) -> None:
    if setting == "MCPFORMS":
        conf.forget()


setting_changed.connect(_forget, dispatch_uid="mcpforms.conf")
