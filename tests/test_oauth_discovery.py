"""What an MCP client finds when it goes looking for the authorization server, and what it can reach.

The matrix: every URL a client probes (MCP spec, authorization §2.3, as the Python SDK builds them) ×
what the document must say, read through the site's own name and through a Host header that names
another; then the endpoints it advertises, spelled with and without their trailing slash.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client, override_settings
from mcp.client.auth.utils import build_oauth_authorization_server_metadata_discovery_urls

import mcpforms.oauth
from tests.test_oauth_validator import ENDPOINT, authorize, exchange

pytestmark = pytest.mark.django_db

BASE = "http://testserver"
ISSUER = f"{BASE}/oauth"
MCPFORMS = {"AUTHENTICATION": ["mcpforms.oauth.OAuth2Auth"], "BASE_URL": BASE}
HOSTILE = "evil.example"  # a name the site answers to, which says nothing about who the issuer is
PRESET = mcpforms.oauth.settings()

# Where clients look, in the order they do (path issuer): RFC 8414 then OpenID Connect Discovery's two
# forms; then the origin's document, which clients of the 2025-03-26 spec read, and the issuer's own
# path followed by the well-known suffix, which some clients try.
PROBED = [
    "/.well-known/oauth-authorization-server/oauth",
    "/.well-known/openid-configuration/oauth",
    "/oauth/.well-known/openid-configuration",
    "/.well-known/oauth-authorization-server",
    "/oauth/.well-known/oauth-authorization-server",
]


@pytest.fixture(autouse=True)
def preset() -> Iterator[None]:
    with override_settings(OAUTH2_PROVIDER=PRESET, MCPFORMS=MCPFORMS, ALLOWED_HOSTS=["testserver", HOSTILE]):
        yield


def document(url: str, **extra: Any) -> dict[str, Any]:
    response = Client().get(url, **extra)
    assert response.status_code == 200, (url, response.status_code)
    assert response["Content-Type"] == "application/json"
    assert response["Access-Control-Allow-Origin"] == "*"  # browser-based clients (the Inspector) read it
    found: dict[str, Any] = response.json()
    return found


def test_the_urls_a_real_client_builds_from_the_protected_resource_metadata_are_all_served():
    prm = document("/.well-known/oauth-protected-resource/mcp")
    assert prm["resource"] == ENDPOINT
    assert prm["authorization_servers"] == [ISSUER]
    urls = build_oauth_authorization_server_metadata_discovery_urls(prm["authorization_servers"][0], ENDPOINT)
    assert [url.removeprefix(BASE) for url in urls] == PROBED[:3]  # the SDK's order: the same three
    for url in urls:
        assert document(url)["issuer"] == ISSUER  # 2026-07-28: identical to the issuer the URL was built from


@pytest.mark.parametrize("host", ["testserver", HOSTILE])
@pytest.mark.parametrize("url", PROBED)
def test_every_probed_url_answers_the_same_document(url, host):
    found = document(url, HTTP_HOST=host)
    assert found["issuer"] == ISSUER  # from BASE_URL, whatever the Host header says
    assert found["authorization_endpoint"] == f"{ISSUER}/authorize/"
    assert found["token_endpoint"] == f"{ISSUER}/token/"
    assert found["revocation_endpoint"] == f"{ISSUER}/revoke_token/"
    assert found["registration_endpoint"] == f"{ISSUER}/register/"
    assert found["code_challenge_methods_supported"] == ["S256"]  # never "plain"
    assert found["response_types_supported"] == ["code"]  # no implicit grant
    assert found["grant_types_supported"] == [
        "authorization_code",
        "refresh_token",
    ]  # no implicit, no password
    # Claude uses its client metadata document only when both of these say so; otherwise it falls back to DCR.
    assert found["client_id_metadata_document_supported"] is True
    assert "none" in found["token_endpoint_auth_methods_supported"]
    # RFC 9207: ChatGPT uses its stable client id only where `iss` is advertised.
    assert found["authorization_response_iss_parameter_supported"] is True
    assert found["scopes_supported"] == ["mcp"]
    # Nothing that is not served here.
    assert not {"introspection_endpoint", "jwks_uri", "device_authorization_endpoint"} & set(found)


def test_the_documents_follow_the_toolkit_settings():
    with override_settings(OAUTH2_PROVIDER={**PRESET, "DCR_ENABLED": False, "CIMD_ENABLED": False}):
        found = document(PROBED[0])
    assert "registration_endpoint" not in found  # RFC 8414 §2: present iff registration is offered
    assert found["client_id_metadata_document_supported"] is False
    with override_settings(OAUTH2_PROVIDER={}):  # the toolkit's defaults: what it accepts is what it says
        found = document(PROBED[0])
    assert found["issuer"] == ISSUER
    assert "plain" in found["code_challenge_methods_supported"]


@pytest.mark.parametrize("url", [*PROBED, "/.well-known/oauth-protected-resource/mcp"])
def test_without_a_base_url_nothing_is_described(url):
    with override_settings(MCPFORMS={"AUTHENTICATION": MCPFORMS["AUTHENTICATION"]}):
        assert Client().get(url).status_code == 404


@pytest.mark.parametrize(
    "url",
    [
        # django-oauth-toolkit's application management: any signed-in user could create OAuth clients.
        "/o/applications/",
        "/o/applications/register/",
        "/oauth/applications/",
        "/oauth/applications/register/",
        "/oauth/authorized_tokens/",
        # Introspection, the device flow, OpenID Connect's userinfo and keys.
        "/oauth/introspect/",
        "/oauth/device-authorization/",
        "/oauth/device/",
        "/oauth/userinfo/",
        "/oauth/.well-known/jwks.json",
        # The old mount's names for what lives under /oauth now, and issuers that are not this one.
        "/o/authorize/",
        "/o/token/",
        "/.well-known/oauth-authorization-server/o",
        "/.well-known/oauth-authorization-server/oauth/extra",
    ],
)
def test_what_is_not_served(url):
    browser = Client()
    browser.force_login(User.objects.create_user("ada", password="pw"))
    assert browser.get(url).status_code == 404
    assert browser.post(url, {"name": "x"}).status_code == 404


@override_settings(APPEND_SLASH=True)
@pytest.mark.parametrize("url", ["/oauth/token/", "/oauth/token"])
def test_the_token_endpoint_answers_a_post_with_or_without_its_slash(application, url):
    # CommonMiddleware would answer /oauth/token with a 301 to /oauth/token/, which a client follows
    # as a GET, without the code.
    ada = User.objects.create_user("ada", password="pw")
    response = exchange(
        application, authorize(application, ada, resource=[ENDPOINT]), resource=ENDPOINT, url=url
    )
    assert response.status_code == 200, response.content
    assert response.json()["token_type"] == "Bearer"
    assert response["Cache-Control"] == "no-store"


@override_settings(APPEND_SLASH=True)
@pytest.mark.parametrize("url", ["/oauth/revoke_token", "/oauth/register", "/oauth/register/some-client"])
def test_every_other_endpoint_answers_without_its_slash_too(url):
    response = Client().post(url, "{}", content_type="application/json")
    assert response.status_code not in (301, 302, 404), url


@override_settings(APPEND_SLASH=True)
def test_a_revocation_without_the_slash_revokes(application):
    ada = User.objects.create_user("ada", password="pw")
    tokens = exchange(application, authorize(application, ada, resource=[ENDPOINT]), resource=ENDPOINT).json()
    response = Client().post(
        "/oauth/revoke_token", {"token": tokens["access_token"], "client_id": application.client_id}
    )
    assert response.status_code == 200
    assert not application.accesstoken_set.exists()


def test_under_login_required_middleware_only_authorize_and_connected_want_a_signed_in_user(application):
    middleware = [
        "django.contrib.sessions.middleware.SessionMiddleware",
        "django.middleware.common.CommonMiddleware",
        "django.middleware.csrf.CsrfViewMiddleware",
        "django.contrib.auth.middleware.AuthenticationMiddleware",
        "django.contrib.auth.middleware.LoginRequiredMiddleware",
        "django.contrib.messages.middleware.MessageMiddleware",
    ]
    with override_settings(MIDDLEWARE=middleware, LOGIN_URL="/accounts/login/"):
        for url in [*PROBED, "/.well-known/oauth-protected-resource/mcp"]:
            assert Client().get(url).status_code == 200, url
        assert Client().post("/oauth/token/", {"grant_type": "authorization_code"}).status_code == 400
        assert Client().post("/oauth/revoke_token/").status_code != 302
        for url in ["/oauth/authorize/", "/oauth/connected/"]:
            response = Client().get(url, {"client_id": application.client_id})
            assert response.status_code == 302
            assert response["Location"].startswith("/accounts/login/")


def test_every_endpoint_a_client_reaches_before_signing_in_works_under_login_required_middleware():
    # Django 5.1's LoginRequiredMiddleware sends every view to the login page unless it is exempt: a
    # client that is not signed in must still read the documents, register and redeem its code.
    middleware = [*settings.MIDDLEWARE, "django.contrib.auth.middleware.LoginRequiredMiddleware"]
    with override_settings(MIDDLEWARE=middleware):
        client = Client()
        for url in [*PROBED, "/.well-known/oauth-protected-resource/mcp"]:
            assert client.get(url).status_code == 200, url
        for url in ["/oauth/token/", "/oauth/revoke_token/"]:
            assert client.post(url, {}).status_code == 400, url  # the endpoint's own answer, no redirect
        assert client.post("/oauth/register/", "{}", content_type="application/json").status_code == 400
        # The consent page needs a person: it sends them to log in.
        assert client.get("/oauth/authorize/").status_code == 302
