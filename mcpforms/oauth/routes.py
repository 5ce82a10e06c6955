"""Everything an MCP client asks the site for while it signs in, which ``mcpforms.oauth.urls`` serves.

Mounted at the root, since the well-known documents must be there (RFC 8414 §3, RFC 9728 §3): the
protected-resource metadata, the authorization server's metadata under each name a client probes, and a
curated list of django-oauth-toolkit's endpoints under ``oauth/``: authorize, token, revoke, dynamic
registration with its RFC 7592 management, and the user's connected assistants. Not the toolkit's
application management (any signed-in user could create OAuth clients), introspection, device or
userinfo views.

Each endpoint answers with and without its trailing slash: with ``APPEND_SLASH`` Django answers a
slash-less POST with a redirect, which a client follows as a GET, without its body (Claude once built
``/token`` from the server's URL and failed exactly so).
"""

from __future__ import annotations

from typing import Any

from django.urls import URLPattern, URLResolver, include, path
from oauth2_provider import views as toolkit

import mcpforms.oauth.consent as consent
import mcpforms.oauth.dcr as dcr
import mcpforms.oauth.metadata as metadata
import mcpforms.oauth.resource as resource

ISSUER_PATH = "oauth"
"""Where the endpoints live, and the issuer's path: ``BASE_URL/oauth``."""


# (route under oauth/, view, name, the toolkit's name for it). The toolkit's own code reverses its names:
# the registration response's ``registration_client_uri`` (RFC 7591 §3.2.1) and, with the toolkit's own
# request backend, the ``iss`` parameter. So they are given too, in its namespace.
_ENDPOINTS: list[tuple[str, Any, str, str | None]] = [
    ("authorize/", consent.AuthorizationView.as_view(), metadata.AUTHORIZE, "authorize"),
    ("token/", toolkit.TokenView.as_view(), metadata.TOKEN, "token"),
    ("revoke_token/", toolkit.RevokeTokenView.as_view(), metadata.REVOKE, "revoke-token"),
    ("register/", dcr.RegistrationView.as_view(), metadata.REGISTER, "dcr-register"),
    (
        "register/<str:client_id>/",
        dcr.RegistrationManagementView.as_view(),
        metadata.REGISTER_MANAGE,
        "dcr-register-management",
    ),
    ("connected/", consent.ConnectedAssistantsView.as_view(), metadata.CONNECTED, None),
]


def _endpoint(route: str, view: Any, name: str | None) -> list[URLPattern]:
    # The slash-less spelling has no name: what the metadata advertises is the one with the slash.
    where = f"{ISSUER_PATH}/{route}"
    return [path(where, view, name=name), path(where.removesuffix("/"), view)]


_metadata = metadata.ServerMetadataView.as_view()
_well_known = metadata.WELL_KNOWN.lstrip("/")

_toolkit_names: list[URLPattern] = [
    pattern
    for route, view, _, name in _ENDPOINTS
    if name is not None
    for pattern in _endpoint(route, view, name)
]
# The issuer's own path with the well-known suffix, where the toolkit reverses its document to: some
# clients try it too.
_toolkit_names.append(path(f"{ISSUER_PATH}/{_well_known}", _metadata, name="oauth-server-metadata"))

urlpatterns: list[URLPattern | URLResolver] = [
    *resource.urls,
    # RFC 8414 §3.1: the well-known segment goes between the host and the issuer's path.
    path(f"{_well_known}/{ISSUER_PATH}", _metadata, name=metadata.METADATA),
    # The OpenID Connect Discovery forms a client tries next (MCP spec, authorization §2.3).
    path(f".well-known/openid-configuration/{ISSUER_PATH}", _metadata, name=f"{metadata.METADATA}-openid"),
    path(
        f"{ISSUER_PATH}/.well-known/openid-configuration",
        _metadata,
        name=f"{metadata.METADATA}-openid-issuer",
    ),
    # The origin's document, read by clients of the 2025-03-26 spec, which looked for it there.
    path(_well_known, _metadata, name=f"{metadata.METADATA}-root"),
    *[pattern for route, view, name, _ in _ENDPOINTS for pattern in _endpoint(route, view, name)],
    path("", include((_toolkit_names, "oauth2_provider"))),
]
