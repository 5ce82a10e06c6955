"""The endpoint as an OAuth 2.1 resource server, with real tokens from django-oauth-toolkit's own views:
authorization code with PKCE, bound to a resource (RFC 8707), described by RFC 9728 metadata."""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Iterator
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth.models import User
from django.http import HttpResponse
from django.test import Client, override_settings
from django.utils import timezone
from oauth2_provider.models import AccessToken as OAuthAccessToken
from oauth2_provider.models import Application

from mcpforms.models import AccessToken
from tests.test_auth import body, post

pytestmark = pytest.mark.django_db

ENDPOINT = "http://testserver/mcp"
METADATA = "http://testserver/.well-known/oauth-protected-resource/mcp"
REDIRECT = "http://127.0.0.1:8976/callback"
BOTH = {
    "AUTHENTICATION": ["mcpforms.auth.AccessTokenAuth", "mcpforms.oauth.OAuth2Auth"],
    "BASE_URL": "http://testserver",  # the audience of a token is judged against it, never against Host
}
# Another name the same site answers to: a Host header says nothing about which resource a token is for.
ALIAS = "alias.example"
HOSTS = ["testserver", ALIAS]


@pytest.fixture(autouse=True)
def scopes() -> Iterator[None]:
    """The authorization server offers mcpforms' base scope, "mcp", next to django-oauth-toolkit's own."""
    offered = {"mcp": "Use this site's forms", "read": "Reading scope", "write": "Writing scope"}
    with override_settings(OAUTH2_PROVIDER={"SCOPES": offered, "DEFAULT_SCOPES": ["mcp"]}):
        yield


def issue(application: Application, user: User, *, resource: str | None, scope: str = "mcp") -> str:
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
    redirect = browser.get("/oauth/authorize/", query)
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
    response = Client().post("/oauth/token/", form)
    assert response.status_code == 200, response.content
    token: str = response.json()["access_token"]
    return token


@override_settings(MCPFORMS=BOTH, ALLOWED_HOSTS=HOSTS)
def test_the_protected_resource_metadata_names_the_configured_endpoint_its_scopes_and_its_server():
    for host in HOSTS:
        document = Client().get("/.well-known/oauth-protected-resource/mcp", HTTP_HOST=host).json()
        assert document["resource"] == ENDPOINT  # from BASE_URL, whichever Host asked
        assert document["scopes_supported"] == ["mcp"]  # what a token must carry here (RFC 9728 §2)
        assert document["bearer_methods_supported"] == ["header"]
    assert Client().get("/.well-known/oauth-protected-resource/mcp").json()["authorization_servers"] == [
        "http://testserver/oauth"
    ]


@override_settings(MCPFORMS=BOTH, ALLOWED_HOSTS=HOSTS)
def test_the_origins_document_exists_only_where_tokens_for_the_origin_are_accepted():
    # A client reading it would ask for a token for the whole origin, which this endpoint refuses.
    assert Client().get("/.well-known/oauth-protected-resource").status_code == 404
    with override_settings(MCPFORMS={**BOTH, "OAUTH_ACCEPT_ORIGIN_AUDIENCE": True}):
        document = Client().get("/.well-known/oauth-protected-resource", HTTP_HOST=ALIAS).json()
    assert document["resource"] == "http://testserver"


def test_without_a_base_url_there_is_no_metadata_to_give():
    with override_settings(MCPFORMS={"AUTHENTICATION": BOTH["AUTHENTICATION"]}):
        assert Client().get("/.well-known/oauth-protected-resource/mcp").status_code == 404


@override_settings(MCPFORMS=BOTH, ALLOWED_HOSTS=HOSTS)
def test_without_a_token_the_401_points_at_the_metadata_and_names_the_scope():
    for host in HOSTS:
        response = post("tools/list", HTTP_HOST=host)
        assert response.status_code == 401
        assert (
            response["WWW-Authenticate"] == f'Bearer realm="mcp", resource_metadata="{METADATA}", scope="mcp"'
        )


@override_settings(MCPFORMS=BOTH)
def test_a_token_issued_for_the_endpoint_acts_as_its_user(application, ada):
    token = issue(application, ada, resource=ENDPOINT)
    answer = body(post("tools/call", {"name": "whoami", "arguments": {}}, token=token))
    assert answer["result"]["content"][0]["text"] == f"user:{ada.pk}"
    # Personal access tokens still work next to OAuth.
    personal = AccessToken.objects.issue(ada, "cli")[1]
    assert post("tools/list", token=personal).status_code == 200


def assert_invalid_token(response: HttpResponse) -> None:
    assert response.status_code == 401, response.content
    assert 'error="invalid_token"' in response["WWW-Authenticate"]
    assert f'resource_metadata="{METADATA}"' in response["WWW-Authenticate"]


@override_settings(MCPFORMS=BOTH)
@pytest.mark.parametrize(
    "resource",
    [
        "https://other.example/mcp",
        "http://testserver/other",
        "http://testserver/mcp/deeper",
        "http://testserver",  # the whole origin: a token for every service of the site
        "http://testserver/",
        None,
    ],
)
def test_a_token_for_another_resource_the_whole_origin_or_none_is_refused(application, ada, resource):
    assert_invalid_token(post("tools/list", token=issue(application, ada, resource=resource)))


@override_settings(MCPFORMS=BOTH, ALLOWED_HOSTS=HOSTS)
def test_the_audience_is_the_configured_endpoint_whatever_the_host_header_says(application, ada):
    # A token minted for the endpoint's path on the Host the request names is not one for this site...
    for_the_alias = issue(application, ada, resource="http://alias.example/mcp")
    assert_invalid_token(post("tools/list", token=for_the_alias, HTTP_HOST=ALIAS))
    # ...and a token for the configured endpoint is, through whichever name the site was reached.
    assert (
        post("tools/list", token=issue(application, ada, resource=ENDPOINT), HTTP_HOST=ALIAS).status_code
        == 200
    )


@override_settings(MCPFORMS=BOTH)
def test_a_setting_accepts_tokens_for_the_whole_origin(application, ada):
    origin_wide = issue(application, ada, resource="http://testserver")
    with override_settings(MCPFORMS={**BOTH, "OAUTH_ACCEPT_ORIGIN_AUDIENCE": True}):
        assert post("tools/list", token=origin_wide).status_code == 200
        assert_invalid_token(
            post("tools/list", token=issue(application, ada, resource="http://testserver/x"))
        )


def test_without_a_base_url_oauth_tokens_are_refused(application, ada, caplog):
    token = issue(application, ada, resource=ENDPOINT)
    with override_settings(MCPFORMS={"AUTHENTICATION": BOTH["AUTHENTICATION"]}):
        response = post("tools/list", token=token)
    assert response.status_code == 401
    assert 'error="invalid_token"' in response["WWW-Authenticate"]
    assert "MCPFORMS['BASE_URL']" in caplog.text


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


@override_settings(MCPFORMS=BOTH)
def test_by_default_a_token_needs_the_base_scope_and_is_told_so_with_a_403(application, ada):
    response = post("tools/list", token=issue(application, ada, resource=ENDPOINT, scope="read"))
    # RFC 6750 §3.1: a valid token without the scope is a 403 naming it, which hosts use to step up.
    assert response.status_code == 403
    assert response["WWW-Authenticate"] == (
        f'Bearer realm="mcp", resource_metadata="{METADATA}", scope="mcp", error="insufficient_scope", '
        'error_description="The access token lacks the scope mcp"'
    )
    assert body(response)["error"]["code"] == -32600
    assert "scope" in body(response)["error"]["message"]


@override_settings(MCPFORMS={**BOTH, "OAUTH_SCOPES": ["mcp", "write"]})
def test_the_required_scopes_are_checked(application, ada):
    response = post("tools/list", token=issue(application, ada, resource=ENDPOINT))
    assert response.status_code == 403
    assert 'scope="mcp write"' in response["WWW-Authenticate"]  # all the scopes it needs, in one challenge
    both = issue(application, ada, resource=ENDPOINT, scope="mcp write")
    assert post("tools/list", token=both).status_code == 200


@override_settings(MCPFORMS={**BOTH, "OAUTH_SCOPES": []})
def test_no_required_scope_is_a_choice_the_settings_make(application, ada):
    assert (
        post("tools/list", token=issue(application, ada, resource=ENDPOINT, scope="read")).status_code == 200
    )
    assert "scope=" not in post("tools/list")["WWW-Authenticate"]


@override_settings(MCPFORMS=BOTH, ROOT_URLCONF="tests.urls_without_oauth")
def test_without_the_metadata_mounted_the_challenge_names_no_document():
    # mcpforms.W301 says the urls are missing; until they are mounted, a caller still gets a clear 401.
    response = post("tools/list")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="mcp", scope="mcp"'
    assert body(response)["error"]["code"] == -32600
