"""The endpoint as an OAuth 2.1 resource server, with real tokens from django-oauth-toolkit's own views:
authorization code with PKCE, bound to a resource (RFC 8707), described by RFC 9728 metadata."""

from __future__ import annotations

import base64
import hashlib
import secrets
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings
from django.utils import timezone
from oauth2_provider.models import AccessToken as OAuthAccessToken
from oauth2_provider.models import Application

from mcpforms.models import AccessToken
from tests.test_auth import body, post

pytestmark = pytest.mark.django_db

ENDPOINT = "http://testserver/mcp"
REDIRECT = "http://127.0.0.1:8976/callback"
BOTH = {"AUTHENTICATION": ["mcpforms.auth.AccessTokenAuth", "mcpforms.oauth.OAuth2Auth"]}


@pytest.fixture
def ada() -> User:
    return User.objects.create_user("ada", password="pw")


@pytest.fixture
def application() -> Application:
    return Application.objects.create(
        name="An MCP client",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=REDIRECT,
        skip_authorization=True,
    )


def issue(application: Application, user: User, *, resource: str | None, scope: str = "read") -> str:
    """Walk django-oauth-toolkit's authorization-code flow with PKCE, as an MCP client does."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    browser = Client()
    browser.force_login(user)
    query = {
        "response_type": "code",
        "client_id": application.client_id,
        "redirect_uri": REDIRECT,
        "scope": scope,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    if resource is not None:
        query["resource"] = resource
    redirect = browser.get("/o/authorize/", query)
    assert redirect.status_code == 302, redirect.content
    code = parse_qs(urlsplit(redirect["Location"]).query)["code"][0]
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "client_id": application.client_id,
        "code_verifier": verifier,
    }
    if resource is not None:
        form["resource"] = resource
    response = Client().post("/o/token/", form)
    assert response.status_code == 200, response.content
    token: str = response.json()["access_token"]
    return token


def test_the_protected_resource_metadata_names_the_endpoint_and_its_authorization_server():
    for path, resource in (
        ("/.well-known/oauth-protected-resource/mcp", ENDPOINT),
        ("/.well-known/oauth-protected-resource", "http://testserver"),
    ):
        document = Client().get(path).json()
        assert document["resource"] == resource
        assert document["authorization_servers"] == ["http://testserver/o"]
        assert document["bearer_methods_supported"] == ["header"]


@override_settings(MCPFORMS=BOTH)
def test_without_a_token_the_401_points_at_the_metadata():
    response = post("tools/list")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == (
        'Bearer realm="mcp", resource_metadata="http://testserver/.well-known/oauth-protected-resource/mcp"'
    )


@override_settings(MCPFORMS=BOTH)
def test_a_token_issued_for_the_endpoint_acts_as_its_user(application, ada):
    token = issue(application, ada, resource=ENDPOINT)
    answer = body(post("tools/call", {"name": "whoami", "arguments": {}}, token=token))
    assert answer["result"]["content"][0]["text"] == f"user:{ada.pk}"
    # Personal access tokens still work next to OAuth.
    personal = AccessToken.objects.issue(ada, "cli")[1]
    assert post("tools/list", token=personal).status_code == 200


@override_settings(MCPFORMS=BOTH)
@pytest.mark.parametrize("resource", ["https://other.example/mcp", "http://testserver/other", None])
def test_a_token_for_another_resource_or_for_none_is_refused(application, ada, resource):
    token = issue(application, ada, resource=resource)
    response = post("tools/list", token=token)
    assert response.status_code == 401
    assert 'error="invalid_token"' in response["WWW-Authenticate"]
    assert "resource_metadata=" in response["WWW-Authenticate"]


@override_settings(MCPFORMS=BOTH)
def test_an_expired_or_revoked_token_is_refused(application, ada):
    expired = issue(application, ada, resource=ENDPOINT)
    OAuthAccessToken.objects.filter(token_checksum=hashlib.sha256(expired.encode()).hexdigest()).update(
        expires=timezone.now() - timedelta(seconds=1)
    )
    assert post("tools/list", token=expired).status_code == 401
    revoked = issue(application, ada, resource=ENDPOINT)
    assert post("tools/list", token=revoked).status_code == 200
    OAuthAccessToken.objects.filter(token_checksum=hashlib.sha256(revoked.encode()).hexdigest()).delete()
    assert post("tools/list", token=revoked).status_code == 401


@override_settings(MCPFORMS={**BOTH, "OAUTH_SCOPES": ["write"]})
def test_the_required_scopes_are_checked(application, ada):
    assert post("tools/list", token=issue(application, ada, resource=ENDPOINT)).status_code == 401
    both = issue(application, ada, resource=ENDPOINT, scope="read write")
    assert post("tools/list", token=both).status_code == 200
