"""What a client that looks for OAuth hears from a site that does not sign in with it.

Told 401 by the endpoint, a client that can sign in probes the site's root for the documents of RFC 9728
and RFC 8414 and, finding none, registers itself at ``/register`` (the MCP authorization spec's fallback).
Without these answers it got Django's 404 page, 185 lines of HTML the client printed as they came; with
them it prints one sentence that says how this site is called: with a personal access token.
``mcpforms.urls`` serves them at the root, so that a site that does sign in mounts ``mcpforms.oauth.urls``
before it, and the real documents answer instead (``mcpforms.E317`` says when the order is wrong).
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect, JsonResponse
from django.urls import Resolver404, resolve
from django.views.decorators.csrf import csrf_exempt

from mcpforms.auth import configured_auth, oauth_method

USE_A_TOKEN = (
    "This site does not sign in with OAuth. Call it with a personal access token instead, sent as "
    "'Authorization: Bearer <token>'; an administrator makes one with "
    "'python manage.py mcpforms_token create USERNAME'."
)
MISORDERED = (
    "This site signs in with OAuth, but mcpforms.urls is mounted before mcpforms.oauth.urls, which answers "
    "here: put path('', include(mcpforms.oauth.urls)) first in the URLconf."
)


def _answer() -> JsonResponse:
    # 404, so that a client goes on down its list of places to look; the text is what it prints at the end.
    # The endpoint's own rule for whether it can send a caller to sign in (its 401 challenge).
    try:
        signs_in = oauth_method(configured_auth()) is not None
    except Exception:  # AUTHENTICATION names a method that does not import: its check reports it
        signs_in = False
    description = MISORDERED if signs_in else USE_A_TOKEN
    return JsonResponse({"error": "not_found", "error_description": description}, status=404)


def metadata(request: HttpRequest, rest: str = "") -> HttpResponse:
    """``/.well-known/oauth-protected-resource``, ``oauth-authorization-server`` and
    ``openid-configuration``, under any path: no such document here."""
    return _answer()


@csrf_exempt  # a client's registration POST has no CSRF token; nothing is written
def register(request: HttpRequest) -> HttpResponse:
    """``/register``, where a client registers itself when it found no metadata (RFC 7591)."""
    if request.method == "GET" and settings.APPEND_SLASH and _served("/register/"):
        # The project's own /register/ page: what CommonMiddleware's slash would have reached.
        return HttpResponsePermanentRedirect(request.get_full_path().replace("/register", "/register/", 1))
    return _answer()


def _served(path: str) -> bool:
    try:
        resolve(path)
    except Resolver404:
        return False
    return True
