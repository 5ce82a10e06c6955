"""Who is calling the MCP endpoint: django-ninja auth callables, tried in order.

Each callable takes the ``HttpRequest`` and returns the calling user, or None to let the next one try, or
raises ``ninja.errors.HttpError`` to refuse outright; any django-ninja auth class fits (``HttpBearer``,
``APIKeyHeader``…) as long as what it returns is a user. ``MCPFORMS['AUTHENTICATION']`` lists them as
dotted paths; ``build_api(auth=[...])`` takes instances instead. When none returns a user, the caller is
anonymous, which only the server's anonymous policy (``MCPFORMS['ALLOW_ANONYMOUS']`` for the default
server) lets through; anyone else gets a 401 whose
``WWW-Authenticate`` says how to authenticate (RFC 6750, RFC 9728).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import cache
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest
from django.utils.module_loading import import_string
from ninja.errors import HttpError
from ninja.security import HttpBearer
from ninja.security.base import AuthBase
from ninja.utils import check_csrf

from mcpforms.conf import conf
from mcpforms.models import AccessToken
from mcpforms.protocol.context import Access

Auth = Callable[[HttpRequest], Any]


class AccessTokenAuth(HttpBearer):
    """A personal access token (``mcpforms.models.AccessToken``) sent as ``Authorization: Bearer``."""

    def __call__(self, request: HttpRequest) -> Any:
        # Anonymous and session callers send no Authorization: answer them from META, without the
        # request.headers mapping django-ninja builds from all of it on every call.
        if "HTTP_AUTHORIZATION" not in request.META:
            return None
        return super().__call__(request)

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        return AccessToken.objects.user_for(token)


class SessionAuth(AuthBase):
    """The signed-in user of Django's session, for pages of the same site calling the endpoint.

    A cookie rides along on cross-site requests too, so a session user must pass Django's CSRF check
    (send the ``X-CSRFToken`` header, as for any Django POST from JavaScript). MCP clients send no cookie.
    """

    openapi_type = "apiKey"

    def __call__(self, request: HttpRequest) -> Any:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return None
        if check_csrf(request) is not None:
            raise HttpError(403, "Forbidden: CSRF check failed for the signed-in session")
        return user


@cache
def _configured(paths: tuple[str, ...]) -> tuple[Auth, ...]:
    return tuple(import_string(path)() for path in paths)


def configured_auth() -> tuple[Auth, ...]:
    """The ``MCPFORMS['AUTHENTICATION']`` callables, each built once."""
    return _configured(tuple(conf.AUTHENTICATION))


def authenticate(request: HttpRequest, methods: Sequence[Auth], *, anonymous: bool) -> Any:
    """Return the caller: a user, ``AnonymousUser`` when ``anonymous`` callers are let in (the server's
    ``admits_anonymous``), or None (401).

    Raises ``HttpError`` when a method refuses outright. A request that presents credentials nobody
    accepts is never demoted to anonymous: a client with a revoked token must hear so.
    """
    for method in methods:
        user = method(request)
        if user:
            request.auth = user  # type: ignore[attr-defined]  # where django-ninja keeps it
            return user
    if anonymous and "HTTP_AUTHORIZATION" not in request.META:
        return AnonymousUser()
    return None


class Challenge(HttpError):
    """A refusal that says what would work: its status and the ``WWW-Authenticate`` value sent with it
    (RFC 6750 §3), e.g. a 403 naming the scopes a valid token lacks, from which a client asks for more."""

    def __init__(self, status_code: int, message: str, *, www_authenticate: str) -> None:
        super().__init__(status_code, message)
        self.www_authenticate = www_authenticate


def bearer_challenge(
    *,
    resource_metadata: str | None = None,
    scopes: Sequence[str] = (),
    error: str | None = None,
    description: str | None = None,
) -> str:
    """A ``WWW-Authenticate: Bearer`` value: RFC 6750 §3 parameters, RFC 9728 §5.1 ``resource_metadata``."""
    parts = ['Bearer realm="mcp"']
    if resource_metadata:
        parts.append(f'resource_metadata="{resource_metadata}"')
    if scopes:
        parts.append(f'scope="{" ".join(scopes)}"')
    if error:
        parts.append(f'error="{error}"')
    if description:
        parts.append(f'error_description="{description}"')
    return ", ".join(parts)


def insufficient_scope(*, resource_metadata: str | None, scopes: Sequence[str], held: Iterable[str]) -> str:
    """The ``WWW-Authenticate`` value of a 403 for a token that holds only ``held`` of ``scopes``, all
    an operation needs: named in one challenge (MCP 2026-07-28 step-up), from which a client asks for
    them (RFC 6750 §3.1)."""
    holding = set(held)
    missing = " ".join(scope for scope in scopes if scope not in holding)
    return bearer_challenge(
        resource_metadata=resource_metadata,
        scopes=scopes,
        error="insufficient_scope",
        description=f"The access token lacks the scope {missing}",
    )


def oauth_method(methods: Sequence[Auth]) -> Any | None:
    """The method that says where OAuth metadata lives (``mcpforms.oauth.OAuth2Auth``), if any: with
    one, a client can be sent to sign in."""
    for method in methods:
        if callable(getattr(method, "resource_metadata_url", None)):
            return method
    return None


def _base_scopes(method: Any) -> list[str]:
    required = getattr(method, "required_scopes", None)
    return list(required()) if callable(required) else []


def challenge(request: HttpRequest, methods: Sequence[Auth]) -> str:
    """The ``WWW-Authenticate`` value of a 401: Bearer, where OAuth metadata lives, the scopes a token
    needs (MCP authorization: what a client asks for), and what was wrong."""
    method = oauth_method(methods)
    metadata = method.resource_metadata_url(request) if method is not None else None
    scopes = _base_scopes(method) if method is not None else []
    error = "invalid_token" if "HTTP_AUTHORIZATION" in request.META else None
    return bearer_challenge(resource_metadata=metadata, scopes=scopes, error=error)


def step_up(request: HttpRequest, methods: Sequence[Auth], scopes: Sequence[str]) -> str | None:
    """The ``WWW-Authenticate`` value of a 403 for a token without some of ``scopes`` (a tool's own):
    the endpoint's scopes and those, all at once; None without OAuth among ``methods``."""
    method = oauth_method(methods)
    if method is None:
        return None
    needed = list(dict.fromkeys([*_base_scopes(method), *scopes]))
    held = scopes_of(request) or ()
    return insufficient_scope(
        resource_metadata=method.resource_metadata_url(request), scopes=needed, held=held
    )


# The scopes an OAuth access token carries, kept on the request as ``request.auth`` keeps its user.
_SCOPES = "mcpforms_scopes"


def limit_scopes(request: HttpRequest, scopes: Iterable[str]) -> None:
    """Record that the caller's credentials carry only ``scopes`` (an OAuth access token), so that a
    tool needing another one answers 403. Credentials that record none carry every scope."""
    setattr(request, _SCOPES, frozenset(scopes))


def scopes_of(request: HttpRequest) -> frozenset[str] | None:
    """The scopes ``limit_scopes`` recorded for the caller; None: every scope."""
    scopes: frozenset[str] | None = getattr(request, _SCOPES, None)
    return scopes


def access(request: HttpRequest, methods: Sequence[Auth]) -> Access:
    """What the core should know of the caller's credentials: their scopes, and whether an anonymous
    caller can be asked to sign in (OAuth is among ``methods``: the 401 challenge leads to it)."""
    return Access(scopes=scopes_of(request), sign_in=oauth_method(methods) is not None)
