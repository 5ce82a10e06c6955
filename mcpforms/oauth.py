"""The MCP endpoint as an OAuth 2.1 resource server on django-oauth-toolkit: ``pip install mcpforms[oauth]``.

Add ``"mcpforms.oauth.OAuth2Auth"`` to ``MCPFORMS['AUTHENTICATION']`` and mount ``mcpforms.oauth.urls`` at
the site's root, next to django-oauth-toolkit's own urls. Then a client without a token gets a 401 whose
``WWW-Authenticate`` points at the RFC 9728 protected-resource metadata, which names the authorization
server; it obtains a token bound to the endpoint (RFC 8707 ``resource``) and calls with it.

A token counts only when it was issued for this endpoint: django-oauth-toolkit checks the audience of a
token bound to a resource, and lets a token bound to none through anywhere; an MCP server must refuse
those (tokens meant for another service must not be replayed here), so this does.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.urls import path, reverse
from ninja.security import HttpBearer
from oauth2_provider.oauth2_backends import get_oauthlib_core
from oauth2_provider.views import OAuthProtectedResourceMetadataView

from mcpforms.conf import conf
from mcpforms.models import ACCESS_TOKEN_PREFIX

METADATA_URL_NAME = "mcpforms-oauth-protected-resource"


class OAuth2Auth(HttpBearer):
    """An access token django-oauth-toolkit issued for this endpoint, carrying ``OAUTH_SCOPES``."""

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        if token.startswith(ACCESS_TOKEN_PREFIX):
            return None  # a personal access token: mcpforms.auth.AccessTokenAuth's to judge
        valid, oauth_request = get_oauthlib_core().verify_request(request, scopes=list(conf.OAUTH_SCOPES))
        if not valid:
            return None
        access_token = oauth_request.access_token
        if not access_token.resource:
            return None  # bound to no resource: issued for anything, so not for us
        user = access_token.user
        # A client-credentials token acts for no person: a form tool always acts for one.
        return user if user is not None and user.is_active else None

    def resource_metadata_url(self, request: HttpRequest) -> str:
        """Where this endpoint's protected-resource metadata lives (RFC 9728 §3.1: the well-known prefix,
        then the endpoint's own path)."""
        return request.build_absolute_uri(reverse(METADATA_URL_NAME, args=[request.path.strip("/")]))


urls = [
    # The endpoint's own document, which the 401 points at: its resource is the endpoint's URL.
    path(
        ".well-known/oauth-protected-resource/<path:resource_path>",
        OAuthProtectedResourceMetadataView.as_view(),
        name=METADATA_URL_NAME,
    ),
    # The origin's document, for clients that look there first: its resource is the origin, which
    # django-oauth-toolkit's prefix rule lets cover every endpoint below it.
    path(
        ".well-known/oauth-protected-resource",
        OAuthProtectedResourceMetadataView.as_view(),
        name=f"{METADATA_URL_NAME}-root",
    ),
]
"""``path("", include(mcpforms.oauth.urls))`` at the root of the project's urls."""
