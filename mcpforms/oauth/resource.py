"""The MCP endpoint as an OAuth 2.1 resource server on django-oauth-toolkit (the ``oauth`` extra).

Add ``"mcpforms.oauth.OAuth2Auth"`` to ``MCPFORMS['AUTHENTICATION']``, set ``MCPFORMS['BASE_URL']`` and mount
``mcpforms.oauth.urls`` at the site's root, next to django-oauth-toolkit's own urls. Then a client without a
token gets a 401 whose ``WWW-Authenticate`` points at the RFC 9728 protected-resource metadata, which names
the authorization server and the scopes; it obtains a token bound to the endpoint (RFC 8707 ``resource``)
and calls with it.

A token counts only when it was issued for this endpoint: its audience must be the endpoint's URL, built
from ``BASE_URL`` and the endpoint's path. Never from the request's ``Host``: a client names any Host it
likes, so a token minted for ``https://evil.example/mcp`` would otherwise pass on a request that says
``Host: evil.example``. django-oauth-toolkit lets a token bound to no resource through anywhere, and a
token bound to the origin through on every path below it; an MCP server must refuse both (tokens meant
for another service must not be replayed here), so this does, unless ``OAUTH_ACCEPT_ORIGIN_AUDIENCE``
accepts the origin. A valid token without the ``OAUTH_SCOPES`` gets a 403 naming them (RFC 6750 §3.1),
from which a client can ask for more (step-up).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from django.contrib.auth.decorators import login_not_required
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import NoReverseMatch, path, reverse
from ninja.security import HttpBearer
from oauth2_provider.oauth2_backends import get_oauthlib_core
from oauth2_provider.settings import oauth2_settings
from oauth2_provider.views import OAuthProtectedResourceMetadataView

from mcpforms.auth import Challenge, insufficient_scope, limit_scopes
from mcpforms.conf import conf
from mcpforms.models import ACCESS_TOKEN_PREFIX
from mcpforms.oauth.metadata import issuer

logger = logging.getLogger(__name__)

METADATA_URL_NAME = "mcpforms-oauth-protected-resource"
DEFAULT_PORTS = {"http": 80, "https": 443}


def endpoint_resource(request: HttpRequest) -> str | None:
    """The resource identifier of the endpoint ``request`` reached: ``BASE_URL`` then the endpoint's path,
    without a trailing slash (RFC 8707 §2, the MCP spec's canonical server URI); None without ``BASE_URL``."""
    base = conf.BASE_URL
    if not isinstance(base, str) or not base:
        return None
    return base.rstrip("/") + request.path.rstrip("/")


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _canonical(uri: object) -> tuple[str, str, int | None, str] | None:
    """A resource URI as compared: scheme and host in lower case, the default port spelled out, no trailing
    slash; None for what is no plain absolute URL (userinfo, query or fragment could disguise another one)."""
    if not isinstance(uri, str):
        return None
    parts = urlsplit(uri)
    try:
        port = parts.port
    except ValueError:
        return None
    if not parts.scheme or not parts.hostname or parts.username is not None or parts.query or "#" in uri:
        return None
    scheme = parts.scheme.lower()
    return scheme, parts.hostname.lower(), port or DEFAULT_PORTS.get(scheme), parts.path.rstrip("/")


def issued_for(audiences: Sequence[object], resource: str) -> bool:
    """Whether a token bound to ``audiences`` was issued for ``resource``: exactly, or for its origin where
    ``OAUTH_ACCEPT_ORIGIN_AUDIENCE`` allows; never by prefix, and never a token bound to nothing."""
    accepted = {_canonical(resource)}
    if conf.OAUTH_ACCEPT_ORIGIN_AUDIENCE:
        accepted.add(_canonical(origin_of(resource)))
    accepted.discard(None)
    return any(_canonical(audience) in accepted for audience in audiences)


def _verified_token(request: HttpRequest, token: str, resource: str) -> Any:
    """django-oauth-toolkit's access token for ``token`` when it is known, unexpired and usable, or None.

    Verified as a request to ``resource``, not to the URL the request claims (its Host), so that the
    toolkit's own audience check judges the same URL this module does. Scopes are judged afterwards: a
    token lacking them is answered differently (403) from one that is no good (401).
    """
    server = get_oauthlib_core().server
    headers = {"Authorization": f"Bearer {token}"}
    valid, oauth_request = server.verify_request(resource, request.method, None, headers, scopes=[])
    return oauth_request.access_token if valid else None


class OAuth2Auth(HttpBearer):
    """An access token django-oauth-toolkit issued for this endpoint, carrying ``OAUTH_SCOPES``."""

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        if token.startswith(ACCESS_TOKEN_PREFIX):
            return None  # a personal access token: mcpforms.auth.AccessTokenAuth's to judge
        resource = endpoint_resource(request)
        if resource is None:
            logger.warning(
                "Refused an OAuth access token: MCPFORMS['BASE_URL'] is not set, so there is no URL to "
                "judge its audience by (manage.py check reports mcpforms.E305)"
            )
            return None
        access_token = _verified_token(request, token, resource)
        if access_token is None or not issued_for(access_token.resource or [], resource):
            return None
        user = access_token.user
        # A client-credentials token acts for no person: a form tool always acts for one.
        if user is None or not user.is_active:
            return None
        required = self.required_scopes()
        if not access_token.allow_scopes(required):
            raise self._insufficient_scope(request, required, access_token.scope.split())
        # What a tool's own scope is checked against (FormTool.scope), on top of Django's permissions.
        limit_scopes(request, access_token.scope.split())
        return user

    def required_scopes(self) -> list[str]:
        """The scopes every token must carry, as the challenges and the metadata name them."""
        return list(conf.OAUTH_SCOPES)

    def resource_metadata_url(self, request: HttpRequest) -> str | None:
        """Where this endpoint's protected-resource metadata lives (RFC 9728 §3.1: the well-known prefix,
        then the endpoint's own path), on the site ``BASE_URL`` names when it is set; None when
        ``mcpforms.oauth.urls`` is not mounted (``mcpforms.W301``), so the challenge names no document
        rather than the request failing."""
        try:
            location = reverse(METADATA_URL_NAME, args=[request.path.strip("/")])
        except NoReverseMatch:
            return None
        base = conf.BASE_URL
        if isinstance(base, str) and base:
            return base.rstrip("/") + location  # where the site serves it, as URL-mode links are built
        return request.build_absolute_uri(location)

    def _insufficient_scope(self, request: HttpRequest, required: list[str], held: list[str]) -> Challenge:
        # The 2026-07-28 spec: the challenge names every scope the operation needs, in one go.
        missing = " ".join(scope for scope in required if scope not in held)
        return Challenge(
            403,
            f"Forbidden: the access token lacks the scope {missing}; ask the authorization server for it",
            www_authenticate=insufficient_scope(
                resource_metadata=self.resource_metadata_url(request), scopes=required, held=held
            ),
        )


class ProtectedResourceMetadataView(OAuthProtectedResourceMetadataView):  # type: ignore[misc]
    """The RFC 9728 document: its ``resource`` built from ``BASE_URL`` as the audience check builds it,
    and the scopes a token must carry as ``scopes_supported`` (what a client asks for when the challenge
    names none; not every scope the authorization server knows)."""

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if self.get_resource(request) is None:
            raise Http404("No protected resource is described here.")
        response: HttpResponse = super().get(request, *args, **kwargs)
        return response

    def get_resource(self, request: HttpRequest) -> str | None:
        base = conf.BASE_URL
        if not isinstance(base, str) or not base:
            return None  # mcpforms.E305: tokens are refused, and no URL says what they would be for
        resource_path: str | None = self.kwargs.get("resource_path")
        if resource_path is None:
            # The origin's document describes the origin as the resource (RFC 9728 §3.3): a client that
            # read it would ask for a token this endpoint refuses, unless the setting accepts those.
            return origin_of(base) if conf.OAUTH_ACCEPT_ORIGIN_AUDIENCE else None
        return base.rstrip("/") + "/" + resource_path.strip("/")

    def get_scopes_supported(self) -> list[str]:
        return list(conf.OAUTH_SCOPES)

    def get_authorization_servers(self, request: HttpRequest) -> list[str]:
        # The issuer mcpforms.oauth.metadata publishes, from BASE_URL: a client builds the metadata URL
        # from this string and drops a document whose issuer differs (MCP spec 2026-07-28). Servers the
        # project names itself (OAUTH2_PROTECTED_RESOURCE_AUTHORIZATION_SERVERS) come first.
        published = issuer()
        if published is None or oauth2_settings.OAUTH2_PROTECTED_RESOURCE_AUTHORIZATION_SERVERS:
            servers: list[str] = super().get_authorization_servers(request)
            return servers
        return [published]


urls = [
    # The endpoint's own document, which the 401 points at: its resource is the endpoint's URL.
    path(
        ".well-known/oauth-protected-resource/<path:resource_path>",
        # Public, as OAuth discovery must be: clients read it before anyone signs in.
        login_not_required(ProtectedResourceMetadataView.as_view()),
        name=METADATA_URL_NAME,
    ),
    # The origin's document, for clients that look there first: only with OAUTH_ACCEPT_ORIGIN_AUDIENCE.
    path(
        ".well-known/oauth-protected-resource",
        login_not_required(ProtectedResourceMetadataView.as_view()),
        name=f"{METADATA_URL_NAME}-root",
    ),
]
"""``path("", include(mcpforms.oauth.urls))`` at the root of the project's urls."""
