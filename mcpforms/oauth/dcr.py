"""Dynamic client registration (RFC 7591, RFC 7592) that hosted assistants can use and nobody can abuse.

Claude (when CIMD is not on offer), Cursor, mcp-remote, VS Code and the Inspector register themselves
anonymously before they sign a user in, so the endpoint must take anonymous registrations. What keeps it
from being a free database for anyone:

- ``RegistrationPermission`` (django-oauth-toolkit's ``DCR_REGISTRATION_PERMISSION_CLASSES``): a number
  of registrations per client address per hour (``OAUTH_DCR_PER_ADDRESS``; an IPv6 client counts by its
  /64), and a cap on registrations that never got a token (``OAUTH_DCR_UNUSED``); over either, 429 with
  ``Retry-After``. ``manage.py mcpforms_cleanup`` deletes those never used after ``OAUTH_DCR_UNUSED_DAYS``
  (Claude registers twice per connect and uses one).
- ``RegistrationView``: a redirect URI is https, plain http on a loopback host only (RFC 8252 §7.3, §8.3),
  or a custom scheme of ``OAUTH_REDIRECT_SCHEMES`` (Cursor's ``cursor://``); never ``javascript:``,
  ``data:`` or ``file:``. A disallowed URI next to allowed ones is dropped, not fatal, so a client that
  sends one of each (Cursor) still registers; the response lists what was kept. At most
  ``MAX_REDIRECT_URIS`` URIs, a ``client_name`` of at most ``MAX_CLIENT_NAME`` characters (a longer one
  is refused, not cut: a cut name is a name the client never chose), grant types other than
  ``authorization_code`` and ``refresh_token`` dropped. The response says ``client_secret_expires_at``
  (RFC 7591 §3.2.1) and the auth method the client asked for, and the registration access token expires.
- ``RegistrationManagementView`` (RFC 7592): an update keeps to the same rules.
- Text no database stores is refused, never half-written: a lone surrogate anywhere in the document
  (``invalid_client_metadata``), a control character such as NUL in a redirect URI (dropped, or
  ``invalid_redirect_uri`` when it was the only one).

Every refusal is RFC 7591 §3.2.2's JSON (``error``, ``error_description``), never a page.
"""

from __future__ import annotations

import json
import logging
import time
import unicodedata
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from django.contrib.auth.decorators import login_not_required
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_exempt
from oauth2_provider.dcr import enforce_csrf
from oauth2_provider.generators import generate_client_secret
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_refresh_token_model,
    set_token_value,
)
from oauth2_provider.settings import oauth2_settings
from oauth2_provider.utils import parse_bearer_token
from oauth2_provider.validators import AllowedURIValidator
from oauth2_provider.views import DynamicClientRegistrationManagementView, DynamicClientRegistrationView

from mcpforms.conf import NEVER_REDIRECT_SCHEMES, conf
from mcpforms.oauth.metadata import REGISTER_MANAGE
from mcpforms.protocol.budgets import address_scope

logger = logging.getLogger(__name__)

# What one registration may carry. Real clients send one to three redirect URIs, a short name and a
# document of a few hundred bytes; these are far above that and far below what would cost anything.
MAX_REDIRECT_URIS = 10
MAX_CLIENT_NAME = 200
MAX_REDIRECT_URI_LENGTH = 2048
MAX_REGISTRATION_BYTES = 64 * 1024

# Hosts a plain-http redirect may name: the loopback interface (RFC 8252 §7.3), and "localhost", which
# §8.3 does not recommend but mcp-remote, Claude Code and Cursor use.
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})

# RFC 7591 grant type names; the only kind of client an MCP server registers is a user's.
AUTHORIZATION_CODE = "authorization_code"
REFRESH_TOKEN = "refresh_token"
AUTH_METHODS = ("none", "client_secret_post", "client_secret_basic")
# RFC 7591 §2: a client that names no method authenticates with a secret in the Authorization header.
DEFAULT_AUTH_METHOD = "client_secret_basic"

# Registration access tokens live this long when django-oauth-toolkit's DCR_REGISTRATION_TOKEN_EXPIRE_SECONDS
# is None, whose own meaning is "until the year 9999".
REGISTRATION_TOKEN_SECONDS = 30 * 24 * 3600
THROTTLE_WINDOW = 3600
# How soon a client refused by the cap may try again: pruning runs on a schedule, typically hourly.
CAP_RETRY_AFTER = 3600


def _json_error(
    error: str, description: str, *, status: int = 400, retry_after: int | None = None
) -> JsonResponse:
    response = JsonResponse({"error": error, "error_description": description}, status=status)
    response["Cache-Control"] = "no-store"
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response


# The never-used registrations: the one rule the cap and the prune command share -------------------------


def unused_registrations() -> models.QuerySet[Any]:
    """Dynamically registered applications that never got a token: no access token besides their
    registration access token, and no refresh token."""
    application_model = get_application_model()
    used_by_access = (
        get_access_token_model()
        .objects.filter(application=models.OuterRef("pk"))
        .exclude(scope=oauth2_settings.DCR_REGISTRATION_SCOPE)
    )
    used_by_refresh = get_refresh_token_model().objects.filter(application=models.OuterRef("pk"))
    registered: models.QuerySet[Any] = application_model.objects.filter(
        registration_source=application_model.RegistrationSource.DCR
    )
    return registered.exclude(models.Exists(used_by_access) | models.Exists(used_by_refresh))


# Throttle and cap ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Refusal:
    """Why a registration may not happen now, as the 429 says it."""

    description: str
    retry_after: int

    def response(self) -> JsonResponse:
        return _json_error("too_many_requests", self.description, status=429, retry_after=self.retry_after)


class RegistrationPermission:
    """Anyone may register (hosted assistants register anonymously), at a bounded pace and up to a bound
    of registrations nobody used. Put it in ``DCR_REGISTRATION_PERMISSION_CLASSES``.

    Counts per address live in Django's default cache, shared by every worker when the cache is (Redis
    and Memcached increment atomically); a LocMemCache counts per process and a DummyCache not at all,
    which ``check --deploy`` reports (``mcpforms.W327``). Behind a reverse proxy every client has the
    proxy's address: have the server set REMOTE_ADDR from the proxy's header, or set
    ``OAUTH_DCR_PER_ADDRESS`` to None."""

    def has_permission(self, request: HttpRequest) -> bool:
        return self.refusal(request) is None

    def refusal(self, request: HttpRequest) -> Refusal | None:
        return self._address_refusal(request) or self._cap_refusal()

    def _address_refusal(self, request: HttpRequest) -> Refusal | None:
        limit = conf.OAUTH_DCR_PER_ADDRESS
        scope = address_scope(request.META.get("REMOTE_ADDR"))
        if limit is None or scope is None:
            return None  # no address to count by (a Unix socket): the cap still bounds what is kept
        now = int(time.time())
        window = now // THROTTLE_WINDOW
        key = f"mcpforms:dcr:{scope}:{window}"
        cache.add(key, 0, timeout=THROTTLE_WINDOW)
        try:
            count = cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, timeout=THROTTLE_WINDOW)
            count = 1
        if count <= limit:
            return None
        retry_after = max(1, (window + 1) * THROTTLE_WINDOW - now)
        return Refusal(
            f"This address registered {limit} clients in the last hour, as many as the server takes; try "
            f"again in {retry_after} seconds, or reuse a client already registered.",
            retry_after,
        )

    def _cap_refusal(self) -> Refusal | None:
        limit = conf.OAUTH_DCR_UNUSED
        if limit is None or unused_registrations().count() < limit:
            return None
        return Refusal(
            "The server holds as many client registrations that never signed anyone in as it keeps; try "
            "again later, or sign in with a client already registered.",
            CAP_RETRY_AFTER,
        )


# The redirect policy ------------------------------------------------------------------------------------


def custom_schemes() -> frozenset[str]:
    """The custom schemes a redirect URI may use besides https and loopback http."""
    # Typed as the setting should be, read as it may be: a malformed value is E315's to report.
    configured: object = conf.OAUTH_REDIRECT_SCHEMES
    if not isinstance(configured, list | tuple):
        return frozenset()  # mcpforms.E315 says so
    return (
        frozenset(s.lower() for s in configured if isinstance(s, str))
        - NEVER_REDIRECT_SCHEMES
        - {"http", "https"}
    )


def _policy_hint() -> str:
    schemes = ", ".join(f"{s}:" for s in sorted(custom_schemes()))
    return "use https, or http on 127.0.0.1, [::1] or localhost" + (f", or {schemes}" if schemes else "")


def redirect_uri_refusal(uri: object) -> str | None:
    """Why ``uri`` may not be a redirect URI, or None when it may."""
    if not isinstance(uri, str) or not uri:
        return "a redirect URI must be a non-empty string"
    if len(uri) > MAX_REDIRECT_URI_LENGTH:
        return f"longer than {MAX_REDIRECT_URI_LENGTH} characters"
    if any(c.isspace() for c in uri):
        # Stored space-separated: one string with a space would register two URIs.
        return "contains whitespace"
    if control := next((c for c in uri if unicodedata.category(c) == "Cc"), None):
        # RFC 3986 §2 has no control characters, and PostgreSQL cannot store a NUL at all.
        return f"holds the control character U+{ord(control):04X}"
    try:
        parts = urlsplit(uri)
        hostname = parts.hostname
    except ValueError:
        return "is no URI"
    scheme = parts.scheme.lower()
    if scheme in NEVER_REDIRECT_SCHEMES:
        return f"{scheme}: is never a redirect URI"
    if "#" in uri:
        return "has a fragment (RFC 6749 §3.1.2)"
    if "@" in parts.netloc:
        return "carries userinfo, which disguises its host"
    if scheme == "https":
        if not hostname:
            return "has no host"
    elif scheme == "http":
        if hostname not in LOOPBACK_HOSTS:
            return "plain http is for a loopback host only (RFC 8252); " + _policy_hint()
    elif scheme not in custom_schemes():
        return f"the scheme {scheme or '(none)'}: is not allowed; " + _policy_hint()
    # django-oauth-toolkit refuses a redirect (and the registration) to a scheme it does not allow.
    if scheme not in {s.lower() for s in oauth2_settings.ALLOWED_REDIRECT_URI_SCHEMES}:
        return (
            f"the scheme {scheme}: is not in OAUTH2_PROVIDER['ALLOWED_REDIRECT_URI_SCHEMES'], so no "
            "sign-in could return to it"
        )
    validator = AllowedURIValidator([scheme], name="redirect uri", allow_path=True, allow_query=True)
    try:
        validator(uri)
    except ValidationError:
        return "is not a valid URI"
    return None


# One registration, as mcpforms accepts it ---------------------------------------------------------------


@dataclass
class Registration:
    """The client metadata of a registration request, reduced to what is registered."""

    redirect_uris: list[str]
    name: str
    auth_method: str
    dropped: list[tuple[str, str]] = field(default_factory=list)

    @property
    def client_type(self) -> str:
        application_model = get_application_model()
        return str(
            application_model.CLIENT_PUBLIC
            if self.auth_method == "none"
            else application_model.CLIENT_CONFIDENTIAL
        )

    def fields(self) -> dict[str, Any]:
        """The Application's fields."""
        return {
            "redirect_uris": " ".join(self.redirect_uris),
            "name": self.name,
            "client_type": self.client_type,
            "authorization_grant_type": get_application_model().GRANT_AUTHORIZATION_CODE,
        }


class Invalid(Exception):
    """Client metadata mcpforms does not register (RFC 7591 §3.2.2)."""

    def __init__(self, error: str, description: str, *, status: int = 400) -> None:
        super().__init__(description)
        self.error = error
        self.description = description
        self.status = status

    def response(self) -> JsonResponse:
        return _json_error(self.error, self.description, status=self.status)


def read_metadata(request: HttpRequest) -> dict[str, Any]:
    """The request's client metadata document: a JSON object within ``MAX_REGISTRATION_BYTES``."""
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    if declared > MAX_REGISTRATION_BYTES or len(request.body) > MAX_REGISTRATION_BYTES:
        raise Invalid(
            "invalid_client_metadata",
            f"The registration is larger than {MAX_REGISTRATION_BYTES} bytes.",
            status=413,
        )
    try:
        data = json.loads(request.body, parse_constant=_no_constant)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError; nesting can exhaust the stack
        raise Invalid("invalid_client_metadata", "The body must be a JSON object (RFC 7591 §3.1).") from None
    if not isinstance(data, dict):
        raise Invalid("invalid_client_metadata", "The body must be a JSON object (RFC 7591 §3.1).")
    if (member := _with_lone_surrogate(data)) is not None:
        raise Invalid(
            "invalid_client_metadata",
            f"{member!r} holds a lone surrogate (\\ud800-\\udfff), which is no Unicode text.",
        )
    return data


def _with_lone_surrogate(data: dict[str, Any]) -> str | None:
    """The first member of ``data`` with a lone surrogate in its name or value, or None.

    JSON spells one as ``\\ud800``; no UTF-8 encodes it, so neither SQLite nor PostgreSQL could store it,
    nor could the response echo it as text.
    """
    for name, value in data.items():
        try:
            json.dumps([name, value], ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            return name
    return None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def registration(data: dict[str, Any]) -> Registration:
    """What of ``data`` is registered; raises ``Invalid`` for what cannot be."""
    kept, dropped = _redirect_uris(data.get("redirect_uris"))
    for uri, reason in dropped:
        logger.info("Dynamic registration: dropped the redirect URI %r: %s", uri[:200], reason)
    _grant_types(_given(data, "grant_types", [AUTHORIZATION_CODE]))
    return Registration(
        redirect_uris=kept,
        name=_client_name(_given(data, "client_name", "")),
        auth_method=_auth_method(_given(data, "token_endpoint_auth_method", DEFAULT_AUTH_METHOD)),
        dropped=dropped,
    )


def _given(data: dict[str, Any], name: str, default: Any) -> Any:
    """A metadata value, with a JSON null read as absent (some clients serialise unset fields so)."""
    value = data.get(name)
    return default if value is None else value


def _redirect_uris(value: object) -> tuple[list[str], list[tuple[str, str]]]:
    if not isinstance(value, list) or not value:
        raise Invalid(
            "invalid_redirect_uri", "redirect_uris must be a non-empty array of URIs (RFC 7591 §2)."
        )
    if len(value) > MAX_REDIRECT_URIS:
        raise Invalid(
            "invalid_redirect_uri",
            f"redirect_uris has {len(value)} URIs; at most {MAX_REDIRECT_URIS} are taken.",
        )
    kept: list[str] = []
    dropped: list[tuple[str, str]] = []
    for uri in value:
        reason = redirect_uri_refusal(uri)
        if reason is None:
            if uri not in kept:
                kept.append(uri)
        else:
            dropped.append((uri if isinstance(uri, str) else repr(uri), reason))
    if not kept:
        why = "; ".join(f"{_shown(uri)}: {reason}" for uri, reason in dropped)
        raise Invalid("invalid_redirect_uri", f"No redirect URI can be registered. {why}.")
    return kept, dropped


def _shown(uri: str) -> str:
    return uri if len(uri) <= 100 else uri[:100] + "…"


def _grant_types(value: object) -> None:
    """Only ``authorization_code`` (with ``refresh_token``) is registered; other names are dropped when it
    is there (Claude's documents also list a jwt-bearer grant), refused when it is not."""
    if not isinstance(value, list) or not all(isinstance(g, str) for g in value):
        raise Invalid(
            "invalid_client_metadata",
            f'grant_types must be an array of strings, such as ["{AUTHORIZATION_CODE}", "{REFRESH_TOKEN}"].',
        )
    if AUTHORIZATION_CODE not in value:
        raise Invalid(
            "invalid_client_metadata",
            f"This server registers clients of the {AUTHORIZATION_CODE} grant (with {REFRESH_TOKEN}) only.",
        )


def _client_name(value: object) -> str:
    """The name as a consent page may show it: text, without control or invisible formatting characters
    (a right-to-left override could show another name), its whitespace collapsed."""
    if not isinstance(value, str):
        raise Invalid("invalid_client_metadata", "client_name must be a string.")
    visible = "".join(
        " " if c.isspace() else c for c in value if c.isspace() or unicodedata.category(c) not in ("Cc", "Cf")
    )
    name = " ".join(visible.split())
    if len(name) > MAX_CLIENT_NAME:
        raise Invalid(
            "invalid_client_metadata",
            f"client_name has {len(name)} characters; at most {MAX_CLIENT_NAME} are taken.",
        )
    return name


def _auth_method(value: object) -> str:
    if value not in AUTH_METHODS:
        raise Invalid(
            "invalid_client_metadata",
            f"token_endpoint_auth_method {value!r} is not supported; use one of {', '.join(AUTH_METHODS)}.",
        )
    return str(value)


# Registration access tokens and the response ------------------------------------------------------------


def issue_registration_token(application: Any, user: Any) -> str:
    """A new registration access token (RFC 7592 §1) for ``application``, which always expires."""
    seconds = oauth2_settings.DCR_REGISTRATION_TOKEN_EXPIRE_SECONDS
    if seconds is None:
        seconds = REGISTRATION_TOKEN_SECONDS
    raw = str(generate_client_secret())
    token = get_access_token_model()(
        application=application,
        user=user,
        expires=timezone.now() + timedelta(seconds=seconds),
        scope=oauth2_settings.DCR_REGISTRATION_SCOPE,
    )
    set_token_value(token, raw)  # stored hashed when the toolkit is told to
    token.save()
    return raw


def registration_response(
    request: HttpRequest,
    application: Any,
    *,
    registration_token: str,
    auth_method: str | None = None,
    secret: str | None = None,
    status: int = 200,
) -> JsonResponse:
    """The client information response (RFC 7591 §3.2.1; RFC 7592 §3)."""
    public = application.client_type == get_application_model().CLIENT_PUBLIC
    body: dict[str, Any] = {
        "client_id": application.client_id,
        "client_id_issued_at": int(application.created.timestamp()),
        "redirect_uris": application.redirect_uris.split(),
        "grant_types": [AUTHORIZATION_CODE, REFRESH_TOKEN],
        "response_types": ["code"],
        # The toolkit takes a secret in the body or the header alike: answer what the client asked for.
        "token_endpoint_auth_method": "none" if public else (auth_method or DEFAULT_AUTH_METHOD),
        "registration_access_token": registration_token,
    }
    if application.name:
        body["client_name"] = application.name
    if secret is not None:
        body["client_secret"] = secret
    if not public:
        body["client_secret_expires_at"] = 0  # REQUIRED with a secret; 0: it does not expire
    if (uri := _management_uri(request, application.client_id)) is not None:
        body["registration_client_uri"] = uri
    response = JsonResponse(body, status=status)
    response["Cache-Control"] = "no-store"  # it carries credentials
    response["Pragma"] = "no-cache"
    return response


def _management_uri(request: HttpRequest, client_id: str) -> str | None:
    try:
        location = reverse(REGISTER_MANAGE, kwargs={"client_id": client_id})
    except NoReverseMatch:
        return None  # not mounted: no RFC 7592 management to point at
    base = conf.BASE_URL
    if isinstance(base, str) and base:
        return base.rstrip("/") + location  # where the site is served, as the issuer is built
    return request.build_absolute_uri(location)


def registrant(request: HttpRequest) -> Any:
    """The user a registration belongs to: the signed-in user only when the request proves it came from
    them (a bearer token, or a session request that passes CSRF). The endpoint is CSRF-exempt for
    anonymous clients, so a page on another site could otherwise make a visitor's browser register a client
    in the visitor's name."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return None
    if parse_bearer_token(request.META.get("HTTP_AUTHORIZATION", "")) is not None or enforce_csrf(request):
        return user
    return None


def _permission_refusal(request: HttpRequest) -> HttpResponse | None:
    """The toolkit's permission classes, all of which must agree (none configured: nobody may register);
    ``RegistrationPermission`` answers why with a 429."""
    classes = oauth2_settings.DCR_REGISTRATION_PERMISSION_CLASSES
    if not classes:
        return _json_error("access_denied", "Registration is closed on this server.", status=401)
    for permission_class in classes:
        permission = permission_class()
        if isinstance(permission, RegistrationPermission):
            if (refusal := permission.refusal(request)) is not None:
                return refusal.response()
        elif not permission.has_permission(request):
            response = _json_error(
                "access_denied", "Authentication required to register a client.", status=401
            )
            response["WWW-Authenticate"] = "Bearer"
            return response
    return None


def _dcr_off() -> JsonResponse | None:
    if oauth2_settings.DCR_ENABLED and conf.OAUTH_DCR is True:
        return None
    return _json_error("not_found", "Dynamic client registration is off on this server.", status=404)


def _validated(application: Any) -> None:
    try:
        application.full_clean()
    except ValidationError as error:
        # The rules above let through only what the model accepts; this is the toolkit's last word.
        raise Invalid("invalid_client_metadata", "; ".join(error.messages)) from None


# The views ----------------------------------------------------------------------------------------------


@method_decorator(csrf_exempt, name="dispatch")
@method_decorator(login_not_required, name="dispatch")
class RegistrationView(DynamicClientRegistrationView):  # type: ignore[misc]
    """RFC 7591's registration endpoint (``POST oauth/register/``), under mcpforms' rules."""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if (off := _dcr_off()) is not None:
            return off
        response: HttpResponse = super().dispatch(request, *args, **kwargs)
        return response

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if (refused := _permission_refusal(request)) is not None:
            return refused
        try:
            wanted = registration(read_metadata(request))
        except Invalid as invalid:
            return invalid.response()
        application_model = get_application_model()
        user = registrant(request)
        application = application_model(
            user=user, registration_source=application_model.RegistrationSource.DCR, **wanted.fields()
        )
        secret = (
            application.client_secret if wanted.client_type == application_model.CLIENT_CONFIDENTIAL else None
        )
        try:
            _validated(application)
        except Invalid as invalid:
            return invalid.response()
        with transaction.atomic():
            application.save()  # hashes the secret: the raw one was taken above
            token = issue_registration_token(application, user)
        return registration_response(
            request,
            application,
            registration_token=token,
            auth_method=wanted.auth_method,
            secret=secret,
            status=201,
        )


@method_decorator(csrf_exempt, name="dispatch")
@method_decorator(login_not_required, name="dispatch")
class RegistrationManagementView(DynamicClientRegistrationManagementView):  # type: ignore[misc]
    """RFC 7592's client configuration endpoint (``oauth/register/<client_id>/``): read, update under the
    same rules as a registration, delete."""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if (off := _dcr_off()) is not None:
            return off
        response: HttpResponse = super().dispatch(request, *args, **kwargs)
        return response

    def get(self, request: HttpRequest, client_id: str, *args: Any, **kwargs: Any) -> HttpResponse:
        auth = self._authenticate_registration_request(request, client_id)
        if isinstance(auth, HttpResponse):
            return auth
        return registration_response(request, auth.application, registration_token=auth.presented_token)

    def put(self, request: HttpRequest, client_id: str, *args: Any, **kwargs: Any) -> HttpResponse:
        auth = self._authenticate_registration_request(request, client_id)
        if isinstance(auth, HttpResponse):
            return auth
        application = auth.application
        try:
            wanted = registration(read_metadata(request))
            if wanted.client_type != application.client_type:
                # A public client turning confidential would need a secret nobody was ever given.
                raise Invalid(
                    "invalid_client_metadata",
                    "token_endpoint_auth_method cannot change between none and a secret; register anew.",
                )
            for name, value in wanted.fields().items():
                setattr(application, name, value)
            _validated(application)
        except Invalid as invalid:
            return invalid.response()
        token = auth.presented_token
        with transaction.atomic():
            application.save()
            if oauth2_settings.DCR_ROTATE_REGISTRATION_TOKEN_ON_UPDATE:
                token = issue_registration_token(application, application.user)
                auth.registration_token.delete()
        return registration_response(
            request, application, registration_token=token, auth_method=wanted.auth_method
        )
