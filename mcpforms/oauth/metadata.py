"""Where an MCP client finds the authorization server: the RFC 8414 document, under every name it probes.

The issuer is a path issuer, ``BASE_URL`` + ``/oauth``. After reading the protected-resource metadata a
client looks for its document at ``/.well-known/oauth-authorization-server/oauth``, then at the OpenID
Connect forms ``/.well-known/openid-configuration/oauth`` and ``/oauth/.well-known/openid-configuration``
(MCP spec, authorization §2.3; older clients try the origin's ``/.well-known/oauth-authorization-server``).
Each answers the same document, whose ``issuer`` is that one string exactly: the 2026-07-28 spec has a
client drop a document whose issuer differs from the one it built the URL from. It comes from
``BASE_URL``, never from the request's ``Host``, like every URL in the document, and like the RFC 9207
``iss`` parameter of the authorization response (``mcpforms.oauth.validator.Backend``), which a client
compares with it.

This is not an OpenID Provider: the OpenID Connect locations answer with the OAuth document, whose fields
are all an MCP client reads there.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from django.http import Http404, HttpRequest, JsonResponse
from django.urls import NoReverseMatch, reverse
from oauth2_provider.views import OAuthServerMetadataView

from mcpforms.conf import conf

WELL_KNOWN = "/.well-known/oauth-authorization-server"

# The names of the views mcpforms.oauth.urls serves (reverse() them; the paths may move).
AUTHORIZE = "mcpforms-oauth-authorize"
TOKEN = "mcpforms-oauth-token"
REVOKE = "mcpforms-oauth-revoke"
REGISTER = "mcpforms-oauth-register"
REGISTER_MANAGE = "mcpforms-oauth-register-manage"
CONNECTED = "mcpforms-oauth-connected"
METADATA = "mcpforms-oauth-metadata"

# django-oauth-toolkit's view names, as its metadata view asks for them, and what serves each here. Those
# it asks for and mcpforms does not serve (introspection, JWKS) are left out of the document.
_ENDPOINTS = {
    "authorize": AUTHORIZE,
    "token": TOKEN,
    "revoke-token": REVOKE,
    "dcr-register": REGISTER,
}


def _base() -> str | None:
    base = conf.BASE_URL
    return base.rstrip("/") if isinstance(base, str) and base else None


def issuer() -> str | None:
    """The authorization server's issuer identifier, or None without ``BASE_URL`` or the urls mounted.

    RFC 8414 §3.1 builds the metadata URL by inserting the well-known segment between the host and the
    issuer's path; this takes it out again from where the path-form document is mounted, so the two
    always agree (``/.well-known/oauth-authorization-server/oauth`` ↔ ``BASE_URL/oauth``).
    """
    base = _base()
    if base is None:
        return None
    try:
        location = reverse(METADATA)
    except NoReverseMatch:
        return None
    return base + location.replace(WELL_KNOWN, "", 1)


def endpoint_url(name: str, **kwargs: Any) -> str | None:
    """The absolute URL of one of the views mcpforms.oauth.urls serves, on ``BASE_URL``."""
    base = _base()
    if base is None:
        return None
    try:
        return base + reverse(name, kwargs=kwargs or None)
    except NoReverseMatch:
        return None


class ServerMetadataView(OAuthServerMetadataView):  # type: ignore[misc]
    """django-oauth-toolkit's RFC 8414 document, with the issuer and the endpoints on ``BASE_URL``.

    The toolkit decides the rest from its settings (what it advertises is what it accepts): the grant and
    response types, S256 alone once ``plain`` is refused, ``none`` among the token endpoint's methods,
    ``client_id_metadata_document_supported``, the ``iss`` parameter, and ``registration_endpoint`` only
    while dynamic registration is on.
    """

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
        published = issuer()
        if published is None:
            # No BASE_URL (mcpforms.E305): there is no issuer a client could check this document against.
            raise Http404("No authorization server is described here.")
        document = json.loads(super().get(request, *args, **kwargs).content)
        document["issuer"] = published  # the toolkit derives it from the path and the Host header
        response = JsonResponse(document)
        response["Access-Control-Allow-Origin"] = "*"  # browser-based clients read it (RFC 8414 §3)
        return response

    def _get_endpoint_url(self, request: HttpRequest, view_name: str, required: bool = False) -> str | None:
        name = _ENDPOINTS.get(view_name)
        return endpoint_url(name) if name is not None else None


def with_issuer(uri: str, published: str) -> str:
    """``uri`` with exactly one ``iss``, ``published``: a second one would make the response ambiguous."""
    parts = urlsplit(uri)
    # A code response carries its parameters in the query (RFC 6749 §4.1.2); only the implicit grant,
    # which mcpforms' preset turns off, uses the fragment.
    if parts.fragment:
        fragment = [
            (key, value) for key, value in parse_qsl(parts.fragment, keep_blank_values=True) if key != "iss"
        ]
        return urlunsplit(parts._replace(fragment=urlencode([*fragment, ("iss", published)])))
    query = [(key, value) for key, value in parse_qsl(parts.query, keep_blank_values=True) if key != "iss"]
    return urlunsplit(parts._replace(query=urlencode([*query, ("iss", published)])))
