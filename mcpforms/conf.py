"""The ``MCPFORMS`` setting, each key declared once as a row of ``Conf``.

A row names the key's default, what a valid value is, the check id that reports any other value, and one
line of help. From the rows come the accessor (``conf.STATE_MAX_AGE``), the value checks
(``mcpforms.checks``) and the settings reference of the documentation, ``docs/reference/settings.md``
(``python -m mcpforms.conf`` prints it, ``--write`` puts it there).

Values are read from Django's settings on first use and kept until the setting changes: the endpoint reads
several of them on every request, and ``setting_changed`` (which ``override_settings`` sends) clears them,
so a test or a reload never sees a stale value. A malformed value is the checks' business: ``conf``
returns what is configured, or the default, and never coerces it.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Generic, TypeVar, overload

from django.conf import settings as django_settings
from django.core.signals import setting_changed
from django.utils.module_loading import import_string

T = TypeVar("T")

# Where the documentation is published: what check hints and messages link to, never a repository path.
DOCUMENTATION = "https://mcpforms.readthedocs.io/en/latest/"


def docs_page(page: str) -> str:
    """The address of a page of the documentation, as its source path names it: ``reference/settings``
    (with an optional ``#anchor``)."""
    path, _, anchor = page.partition("#")
    return f"{DOCUMENTATION}{path}.html" + (f"#{anchor}" if anchor else "")


def install_extra(extra: str) -> str:
    """How a hint says to install an extra: from mcpforms' checkout, since it is not on PyPI yet, and
    quoted, since zsh reads brackets as a pattern."""
    return f'python -m pip install "path/to/mcpforms[{extra}]" (from mcpforms\' checkout: not on PyPI yet)'


class Section(Enum):
    """A heading of the settings reference (unique on its page, where it is an anchor); each check of the
    settings' values reports the rows of some sections."""

    SIGNING = "Signing and forms"
    ENDPOINT = "The endpoint"
    SESSIONS = "2025-era sessions"
    URL_MODE = "URL mode"
    LIMITS = "Request limits"
    AUTH = "Authentication"
    OAUTH_CIMD = "OAuth: client ID metadata documents"
    OAUTH_DCR = "OAuth: dynamic client registration"
    TASKS = "Tasks and approvals"
    CLEANUP = "Expired rows"


# What a valid value is -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kind:
    """What one setting accepts, in words (for its check's message and the reference) and as a test."""

    expects: str  # completes "must be …"
    accepts: Callable[[Any], bool]
    # Why a value is refused, completing "MCPFORMS['X'] …", where that says more than the kind itself.
    explain: Callable[[Any], str | None] | None = None
    echo: bool = True  # a key's value stays out of the message: check output ends up in logs

    def problem(self, value: object) -> str | None:
        """What is wrong with ``value``, completing "MCPFORMS['X'] …", or None."""
        if self.explain is not None:
            return self.explain(value)
        if self.accepts(value):
            return None
        return f"must be {self.expects}" + (f", not {value!r}" if self.echo else "")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_list_of(value: object, item: Callable[[Any], bool]) -> bool:
    return isinstance(value, list | tuple) and all(item(each) for each in value)


def integer(*, minimum: int = 1, unit: str = "", none_means: str | None = None) -> Kind:
    """An integer of at least ``minimum``; with ``none_means``, None too."""
    words = "a positive integer" if minimum == 1 else "an integer"
    words += f" of {unit}" if unit else ""
    words += f", {minimum} or more" if minimum != 1 else ""
    words += f", or None for {none_means}" if none_means else ""
    return Kind(
        words,
        lambda value: (value is None and none_means is not None) or (_is_int(value) and value >= minimum),
    )


def text(*, optional: bool = False) -> Kind:
    return Kind(
        "a non-empty string or None" if optional else "a non-empty string",
        lambda value: (optional and value is None) or (isinstance(value, str) and bool(value)),
    )


BOOLEAN = Kind("True or False", lambda value: isinstance(value, bool))


def strings(expects: str, item: Callable[[str], bool] = bool, *, echo: bool = True) -> Kind:
    """A list (or tuple) of strings, each one ``item`` accepts."""
    return Kind(
        expects, lambda value: _is_list_of(value, lambda s: isinstance(s, str) and item(s)), echo=echo
    )


def _keys_accept(value: object) -> bool:
    return _is_list_of(value, lambda key: isinstance(key, str | bytes))


def _signing_key_accepts(value: object) -> bool:
    return value is None or (isinstance(value, str | bytes) and len(value) >= 32)


def explained(expects: str, explain: Callable[[Any], str | None]) -> Kind:
    """A kind whose refusals say more than what it expects: ``explain`` returns why, or None."""
    return Kind(expects, lambda value: explain(value) is None, explain=explain)


def _dotted_path(value: object) -> bool:
    if not isinstance(value, str):
        return False
    with contextlib.suppress(ImportError):
        return callable(import_string(value))
    return False


_AUTH_EXPECTS = "a list of dotted paths to auth classes"


def _auth_problem(methods: object) -> str | None:
    """What is wrong with an AUTHENTICATION value, or None."""
    if not isinstance(methods, list | tuple) or not all(isinstance(path, str) for path in methods):
        return f"must be {_AUTH_EXPECTS}: got {methods!r}"
    for path in methods:
        try:
            method = import_string(path)
        except Exception as error:  # an app's models imported too early raise more than ImportError
            return f"must be {_AUTH_EXPECTS}: {path!r} does not import ({type(error).__name__}: {error})"
        if not callable(method):
            return f"must be {_AUTH_EXPECTS}: {path!r} is not a class"
    return None


def _pins_problem(pins: object) -> str | None:
    """What is wrong with the shape of an OAUTH_CIMD_PINNED value, or None. Whether django-oauth-toolkit can
    use each document is mcpforms.checks' to say, under the same id."""
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
    return None


#: The default of WIZARD_FILE_STORAGE: an alias a project may define, and a private folder while it does not.
WIZARD_FILES_ALIAS = "mcpforms_wizard_files"


def _storage_alias_problem(alias: object) -> str | None:
    """What is wrong with a WIZARD_FILE_STORAGE value, or None: the default name needs no alias, since a
    private folder stands in for it."""
    if not isinstance(alias, str) or not alias:
        return f"must be the name of a STORAGES alias, not {alias!r}"
    if alias != WIZARD_FILES_ALIAS and alias not in getattr(django_settings, "STORAGES", {}):
        return f"names {alias!r}, which STORAGES does not define"
    return None


_ORIGIN = re.compile(r"https?://[^/\s?#]+")
_BASE_URL = re.compile(r"https?://[^/\s?#]+(/[^\s?#]*)?")
_URI_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")  # RFC 3986 §3.1


def _is_base_url(value: object) -> bool:
    return isinstance(value, str) and bool(_BASE_URL.fullmatch(value))


# Schemes no redirect URI may use, whatever OAUTH_REDIRECT_SCHEMES says: each runs or reads something in
# the browser or on the machine instead of handing the code to a client.
NEVER_REDIRECT_SCHEMES = frozenset({"javascript", "data", "file", "vbscript", "blob", "about", "filesystem"})


def _custom_scheme(scheme: str) -> bool:
    return bool(_URI_SCHEME.fullmatch(scheme)) and scheme.lower() not in {
        "http",
        "https",
        *NEVER_REDIRECT_SCHEMES,
    }


# Below this, a client's own capabilities (_meta, clientCapabilities, extensions, a list in them) nest
# too deep to arrive.
MIN_JSON_DEPTH = 16


def deepest_json() -> int:
    # Half the recursion limit: the rest is for the request's own frames and every recursion after the
    # edge (validation, the arguments' digest, storing answers) over the same document.
    return sys.getrecursionlimit() // 2


@dataclass(frozen=True)
class Bounds:
    """A narrower range than a setting's kind, reported under an id of its own."""

    minimum: int
    maximum: Callable[[], int]
    says: str  # the range in words, for the reference
    why: str  # the hint's reason
    check: str

    def contains(self, value: int) -> bool:
        return self.minimum <= value <= self.maximum()


# The rows -------------------------------------------------------------------------------------------------


class Setting(Generic[T]):
    """One key of ``MCPFORMS``: read as ``conf.<key>``, checked as its kind says, documented by ``help``."""

    name: str

    def __init__(
        self,
        default: T,
        kind: Kind,
        *,
        check: str,
        section: Section,
        help: str,
        hint: str | None = None,
        bounds: Bounds | None = None,
        related: tuple[str, ...] = (),
    ) -> None:
        self.default = default
        self.kind = kind
        self.check = check
        self.section = section
        self.help = help
        self.hint = hint if hint is not None else f"Remove it to use the default, {default!r}."
        self.bounds = bounds
        # Checks besides the value's own that report on this setting (with others, or with the project).
        self.related = related

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type) -> Setting[T]: ...

    @overload
    def __get__(self, instance: Conf, owner: type) -> T: ...

    def __get__(self, instance: Conf | None, owner: type) -> Setting[T] | T:
        if instance is None:
            return self
        value: T = instance.value(self.name)
        return value


def user_settings() -> Any:
    """Return the raw ``MCPFORMS`` value (a dict when configured correctly)."""
    return getattr(django_settings, "MCPFORMS", {})


class Conf:
    """Typed attribute access to ``MCPFORMS``, with its defaults: the table of every setting."""

    # Signing and forms

    STATE_MAX_AGE: Setting[int] = Setting(
        3600,
        integer(unit="seconds"),
        check="mcpforms.E002",
        section=Section.SIGNING,
        help="How long a requestState stays valid after it was minted.",
    )
    STATE_KEY: Setting[str | None] = Setting(
        None,
        Kind("a string of at least 32 characters, or None", _signing_key_accepts, echo=False),
        check="mcpforms.E003",
        section=Section.SIGNING,
        help="A dedicated key for everything mcpforms signs (requestState, URL-mode links); None signs "
        "with `SECRET_KEY` and `SECRET_KEY_FALLBACKS`.",
        hint="None signs requestState with SECRET_KEY and SECRET_KEY_FALLBACKS.",
    )
    STATE_KEY_FALLBACKS: Setting[list[str]] = Setting(
        [],
        Kind("a list of strings", _keys_accept, echo=False),
        check="mcpforms.E004",
        section=Section.SIGNING,
        help="Earlier values of `STATE_KEY`, still accepted while it is rotated.",
        related=("mcpforms.W002",),
    )
    # A ModelChoiceField with more rows than this cannot become a select list an assistant can show.
    MAX_MODEL_CHOICES: Setting[int] = Setting(
        100,
        integer(),
        check="mcpforms.E002",
        section=Section.SIGNING,
        help="The most rows a `ModelChoiceField` offers as a select list; past it, the field is asked as "
        "plain text (the pk the form takes), which the form still validates, and the log says so once.",
    )

    # The endpoint

    ALLOWED_ORIGINS: Setting[list[str]] = Setting(
        [],
        strings("a list of origins such as 'https://app.example.com'", lambda o: bool(_ORIGIN.fullmatch(o))),
        check="mcpforms.E005",
        section=Section.ENDPOINT,
        help="Browser origins that may call the endpoint besides its own.",
        hint="An origin is a scheme and a host (and a port), with no path and no trailing slash.",
    )
    SERVER_NAME: Setting[str] = Setting(
        "mcpforms",
        text(),
        check="mcpforms.E008",
        section=Section.ENDPOINT,
        help="The `serverInfo` name sent in every result's `_meta`.",
    )
    SERVER_VERSION: Setting[str | None] = Setting(
        None,
        text(optional=True),
        check="mcpforms.E008",
        section=Section.ENDPOINT,
        help="The `serverInfo` version; None is mcpforms' own.",
    )
    INSTRUCTIONS: Setting[str | None] = Setting(
        None,
        text(optional=True),
        check="mcpforms.E008",
        section=Section.ENDPOINT,
        help="`server/discover`'s guidance for the model, or None.",
    )
    PAGE_SIZE: Setting[int] = Setting(
        100,
        integer(),
        check="mcpforms.E006",
        section=Section.ENDPOINT,
        help="Entries per page of `tools/list`, `prompts/list`, `resources/list` and "
        "`resources/templates/list`.",
    )
    CACHE_TTL_MS: Setting[int] = Setting(
        60000,
        integer(minimum=0, unit="milliseconds"),
        check="mcpforms.E007",
        section=Section.ENDPOINT,
        help="`ttlMs` of discovery, lists and resource reads: how soon clients list again.",
        hint="0 tells clients a result is stale at once (spec: ttlMs).",
    )

    # 2025-era sessions

    SESSION_STORE: Setting[str] = Setting(
        "mcpforms.session_stores.DatabaseSessions",
        Kind("the dotted path of a session store class", _dotted_path),
        check="mcpforms.E009",
        section=Section.SESSIONS,
        help="Where 2025-era sessions and the calls waiting on a client's answer live; "
        "`mcpforms.session_stores.CacheSessions` keeps them in Django's `default` cache.",
        hint="mcpforms.session_stores.DatabaseSessions (the default) or "
        "mcpforms.session_stores.CacheSessions.",
        related=("mcpforms.E015",),
    )
    SESSION_MAX_AGE: Setting[int] = Setting(
        86400,
        integer(unit="seconds"),
        check="mcpforms.E010",
        section=Section.SESSIONS,
        help="How long a 2025-era session lives; a client told 404 afterwards opens a new one.",
    )
    RETRY_MS: Setting[int] = Setting(
        1000,
        integer(unit="milliseconds"),
        check="mcpforms.E010",
        section=Section.SESSIONS,
        help="How soon a 2025-era client polls a call's stream again.",
    )
    # The budgets (mcpforms.protocol.budgets), answered 429 when full. A session lives SESSION_MAX_AGE, and
    # many clients never DELETE theirs, so a user's budget leaves room for several clients reconnecting many
    # times a day, while bounding what one leaked token can make the server keep.
    SESSIONS_PER_PRINCIPAL: Setting[int | None] = Setting(
        100,
        integer(none_means="no limit"),
        check="mcpforms.E014",
        section=Section.SESSIONS,
        help="Live 2025-era sessions of one user.",
    )
    # An office behind one NAT address fits. Behind a reverse proxy every client has the proxy's address:
    # have the server set REMOTE_ADDR from the proxy's header (X-Forwarded-For is never trusted here), or
    # set this to None.
    ANONYMOUS_SESSIONS_PER_ADDRESS: Setting[int | None] = Setting(
        50,
        integer(none_means="no limit"),
        check="mcpforms.E014",
        section=Section.SESSIONS,
        help="Live 2025-era sessions of anonymous callers from one address (`REMOTE_ADDR`; an IPv6 /64).",
    )
    # A session keeps a few hundred bytes, so this is a few MB, while many addresses cannot fill the store
    # (nor, with CacheSessions, evict users' sessions).
    ANONYMOUS_SESSIONS: Setting[int | None] = Setting(
        5000,
        integer(none_means="no limit"),
        check="mcpforms.E014",
        section=Section.SESSIONS,
        help="Live 2025-era sessions of all anonymous callers together.",
    )
    # Each kept STATE_MAX_AGE: a person answers one form at a time, and fifty in an hour is far beyond
    # anyone's pace.
    CALLS_PER_SESSION: Setting[int | None] = Setting(
        50,
        integer(none_means="no limit"),
        check="mcpforms.E014",
        section=Section.SESSIONS,
        help="Calls of one 2025-era session waiting on the user.",
    )

    # URL mode (spec §7.3)

    URL_MODE_MAX_AGE: Setting[int] = Setting(
        900,
        integer(unit="seconds"),
        check="mcpforms.E201",
        section=Section.URL_MODE,
        help="How long a URL-mode link to a form's page stays valid.",
    )
    # An MCP request does not say where the site lives.
    BASE_URL: Setting[str | None] = Setting(
        None,
        Kind("an absolute http(s) URL or None", lambda url: url is None or _is_base_url(url)),
        check="mcpforms.E202",
        section=Section.URL_MODE,
        help="The site's public address: URL-mode links point there, and OAuth tokens are bound to it.",
        hint="The site's own address, such as 'https://forms.example.com', with no query string.",
        related=("mcpforms.W201", "mcpforms.W202", "mcpforms.W103", "mcpforms.E305"),
    )

    WIZARD_FILE_STORAGE: Setting[str] = Setting(
        WIZARD_FILES_ALIAS,
        explained("the name of a STORAGES alias", _storage_alias_problem),
        check="mcpforms.E203",
        section=Section.URL_MODE,
        help="The `STORAGES` alias where a wizard's step filled on the URL-mode page keeps its files, "
        "encrypted, until the flow ends. While `STORAGES` has no alias of the default name, they go to a "
        "folder only the server's user may read, in the system's temporary directory: enough for one "
        "host; a site served by several defines the alias, on a private storage they share.",
    )

    # Limits on what a client may send (and make the server carry), each refused with a clear answer.

    # Far above any MCP message, far below what would let one request exhaust memory.
    MAX_BODY_BYTES: Setting[int] = Setting(
        1024 * 1024,
        integer(unit="bytes"),
        check="mcpforms.E011",
        section=Section.LIMITS,
        help="The largest request body; a larger one is answered 413.",
        related=("mcpforms.E013",),
    )
    # Deeper than any MCP message needs, shallow enough for every recursion after the edge (validation,
    # digests, storage) to stay far from Python's recursion limit.
    MAX_JSON_DEPTH: Setting[int] = Setting(
        64,
        integer(),
        check="mcpforms.E011",
        section=Section.LIMITS,
        help="The deepest nesting of a request's JSON; deeper is `-32700`.",
        bounds=Bounds(
            MIN_JSON_DEPTH,
            deepest_json,
            says=f"{MIN_JSON_DEPTH} to half of Python's recursion limit (500 by default)",
            why="Deeper documents would exhaust Python's recursion limit; shallower ones could not carry a "
            "client's capabilities.",
            check="mcpforms.E012",
        ),
    )
    # A long textarea answer or a requestState (MAX_STATE_BYTES) fits, a string that only wastes memory
    # and CPU does not.
    MAX_STRING_LENGTH: Setting[int] = Setting(
        100_000,
        integer(unit="characters"),
        check="mcpforms.E011",
        section=Section.LIMITS,
        help="The most characters in any one JSON string of a request, keys included; longer is `-32602`.",
        related=("mcpforms.E013",),
    )
    # A form an assistant can walk a person through, and a bounded schema.
    MAX_FORM_FIELDS: Setting[int] = Setting(
        100,
        integer(),
        check="mcpforms.E011",
        section=Section.LIMITS,
        help="The most fields of one form tool: a tool with more is not served (`mcpforms.E406`), and the "
        "admin refuses to save such a form.",
        related=("mcpforms.E406",),
    )
    # A client answering badly forever stops somewhere.
    MAX_ROUNDS: Setting[int] = Setting(
        20,
        integer(),
        check="mcpforms.E011",
        section=Section.LIMITS,
        help="The most times one flow asks the user; then an `isError` result says to start over.",
        related=("mcpforms.W413",),
    )
    # The answers a requestState carries travel in every later request.
    MAX_STATE_BYTES: Setting[int] = Setting(
        64 * 1024,
        integer(unit="bytes"),
        check="mcpforms.E011",
        section=Section.LIMITS,
        help="The largest requestState: echoed longer is `-32602`, minted longer an `isError` result.",
        related=("mcpforms.E013",),
    )

    # Who may call the endpoint (mcpforms.auth, mcpforms.oauth)

    AUTHENTICATION: Setting[list[str]] = Setting(
        ["mcpforms.auth.AccessTokenAuth", "mcpforms.auth.SessionAuth"],
        explained(_AUTH_EXPECTS, _auth_problem),
        check="mcpforms.E301",
        section=Section.AUTH,
        help="django-ninja auth classes by dotted path, tried in order, each returning the calling user "
        "or None; add `mcpforms.oauth.OAuth2Auth` for OAuth.",
        hint="e.g. ['mcpforms.auth.AccessTokenAuth', 'mcpforms.auth.SessionAuth'], and "
        f"'mcpforms.oauth.OAuth2Auth' with the oauth extra: {install_extra('oauth')}.",
    )
    ALLOW_ANONYMOUS: Setting[bool | list[str]] = Setting(
        False,
        Kind(
            "True, False or a list of tool names",
            lambda value: isinstance(value, bool) or _is_list_of(value, lambda name: isinstance(name, str)),
        ),
        check="mcpforms.E302",
        section=Section.AUTH,
        help="Callers no method recognised: False refuses them (401), True lets them use every tool their "
        "permissions allow, a list of tool names only those.",
    )
    # One base scope, so a token granted for something else on the site is not one for the forms.
    OAUTH_SCOPES: Setting[list[str]] = Setting(
        ["mcp"],
        strings("a list of scope names"),
        check="mcpforms.E303",
        section=Section.AUTH,
        help="The scopes every OAuth access token must carry; `[]` requires none.",
        related=("mcpforms.W302",),
    )
    # By default only a token for the endpoint itself ("https://site.example/mcp") counts.
    OAUTH_ACCEPT_ORIGIN_AUDIENCE: Setting[bool] = Setting(
        False,
        BOOLEAN,
        check="mcpforms.E306",
        section=Section.AUTH,
        help="Whether a token issued for the whole origin (RFC 8707 resource `https://site.example`) counts "
        "as one for the endpoint.",
    )

    # OAuth clients: Client ID Metadata Documents (mcpforms.oauth.cimd) and dynamic registration
    # (mcpforms.oauth.dcr, RFC 7591)

    OAUTH_CIMD_HOSTS: Setting[str | list[str]] = Setting(
        ["claude.ai", "claude.com", "chatgpt.com", "vscode.dev", "insiders.vscode.dev"],
        Kind(
            "a list of host names or '*'",
            lambda value: (
                value == "*" or _is_list_of(value, lambda host: isinstance(host, str) and bool(host))
            ),
        ),
        check="mcpforms.E310",
        section=Section.OAUTH_CIMD,
        help="The hosts whose client ID metadata documents the server fetches, in `ALLOWED_HOSTS` syntax, "
        'or `"*"` for any public host.',
        hint="ALLOWED_HOSTS syntax: ['claude.ai', 'claude.com', 'chatgpt.com', '.example.com'].",
        related=("mcpforms.W322",),
    )
    OAUTH_CIMD_PINNED: Setting[dict[str, dict[str, Any]] | None] = Setting(
        None,
        explained("None or a {client_id: document} dict of usable documents", _pins_problem),
        check="mcpforms.E311",
        section=Section.OAUTH_CIMD,
        help="Documents used when the live fetch of exactly that client id fails; None means mcpforms' own "
        "copies of claude.ai's, Claude Code's and ChatGPT's, `{}` none.",
        hint="None uses mcpforms' own copies, {} none; otherwise {client_id: document}, each document the "
        "JSON its https client_id URL serves.",
        related=("mcpforms.W322",),
    )
    # How Claude (without CIMD), Cursor, mcp-remote, VS Code and the Inspector sign up, anonymously.
    OAUTH_DCR: Setting[bool] = Setting(
        True,
        BOOLEAN,
        check="mcpforms.E313",
        section=Section.OAUTH_DCR,
        help="Dynamic client registration; False answers 404 at the registration endpoint.",
        related=("mcpforms.W325",),
    )
    # Hosted assistants register every user's connection from a few cloud addresses (Claude twice per
    # connect), so this is generous; the cap below is what bounds storage.
    OAUTH_DCR_PER_ADDRESS: Setting[int | None] = Setting(
        60,
        integer(none_means="no limit"),
        check="mcpforms.E314",
        section=Section.OAUTH_DCR,
        help="Registrations per client address (`REMOTE_ADDR`; an IPv6 /64) per hour; more are 429. "
        "Counted in the `default` cache, which every worker must share.",
        related=("mcpforms.W327",),
    )
    OAUTH_DCR_UNUSED: Setting[int | None] = Setting(
        1000,
        integer(none_means="no limit"),
        check="mcpforms.E314",
        section=Section.OAUTH_DCR,
        help="Registrations that never got a token the server keeps at most; more are 429.",
    )
    # Every real client signs in within minutes.
    OAUTH_DCR_UNUSED_DAYS: Setting[int] = Setting(
        2,
        integer(unit="days"),
        check="mcpforms.E314",
        section=Section.OAUTH_DCR,
        help="After how long `manage.py mcpforms_cleanup` deletes a registration that never got a token.",
    )
    # Cursor's. RFC 8252 §7.1.
    OAUTH_REDIRECT_SCHEMES: Setting[list[str]] = Setting(
        ["cursor"],
        strings("a list of custom URI scheme names", _custom_scheme),
        check="mcpforms.E315",
        section=Section.OAUTH_DCR,
        help="Custom redirect URI schemes allowed besides https and loopback http; each must be in "
        '`OAUTH2_PROVIDER["ALLOWED_REDIRECT_URI_SCHEMES"]` too; `javascript:`, `data:` and `file:` '
        "never are.",
        hint="e.g. ['cursor'] for Cursor's cursor:// callback. https and loopback http are always allowed; "
        "javascript:, data: and file: never are.",
        related=("mcpforms.W324",),
    )

    # Tasks (the 2026-07-28 tasks extension; mcpforms.task_store, approvals)

    TASK_STORE: Setting[str | None] = Setting(
        "mcpforms.task_store.DatabaseTasks",
        Kind(
            "the dotted path of a task store class, or None",
            lambda value: value is None or _dotted_path(value),
        ),
        check="mcpforms.E017",
        section=Section.TASKS,
        help="Where tasks live, for every server built without a store of its own (`Server(tasks=...)`); "
        "None serves no tasks (and `server/discover` offers no tasks extension).",
        hint="mcpforms.task_store.DatabaseTasks (the default), or None for no tasks.",
        related=("mcpforms.E410",),
    )
    # A decision by staff may take days: a request waits a week before nobody may approve it any more.
    TASK_TTL: Setting[int] = Setting(
        7 * 86400,
        integer(unit="seconds"),
        check="mcpforms.E018",
        section=Section.TASKS,
        help="How long a task lives, from its creation, unless its tool says otherwise (`task_ttl`): it "
        "may be approved and polled until then, and `mcpforms_cleanup` deletes it after.",
    )
    ALLOW_SELF_APPROVAL: Setting[bool] = Setting(
        False,
        BOOLEAN,
        check="mcpforms.E019",
        section=Section.TASKS,
        help="Whether staff may approve (or reject) a request they made themselves.",
    )
    # The task budgets (mcpforms.protocol.budgets), answered 429 when full. A task is kept until it expires
    # (TASK_TTL, a week), whatever its status, and an approval request waits in the approvers' list: a user's
    # budget is some seventy calls a day for a week, and a project whose background tools are called more
    # often raises it (or lowers their task_ttl).
    TASKS_PER_PRINCIPAL: Setting[int | None] = Setting(
        500,
        integer(none_means="no limit"),
        check="mcpforms.E021",
        section=Section.TASKS,
        help="Live (unexpired) tasks of one user, approval requests and background work together.",
    )
    # As for sessions: behind a reverse proxy, have the server set REMOTE_ADDR from its header, or set None.
    ANONYMOUS_TASKS_PER_ADDRESS: Setting[int | None] = Setting(
        20,
        integer(none_means="no limit"),
        check="mcpforms.E021",
        section=Section.TASKS,
        help="Live tasks of anonymous callers from one address (`REMOTE_ADDR`; an IPv6 /64).",
    )
    # What many addresses together can make the server keep, and the approvers read.
    ANONYMOUS_TASKS: Setting[int | None] = Setting(
        500,
        integer(none_means="no limit"),
        check="mcpforms.E021",
        section=Section.TASKS,
        help="Live tasks of all anonymous callers together.",
    )

    # Cleanup (mcpforms.models.sweep, manage.py mcpforms_cleanup)

    SWEEP_EXPIRED: Setting[bool] = Setting(
        True,
        BOOLEAN,
        check="mcpforms.E016",
        section=Section.CLEANUP,
        help="Whether requests delete expired rows now and then while `manage.py mcpforms_cleanup` has not "
        "run in the last two days; False leaves them all to the command, but for wizards' page steps, "
        "which the requests of wizards delete once no requestState of their flow verifies.",
    )

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}

    def value(self, name: str) -> Any:
        """The configured value of ``name`` as is (the checks judge it), or its default."""
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
        raise AttributeError(f"MCPFORMS has no setting {name!r}; valid: {', '.join(SETTINGS)}")


SETTINGS: dict[str, Setting[Any]] = {
    name: row for name, row in vars(Conf).items() if isinstance(row, Setting)
}
DEFAULTS: dict[str, Any] = {name: row.default for name, row in SETTINGS.items()}

conf = Conf()


def _forget(*, setting: str, **kwargs: Any) -> None:
    if setting == "MCPFORMS":
        conf.forget()


setting_changed.connect(_forget, dispatch_uid="mcpforms.conf")


# The reference ---------------------------------------------------------------------------------------------

# What encloses the generated reference on its page (MyST comments: the page shows neither line).
REFERENCE_START = "% settings-reference:start (generated: python -m mcpforms.conf --write PAGE)"
REFERENCE_END = "% settings-reference:end"


def _shown(value: object) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 10_000:
        return f"`{value:_}`"
    return f"`{value!r}`"


def _type_of(name: str) -> str:
    """The Python type a row is declared with: ``Setting[int | None]`` → ``int | None``."""
    annotation = str(Conf.__annotations__[name])
    return annotation.removeprefix("Setting[").removesuffix("]")


def _check_link(check_id: str) -> str:
    # Each id is an explicit target of the checks page, labelled with the id itself.
    return f"{{ref}}`{check_id}`"


def _entry(row: Setting[Any]) -> list[str]:
    checks = [row.check, *([row.bounds.check] if row.bounds else []), *row.related]
    lines = [f"### `{row.name}`", "", row.help, ""]
    lines.append(f":Type: `{_type_of(row.name)}`")
    lines.append(f":Default: {_shown(row.default)}")
    lines.append(f":Valid: {row.kind.expects}" + (f"; {row.bounds.says}" if row.bounds else ""))
    lines.append(":Checks: " + ", ".join(_check_link(check) for check in dict.fromkeys(checks)))
    return [*lines, ""]


def reference(rows: Iterable[Setting[Any]] | None = None) -> str:
    """The settings reference as MyST Markdown: a ``##`` heading per section and a ``###`` heading per
    setting, with its help, type, default, valid values and the checks that report on it."""
    chosen = list(SETTINGS.values() if rows is None else rows)
    lines: list[str] = []
    for section in Section:
        in_section = [row for row in chosen if row.section is section]
        if not in_section:
            continue
        lines += [f"## {section.value}", ""]
        for row in in_section:
            lines += _entry(row)
    return "\n".join(lines)


def write_reference(page: str) -> None:
    """Replace the reference between its markers on ``page`` (a path) with what the rows render."""
    with open(page, encoding="utf-8") as file:
        text = file.read()
    before, found, rest = text.partition(REFERENCE_START + "\n")
    _, ended, after = rest.partition(REFERENCE_END)
    if not (found and ended):
        raise SystemExit(f"{page} has no {REFERENCE_START!r} … {REFERENCE_END!r} block")
    with open(page, "w", encoding="utf-8") as file:
        file.write(before + found + reference() + ended + after)


def main(argv: list[str]) -> None:
    """``python -m mcpforms.conf`` prints the reference; ``--write PAGE`` puts it on PAGE."""
    if argv[:1] == ["--write"] and len(argv) == 2:
        write_reference(argv[1])
    elif not argv:
        print(reference(), end="")
    else:
        raise SystemExit("usage: python -m mcpforms.conf [--write PAGE]")


if __name__ == "__main__":
    main(sys.argv[1:])
