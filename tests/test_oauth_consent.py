"""The consent page and the connected-assistants page as a person meets them: who is asking (and how sure
the site is of it), where the browser goes next, which endpoint and what it may do, who is signed in; the
page cannot be framed, needs its CSRF token, and never redirects anywhere unregistered.

Served where ``mcpforms.oauth.urls`` mounts them (``tests/urls.py``): ``oauth/authorize/``, ``oauth/token/``,
``oauth/connected/``.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import re
import secrets
from collections.abc import Iterator
from html import unescape
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.http import HttpResponse
from django.test import Client, override_settings
from oauth2_provider.models import AccessToken, Application, Grant, RefreshToken

from mcpforms.oauth import consent
from tests.test_auth import body, post

pytestmark = pytest.mark.django_db


AUTHORIZE = "/oauth/authorize/"
CONNECTED = "/oauth/connected/"
ENDPOINT = "http://testserver/mcp"
ISSUER = "http://testserver/oauth"
CLAUDE_CALLBACK = "https://claude.ai/api/mcp/auth_callback"
CLAUDE_CIMD = "https://claude.ai/oauth/mcp-oauth-client-metadata"
SCOPE_TEXT = "Fill in and submit this site's forms as you"
PROVIDER = {
    "SCOPES": {"mcp": SCOPE_TEXT},
    "DEFAULT_SCOPES": ["mcp"],
    "ALLOW_LOCALHOST_LOOPBACK": True,
    "PKCE_REQUIRED": True,
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "OIDC_ISS_ENDPOINT": ISSUER,
    "REQUEST_APPROVAL_PROMPT": "force",
}
MCPFORMS = {"AUTHENTICATION": ["mcpforms.oauth.OAuth2Auth"], "BASE_URL": "http://testserver"}


@pytest.fixture(autouse=True)
def site() -> Iterator[None]:
    with override_settings(OAUTH2_PROVIDER=PROVIDER, MCPFORMS=MCPFORMS):
        yield


@pytest.fixture
def ada() -> User:
    return User.objects.create_user("ada", password="pw", first_name="Ada", last_name="Lovelace")


@pytest.fixture
def browser(ada: User) -> Client:
    client = Client()
    client.force_login(ada)
    return client


def application(
    *, name: str, redirect: str, source: str = "manual", client_id: str | None = None
) -> Application:
    extra = {"client_id": client_id} if client_id else {}
    return Application.objects.create(
        name=name,
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=redirect,
        registration_source=source,
        **extra,
    )


@pytest.fixture
def dcr_app() -> Application:
    return application(name="Claude", redirect=CLAUDE_CALLBACK, source="dcr")


@pytest.fixture
def cimd_app() -> Application:
    return application(name="Claude", redirect=CLAUDE_CALLBACK, source="cimd", client_id=CLAUDE_CIMD)


@pytest.fixture
def local_app() -> Application:
    # Claude Code's shape: a portless loopback URI, matched on any port (RFC 8252 §7.3).
    return application(name="Claude Code", redirect="http://localhost/callback")


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def query(app: Application, *, redirect: str | None = None, **extra: str) -> dict[str, str]:
    return {
        "response_type": "code",
        "client_id": app.client_id,
        "redirect_uri": redirect or app.redirect_uris.split()[0],
        "scope": "mcp",
        "state": "st-123",
        "code_challenge": pkce()[1],
        "code_challenge_method": "S256",
        **extra,
    }


def page(browser: Client, params: dict[str, str]) -> str:
    response = browser.get(AUTHORIZE, params)
    assert response.status_code == 200, response.content
    return response.content.decode()


def consent_form(html: str) -> dict[str, str]:
    """The hidden fields of the consent form, as a browser would send them back."""
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', html))
    fields.pop("csrfmiddlewaretoken", None)
    return {name: unescape(value) for name, value in fields.items()}


# What the page says ----------------------------------------------------------------------------------------


def test_a_self_registered_client_is_marked_unverified_and_its_html_name_shows_as_text(browser):
    hostile = application(name='<img src=x onerror="alert(1)">Claude', redirect=CLAUDE_CALLBACK, source="dcr")
    html = page(browser, query(hostile))
    assert '<img src=x onerror="alert(1)">' not in html
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;Claude" in html
    assert "Unverified" in html
    assert "chose its own name" in html


def test_a_client_metadata_document_client_shows_its_host(browser, cimd_app):
    html = page(browser, query(cimd_app))
    assert "Identified by <strong>claude.ai</strong>" in html
    assert "Unverified" not in html


def test_a_manual_client_says_the_administrators_added_it(browser):
    html = page(browser, query(application(name="Our CLI", redirect=CLAUDE_CALLBACK)))
    assert "Added by this site’s administrators" in html
    assert "Unverified" not in html


def test_the_redirect_host_is_shown_and_a_web_host_gets_no_warning(browser, dcr_app):
    html = page(browser, query(dcr_app))
    assert "Then sends you to" in html and "<strong>claude.ai</strong>" in html
    assert "an app on this computer" not in html


@pytest.mark.parametrize(
    "redirect",
    ["http://localhost:43661/callback", "http://127.0.0.1:8976/callback", "http://[::1]:5000/callback"],
)
def test_a_loopback_redirect_warns_that_an_app_on_this_computer_gets_the_sign_in(browser, redirect):
    host = urlsplit(redirect).hostname
    app = application(name="Local tool", redirect=f"http://{'[::1]' if host == '::1' else host}/callback")
    html = page(browser, query(app, redirect=redirect))
    assert "an app on this computer" in html
    assert 'role="alert"' in html


def test_a_custom_scheme_redirect_warns_too(browser):
    app = application(name="Cursor", redirect="cursor://anysphere.cursor-mcp/oauth/callback")
    html = page(browser, query(app))
    assert "an app on this computer" in html
    assert "cursor:" in html


def test_the_endpoint_is_the_resource_asked_for_else_the_sites_endpoint(browser, dcr_app):
    assert f"<code>{ENDPOINT}</code>" in page(browser, query(dcr_app, resource=ENDPOINT))
    assert f"<code>{ENDPOINT}</code>" in page(browser, query(dcr_app))


def test_the_signed_in_user_and_a_not_you_button_are_shown(browser, dcr_app):
    html = page(browser, query(dcr_app))
    assert "Ada Lovelace" in html and "ada" in html
    assert 'name="mcpforms_switch_user"' in html and "Not you?" in html


def test_not_you_signs_out_and_comes_back_through_the_login(browser, dcr_app, ada):
    params = query(dcr_app)
    html = page(browser, params)
    token = csrf_token(html)
    response = browser.post(
        f"{AUTHORIZE}?{urlencode(params)}", {"csrfmiddlewaretoken": token, "mcpforms_switch_user": "1"}
    )
    assert response.status_code == 302
    location = urlsplit(response["Location"])
    assert location.path == "/accounts/login/"
    back = parse_qs(location.query)["next"][0]
    assert back.startswith(AUTHORIZE) and parse_qs(urlsplit(back).query)["client_id"] == [dcr_app.client_id]
    assert "_auth_user_id" not in browser.session  # signed out
    assert not Grant.objects.exists()  # and nothing was granted on the way


def test_the_scopes_read_as_what_the_assistant_may_do(browser, dcr_app):
    html = page(browser, query(dcr_app))
    assert "What this lets the assistant do" in html
    assert f"<li>{SCOPE_TEXT.replace(chr(39), '&#x27;')}</li>" in html


def test_a_signed_out_visitor_is_sent_to_the_sites_login_and_back(dcr_app):
    response = Client().get(AUTHORIZE, query(dcr_app))
    assert response.status_code == 302
    assert urlsplit(response["Location"]).path == "/accounts/login/"
    assert response["X-Frame-Options"] == "DENY"


# What the page does ----------------------------------------------------------------------------------------


def csrf_token(html: str) -> str:
    marker = 'name="csrfmiddlewaretoken" value="'
    start = html.index(marker) + len(marker)
    return html[start : html.index('"', start)]


def test_allow_redirects_to_the_registered_uri_with_code_state_and_iss(browser, dcr_app):
    html = page(browser, query(dcr_app, resource=ENDPOINT))
    fields = consent_form(html)
    response = browser.post(AUTHORIZE, {**fields, "csrfmiddlewaretoken": csrf_token(html), "allow": "Allow"})
    assert response.status_code == 302
    location = urlsplit(response["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == CLAUDE_CALLBACK
    answer = parse_qs(location.query)
    assert answer["state"] == ["st-123"] and answer["iss"] == [ISSUER] and answer["code"]


def test_cancel_redirects_with_access_denied(browser, dcr_app):
    html = page(browser, query(dcr_app))
    response = browser.post(AUTHORIZE, {**consent_form(html), "csrfmiddlewaretoken": csrf_token(html)})
    assert response.status_code == 302
    answer = parse_qs(urlsplit(response["Location"]).query)
    assert response["Location"].startswith(CLAUDE_CALLBACK)
    assert answer["error"] == ["access_denied"] and answer["state"] == ["st-123"]
    assert answer["iss"] == [ISSUER]  # RFC 9207 §2: in error responses too
    assert not Grant.objects.exists()


def test_a_consent_post_without_the_csrf_token_is_refused(ada, dcr_app):
    guarded = Client(enforce_csrf_checks=True)
    guarded.force_login(ada)
    html = page(guarded, query(dcr_app))
    response = guarded.post(AUTHORIZE, {**consent_form(html), "allow": "Allow"})
    assert response.status_code == 403
    assert not Grant.objects.exists()


@pytest.mark.parametrize(
    "redirect",
    [
        "https://evil.example/api/mcp/auth_callback",
        "https://claude.ai/api/mcp/auth_callback/../x",
        "https://claude.ai:8443/api/mcp/auth_callback",
        "https://claude.ai/api/mcp/auth_callback?next=https://evil.example",
    ],
)
def test_an_unregistered_redirect_uri_gets_an_error_page_and_never_a_redirect(browser, dcr_app, redirect):
    response = browser.get(AUTHORIZE, query(dcr_app, redirect=redirect))
    assert response.status_code == 400
    assert "Location" not in response
    html = response.content.decode()
    assert "This sign-in can’t continue" in html
    assert "evil.example" not in response.get("Location", "")


def test_a_tampered_consent_post_is_refused_without_a_redirect(browser, dcr_app):
    html = page(browser, query(dcr_app))
    token = csrf_token(html)
    tampered = {**consent_form(html), "csrfmiddlewaretoken": token, "allow": "Allow"}
    for field, value in [("redirect_uri", "https://evil.example/cb"), ("client_id", "no-such-client")]:
        response = browser.post(AUTHORIZE, {**tampered, field: value})
        assert response.status_code == 400, (field, response.status_code)
        assert "Location" not in response
    incomplete = browser.post(AUTHORIZE, {"csrfmiddlewaretoken": token, "allow": "Allow"})
    assert incomplete.status_code == 400 and "Location" not in incomplete
    assert not Grant.objects.exists()


def test_an_earlier_token_does_not_skip_consent_even_when_the_client_asks(browser, dcr_app, ada):
    issue(browser, dcr_app)  # consented once
    response = browser.get(AUTHORIZE, query(dcr_app, approval_prompt="auto"))
    assert response.status_code == 200  # asked again: the site's "force" wins over the client's parameter


# How the page is served ------------------------------------------------------------------------------------


def assert_not_frameable(response: HttpResponse) -> None:
    assert response["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]
    for header in ("Content-Security-Policy", "Content-Security-Policy-Report-Only"):
        assert "form-action" not in response.get(header, "")


def test_the_page_cannot_be_framed_and_sets_no_form_action(browser, dcr_app):
    assert_not_frameable(browser.get(AUTHORIZE, query(dcr_app)))
    assert_not_frameable(browser.get(AUTHORIZE, query(dcr_app, redirect="https://evil.example/")))
    html = page(browser, query(dcr_app))
    answer = browser.post(
        AUTHORIZE, {**consent_form(html), "csrfmiddlewaretoken": csrf_token(html), "allow": "1"}
    )
    assert_not_frameable(answer)
    assert "no-store" in browser.get(AUTHORIZE, query(dcr_app))["Cache-Control"]


CSP_MIDDLEWARE = "django.middleware.csp.ContentSecurityPolicyMiddleware"
PROJECT_POLICY = {"default-src": ["'self'"], "form-action": ["'self'"]}


def test_a_project_csp_keeps_its_policy_on_the_page_without_form_action(browser, dcr_app):
    csp = {"SECURE_CSP": PROJECT_POLICY, "SECURE_CSP_REPORT_ONLY": PROJECT_POLICY}
    if importlib.util.find_spec("django.middleware.csp") is None:
        # Django 5.2 has no CSP middleware: what the page leaves on the response for Django 6's to build.
        with override_settings(MIDDLEWARE=[CSP_MIDDLEWARE], **csp):
            response = HttpResponse()
            consent.protect(response)
        assert response._csp_config == {"default-src": ["'self'"], "frame-ancestors": ["'none'"]}  # type: ignore[attr-defined]
        assert response._csp_ro_config == {"default-src": ["'self'"]}  # type: ignore[attr-defined]
        return
    with override_settings(MIDDLEWARE=[*settings.MIDDLEWARE, CSP_MIDDLEWARE], **csp):
        response = browser.get(AUTHORIZE, query(dcr_app))
    assert "default-src 'self'" in response["Content-Security-Policy"]
    assert_not_frameable(response)


# The connected-assistants page -----------------------------------------------------------------------------


def issue(browser: Client, app: Application, *, redirect: str | None = None) -> str:
    """Consent on the page, then trade the code for a token as the client would."""
    verifier, challenge = pkce()
    params = {**query(app, redirect=redirect, resource=ENDPOINT), "code_challenge": challenge}
    html = page(browser, params)
    answer = browser.post(
        AUTHORIZE, {**consent_form(html), "csrfmiddlewaretoken": csrf_token(html), "allow": "1"}
    )
    code = parse_qs(urlsplit(answer["Location"]).query)["code"][0]
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": params["redirect_uri"],
        "client_id": app.client_id,
        "code_verifier": verifier,
        "resource": ENDPOINT,
    }
    response = Client().post("/oauth/token/", form)
    assert response.status_code == 200, response.content
    token: str = response.json()["access_token"]
    return token


def whoami(token: str) -> Any:
    return post("tools/call", {"name": "whoami", "arguments": {}}, token=token)


def test_the_page_lists_only_the_users_own_assistants(browser, ada, dcr_app, cimd_app):
    issue(browser, cimd_app)
    grace = User.objects.create_user("grace", password="pw")
    other = Client()
    other.force_login(grace)
    issue(other, dcr_app)
    html = browser.get(CONNECTED).content.decode()
    assert "Claude" in html and "claude.ai" in html and SCOPE_TEXT.replace("'", "&#x27;") in html
    assert html.count('name="application"') == 1  # one revoke button: ada's CIMD Claude, not grace's
    assert f'value="{cimd_app.pk}"' in html and f'value="{dcr_app.pk}"' not in html
    theirs = other.get(CONNECTED).content.decode()
    assert f'value="{dcr_app.pk}"' in theirs and "Unverified" in theirs
    assert f'value="{cimd_app.pk}"' not in theirs


def test_a_user_without_assistants_is_told_so():
    nobody = Client()
    nobody.force_login(User.objects.create_user("nobody", password="pw"))
    assert "No assistant is connected to your account." in nobody.get(CONNECTED).content.decode()


def test_revoking_an_assistant_ends_its_access_at_the_endpoint(browser, ada, dcr_app):
    token = issue(browser, dcr_app)
    assert body(whoami(token))["result"]["content"][0]["text"] == f"user:{ada.pk}"
    html = browser.get(CONNECTED).content.decode()
    response = browser.post(CONNECTED, {"csrfmiddlewaretoken": csrf_token(html), "application": dcr_app.pk})
    assert response.status_code == 302 and response["Location"] == CONNECTED
    assert whoami(token).status_code == 401
    assert not RefreshToken.objects.filter(revoked__isnull=True).exists()
    assert not AccessToken.objects.exists()
    after = browser.get(CONNECTED).content.decode()
    assert "No longer connected: Claude" in after
    assert 'name="application"' not in after


def test_another_users_revoke_post_does_nothing_to_their_assistant(browser, ada, dcr_app):
    grace = User.objects.create_user("grace", password="pw")
    other = Client()
    other.force_login(grace)
    token = issue(other, dcr_app)
    response = browser.post(CONNECTED, {"application": dcr_app.pk})
    assert response.status_code == 302
    assert whoami(token).status_code == 200
    assert "was not connected" in browser.get(CONNECTED).content.decode()


def test_revoke_needs_the_csrf_token_and_a_signed_in_user(ada, dcr_app, browser):
    token = issue(browser, dcr_app)
    guarded = Client(enforce_csrf_checks=True)
    guarded.force_login(ada)
    assert guarded.post(CONNECTED, {"application": dcr_app.pk}).status_code == 403
    anonymous = Client().get(CONNECTED)
    assert anonymous.status_code == 302 and urlsplit(anonymous["Location"]).path == "/accounts/login/"
    assert whoami(token).status_code == 200
    assert Client().post(CONNECTED, {"application": "not a number"}).status_code == 302
    assert browser.post(CONNECTED, {"application": "not a number"}).status_code == 302
    assert whoami(token).status_code == 200


@pytest.mark.parametrize("chosen", ["9" * 5000, "9" * 4000, "9" * 30, "-1", "1e3", "\x00", ""])
def test_a_revoke_post_naming_no_assistant_says_so_and_revokes_nothing(browser, dcr_app, chosen):
    # A 5,000-digit id was a 500: past Python's 4,300 digits, int() refuses the text.
    token = issue(browser, dcr_app)
    response = browser.post(CONNECTED, {"application": chosen})
    assert response.status_code == 302 and response["Location"] == CONNECTED
    assert "That assistant was not connected to your account." in browser.get(CONNECTED).content.decode()
    assert whoami(token).status_code == 200


def test_the_connected_page_cannot_be_framed(browser):
    response = browser.get(CONNECTED)
    assert response.status_code == 200
    assert_not_frameable(response)
