"""Tokens only for this site's MCP endpoints (RFC 8707), through the real authorize and token endpoints.

A ``resource`` that names no endpoint of the site is refused with ``invalid_target``; a request that names
none is bound to the site's one endpoint, or refused where there are several: an unbound token would be
refused by every endpoint, and the client would sign in again and again.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings
from django.urls import include, path
from oauth2_provider.models import AccessToken as OAuthAccessToken
from oauth2_provider.models import Application

import mcpforms.api
import mcpforms.oauth
from mcpforms.protocol.server import Server
from tests.test_auth import post

pytestmark = pytest.mark.django_db

BASE = "http://testserver"
ENDPOINT = f"{BASE}/mcp"
ISSUER = f"{BASE}/oauth"
REDIRECT = "http://127.0.0.1:8976/callback"
MCPFORMS = {"AUTHENTICATION": ["mcpforms.oauth.OAuth2Auth"], "BASE_URL": BASE}
PRESET = mcpforms.oauth.settings()

# A site with two endpoints: a request has to say which one a token is for.
second = mcpforms.api.build_api(Server(key="oauth-second"), namespace="second-endpoint")
urlpatterns = [
    path("mcp", mcpforms.api.urls),
    path("team/mcp", second.urls),
    path("", include(mcpforms.oauth.urls)),
]
TWO_ENDPOINTS = __name__


@pytest.fixture(autouse=True)
def preset() -> Iterator[None]:
    with override_settings(OAUTH2_PROVIDER=PRESET, MCPFORMS=MCPFORMS):
        yield


@dataclass
class Authorization:
    """The authorization response as the client's redirect URI receives it."""

    response: Any
    verifier: str

    @property
    def parameters(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.response["Location"]).query)

    @property
    def code(self) -> str:
        return self.parameters["code"][0]


def authorize(
    application: Application, user: User, *, resource: list[str] | None, host: str = "testserver"
) -> Authorization:
    """The authorization request an MCP client sends (S256 PKCE), by a signed-in browser."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    browser = Client()
    browser.force_login(user)
    query: dict[str, Any] = {
        "response_type": "code",
        "client_id": application.client_id,
        "redirect_uri": REDIRECT,
        "scope": "mcp",
        "state": "s-1",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    if resource is not None:
        query["resource"] = resource
    response = browser.get("/oauth/authorize/", query, HTTP_HOST=host)
    assert response.status_code == 302, response.content
    return Authorization(response, verifier)


def exchange(
    application: Application,
    authorization: Authorization,
    *,
    resource: str | None,
    url: str = "/oauth/token/",
) -> Any:
    form = {
        "grant_type": "authorization_code",
        "code": authorization.code,
        "redirect_uri": REDIRECT,
        "client_id": application.client_id,
        "code_verifier": authorization.verifier,
    }
    if resource is not None:
        form["resource"] = resource
    return Client().post(url, form)


def audience_of(response: Any) -> list[str]:
    assert response.status_code == 200, response.content
    token = response.json()["access_token"]
    stored = OAuthAccessToken.objects.get(token_checksum=hashlib.sha256(token.encode()).hexdigest())
    return list(stored.resource)


def test_a_token_for_the_endpoint_is_issued_and_works(application, ada):
    response = exchange(application, authorize(application, ada, resource=[ENDPOINT]), resource=ENDPOINT)
    assert audience_of(response) == [ENDPOINT]
    assert post("tools/list", token=response.json()["access_token"]).status_code == 200


@pytest.mark.parametrize(
    "foreign",
    [
        "https://other.example/mcp",
        f"{BASE}/other",
        f"{BASE}/mcp/deeper",  # under the endpoint is not the endpoint
        f"{BASE}/mcp-admin",  # nor what merely starts like it
        BASE,  # the whole origin
    ],
)
def test_a_resource_that_is_no_endpoint_of_the_site_is_refused_at_authorize(application, ada, foreign):
    authorization = authorize(application, ada, resource=[foreign])
    # RFC 8707 §2: the error goes back to the client's redirect URI, with its state; no code.
    assert authorization.response["Location"].startswith(REDIRECT)
    assert authorization.parameters["error"] == ["invalid_target"]
    assert authorization.parameters["state"] == ["s-1"]
    assert "code" not in authorization.parameters
    assert not OAuthAccessToken.objects.exists()


def test_one_foreign_resource_among_the_endpoint_spoils_the_request(application, ada):
    authorization = authorize(application, ada, resource=[ENDPOINT, "https://other.example/mcp"])
    assert authorization.parameters["error"] == ["invalid_target"]


def test_the_origin_is_a_resource_where_the_settings_accept_origin_tokens(application, ada):
    with override_settings(MCPFORMS={**MCPFORMS, "OAUTH_ACCEPT_ORIGIN_AUDIENCE": True}):
        response = exchange(application, authorize(application, ada, resource=[BASE]), resource=BASE)
        assert audience_of(response) == [BASE]


def test_without_a_resource_the_token_is_bound_to_the_one_endpoint(application, ada):
    response = exchange(application, authorize(application, ada, resource=None), resource=None)
    assert audience_of(response) == [ENDPOINT]
    assert post("tools/list", token=response.json()["access_token"]).status_code == 200


def test_a_token_request_may_not_widen_the_authorized_resource(application, ada):
    authorization = authorize(application, ada, resource=[ENDPOINT])
    response = exchange(application, authorization, resource="https://other.example/mcp")
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_target"  # RFC 6749 §5.2: a JSON body, said to be one
    assert response["Cache-Control"] == "no-store"
    assert not OAuthAccessToken.objects.exists()


def test_a_resource_on_a_token_request_alone_must_be_an_endpoint_too(application, ada):
    authorization = authorize(application, ada, resource=None)  # bound to /mcp at authorize
    response = exchange(application, authorization, resource=f"{BASE}/other")
    assert response.json()["error"] == "invalid_target"


@override_settings(ROOT_URLCONF=TWO_ENDPOINTS)
def test_with_two_endpoints_each_is_a_resource_and_narrowing_works(application, ada):
    both = authorize(application, ada, resource=[ENDPOINT, f"{BASE}/team/mcp"])
    assert audience_of(exchange(application, both, resource=f"{BASE}/team/mcp")) == [f"{BASE}/team/mcp"]


@override_settings(ROOT_URLCONF=TWO_ENDPOINTS)
def test_with_two_endpoints_a_request_without_a_resource_is_refused(application, ada):
    authorization = authorize(application, ada, resource=None)
    assert authorization.parameters["error"] == ["invalid_target"]
    (description,) = authorization.parameters["error_description"]
    assert ENDPOINT in description and f"{BASE}/team/mcp" in description  # what would work
    assert not OAuthAccessToken.objects.exists()


@override_settings(ROOT_URLCONF=TWO_ENDPOINTS)
def test_a_token_for_one_endpoint_is_not_one_for_the_other(application, ada):
    authorization = authorize(application, ada, resource=[f"{BASE}/team/mcp"])
    assert exchange(application, authorization, resource=ENDPOINT).json()["error"] == "invalid_target"


def test_a_refresh_keeps_the_resource_and_cannot_widen_it(application, ada):
    tokens = exchange(application, authorize(application, ada, resource=None), resource=None).json()
    refreshed = Client().post(
        "/oauth/token/",
        {
            "grant_type": "refresh_token",
            "refresh_token": tokens["refresh_token"],
            "client_id": application.client_id,
        },
    )
    assert audience_of(refreshed) == [ENDPOINT]
    widened = Client().post(
        "/oauth/token/",
        {
            "grant_type": "refresh_token",
            "refresh_token": refreshed.json()["refresh_token"],
            "client_id": application.client_id,
            "resource": "https://other.example/mcp",
        },
    )
    assert widened.json()["error"] == "invalid_target"


def test_the_authorization_response_names_the_issuer_whatever_host_the_browser_used(application, ada):
    with override_settings(ALLOWED_HOSTS=["testserver", "alias.example"]):
        for host in ("testserver", "alias.example"):
            authorization = authorize(application, ada, resource=[ENDPOINT], host=host)
            assert authorization.parameters["iss"] == [ISSUER]  # RFC 9207, what the metadata says
