"""A site that does not sign in with OAuth answers what a client probing for OAuth asks with one sentence
that says how to call it (``mcpforms.discovery``), instead of Django's 404 page."""

from __future__ import annotations

import json

import pytest
from django.test import Client, override_settings

from mcpforms.discovery import MISORDERED, USE_A_TOKEN

pytestmark = pytest.mark.django_db

# What the MCP authorization spec has a client probe, in its order, then its registration fallback.
PROBES = [
    "/.well-known/oauth-protected-resource/mcp",
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-authorization-server/mcp",
    "/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration/mcp",
    "/.well-known/openid-configuration",
]
TOKENS_ONLY = {"AUTHENTICATION": ["mcpforms.auth.AccessTokenAuth"]}


@override_settings(ROOT_URLCONF="tests.urls_token_only", MCPFORMS=TOKENS_ONLY)
@pytest.mark.parametrize("path", PROBES)
def test_a_metadata_probe_is_told_to_use_a_token(path):
    response = Client().get(path)
    assert response.status_code == 404  # a client goes on down its list
    assert response["Content-Type"] == "application/json"
    assert json.loads(response.content) == {"error": "not_found", "error_description": USE_A_TOKEN}


@override_settings(ROOT_URLCONF="tests.urls_token_only", MCPFORMS=TOKENS_ONLY)
def test_a_registration_is_told_to_use_a_token_and_how_to_make_one():
    response = Client(enforce_csrf_checks=True).post(
        "/register",
        json.dumps({"redirect_uris": ["http://127.0.0.1:3000/cb"]}),
        content_type="application/json",
    )
    assert response.status_code == 404
    description = json.loads(response.content)["error_description"]
    assert "'Authorization: Bearer <token>'" in description
    assert "python manage.py mcpforms_token create USERNAME" in description
    assert len(response.content) < 400  # a sentence, not a page


@override_settings(ROOT_URLCONF="tests.urls_signing_in_misordered")
def test_mounted_before_the_sign_in_urls_it_says_to_mount_them_first():
    signing_in = {"AUTHENTICATION": ["mcpforms.oauth.OAuth2Auth"], "BASE_URL": "http://testserver"}
    with override_settings(MCPFORMS=signing_in):
        response = Client().get("/.well-known/oauth-authorization-server")
    assert json.loads(response.content)["error_description"] == MISORDERED


def test_with_the_sign_in_urls_first_the_real_documents_answer():
    signing_in = {"AUTHENTICATION": ["mcpforms.oauth.OAuth2Auth"], "BASE_URL": "http://testserver"}
    with override_settings(MCPFORMS=signing_in):
        response = Client().get("/.well-known/oauth-authorization-server")
    assert response.status_code == 200
    assert json.loads(response.content)["issuer"] == "http://testserver/oauth"


@override_settings(ROOT_URLCONF="tests.urls_signing_in_misordered")
def test_e317_mcpforms_urls_before_the_sign_in_urls():
    from mcpforms.checks.auth import check_auth_settings

    signing_in = {"AUTHENTICATION": ["mcpforms.oauth.OAuth2Auth"], "BASE_URL": "http://testserver"}
    with override_settings(MCPFORMS=signing_in, LOGIN_URL="https://sso.example.com/login"):
        ids = [message.id for message in check_auth_settings()]
    assert "mcpforms.E317" in ids
    with override_settings(MCPFORMS=signing_in, ROOT_URLCONF="tests.urls"):
        assert "mcpforms.E317" not in [message.id for message in check_auth_settings()]


@override_settings(ROOT_URLCONF="tests.urls_token_only_with_a_register_page", MCPFORMS=TOKENS_ONLY)
def test_a_browser_asking_for_register_without_its_slash_still_reaches_the_sites_own_page():
    response = Client().get("/register?next=/")
    assert response.status_code == 301 and response["Location"] == "/register/?next=/"


@override_settings(ROOT_URLCONF="tests.urls_token_only", MCPFORMS={"AUTHENTICATION": ["nowhere.NoSuchAuth"]})
def test_a_probe_of_a_site_whose_authentication_does_not_import_is_still_answered():
    response = Client().get("/.well-known/oauth-authorization-server")
    assert response.status_code == 404
    assert json.loads(response.content)["error_description"] == USE_A_TOKEN
