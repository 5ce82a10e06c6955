"""Attacks on the sign-in, as an attacker would try them against a site on ``mcpforms.oauth.settings()``:
every request goes through the real authorize, consent and token views and the MCP endpoint, and every
assertion is what the attacker (or the user) gets back: an HTTP status, a ``Location`` or none, the error
page, the rows left in the database.

What other modules already prove is not repeated here: the resource a token is bound to
(``test_oauth_validator``), CIMD's SSRF defences (``test_oauth_cimd``), DCR abuse (``test_oauth_dcr``), CSRF
and framing of the consent page (``test_oauth_consent``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import oauthlib  # type: ignore[import-untyped]
import pytest
from django.contrib.auth.models import User
from django.contrib.auth.views import LoginView
from django.core.cache import cache
from django.test import Client, override_settings
from django.urls import path
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, Grant, RefreshToken

import mcpforms.oauth
import tests.urls
from mcpforms.oauth.cimd import Fetcher
from mcpforms.oauth.validator import Validator
from tests import wire

if TYPE_CHECKING:
    from django.test.client import _MonkeyPatchedWSGIResponse as Response

pytestmark = pytest.mark.django_db

BASE = "http://testserver"
ENDPOINT = f"{BASE}/mcp"
AUTHORIZE = "/oauth/authorize/"
TOKEN = "/oauth/token/"
WEB = "https://client.example/cb"
LOOPBACK = "http://127.0.0.1/cb"
STOPPED = "This sign-in can’t continue"  # the heading of the authorize view's error page
MCPFORMS = {"AUTHENTICATION": ["mcpforms.oauth.OAuth2Auth"], "BASE_URL": BASE}
PRESET = mcpforms.oauth.settings(
    # The CIMD documents below come from memory (StubFetcher); everything after the download is real.
    CIMD_METADATA_FETCHER=f"{__name__}.StubFetcher",
)

# The test site with a login page: where the authorize view sends a signed-out visitor (LOGIN_URL).
urlpatterns = [path("accounts/login/", LoginView.as_view(), name="login"), *tests.urls.urlpatterns]
WITH_LOGIN = __name__


@pytest.fixture(autouse=True)
def preset() -> Iterator[None]:
    cache.clear()  # DCR's per-address counters and CIMD's failure backoff live in the cache
    with override_settings(OAUTH2_PROVIDER=PRESET, MCPFORMS=MCPFORMS):
        yield
    cache.clear()


@pytest.fixture
def ada() -> User:
    return User.objects.create_user("ada", password="pw")


def browser_of(user: User) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


@dataclass
class Registered:
    """A client as the site stores it, with the secret it was given (confidential clients only)."""

    app: Application
    secret: str = ""

    @property
    def client_id(self) -> str:
        return str(self.app.client_id)


def client(redirect_uris: str, *, name: str = "An MCP client", confidential: bool = False) -> Registered:
    secret = secrets.token_urlsafe(32) if confidential else ""
    app = Application.objects.create(
        name=name,
        client_type=Application.CLIENT_CONFIDENTIAL if confidential else Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=redirect_uris,
        registration_source=Application.RegistrationSource.DCR,
        **({"client_secret": secret} if confidential else {}),
    )
    return Registered(app, secret)


@pytest.fixture
def web() -> Registered:
    return client(WEB)


@pytest.fixture
def loopback() -> Registered:
    return client(LOOPBACK)


# The flow, as an MCP client and its user walk it ------------------------------------------------------------


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def request_for(client_id: str, redirect_uri: str, challenge: str | None, **extra: str) -> dict[str, str]:
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "scope": "mcp",
        "state": "st4te",
        "resource": ENDPOINT,
        **extra,
    }
    if challenge is not None:
        query.setdefault("code_challenge", challenge)
        query.setdefault("code_challenge_method", "S256")
    return query


class Inputs(HTMLParser):
    """The ``<input>`` fields of a page: what a browser posts back from the consent form."""

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        fields = dict(attrs)
        if tag == "input" and fields.get("name"):
            self.values[fields["name"] or ""] = fields.get("value") or ""


def consent_fields(page: Response) -> dict[str, str]:
    assert page.status_code == 200, page.content
    inputs = Inputs()
    inputs.feed(page.content.decode())
    return inputs.values


@dataclass
class Code:
    """An authorization code as the client's redirect URI receives it, with the verifier it is bound to."""

    value: str
    verifier: str
    redirect_uri: str


def consented(browser: Client, client_id: str, redirect_uri: str) -> Code:
    """Ask, see the consent page, allow: the code the browser carries to ``redirect_uri``."""
    verifier, challenge = pkce()
    page = browser.get(AUTHORIZE, request_for(client_id, redirect_uri, challenge))
    answer = browser.post(AUTHORIZE, {**consent_fields(page), "allow": "Allow"})
    assert answer.status_code == 302, answer.content
    location = urlsplit(answer["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == redirect_uri
    return Code(parse_qs(location.query)["code"][0], verifier, redirect_uri)


def redeem(registered: Registered, code: Code, **changes: str | None) -> Response:
    """The token request for ``code``; ``changes`` replace (or, as None, leave out) its fields."""
    form: dict[str, str | None] = {
        "grant_type": "authorization_code",
        "code": code.value,
        "redirect_uri": code.redirect_uri,
        "client_id": registered.client_id,
        "code_verifier": code.verifier,
        "resource": ENDPOINT,
    }
    if registered.secret:
        form["client_secret"] = registered.secret
    form.update(changes)
    response: Response = Client().post(
        TOKEN, {key: value for key, value in form.items() if value is not None}
    )
    return response


def sign_in(user: User, registered: Registered, redirect_uri: str) -> dict[str, Any]:
    """The whole flow; the token response's JSON."""
    response = redeem(registered, consented(browser_of(user), registered.client_id, redirect_uri))
    assert response.status_code == 200, response.content
    tokens: dict[str, Any] = response.json()
    return tokens


def refresh(registered: Registered, refresh_token: str) -> Response:
    form = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": registered.client_id}
    if registered.secret:
        form["client_secret"] = registered.secret
    response: Response = Client().post(TOKEN, form)
    return response


def mcp(token: str | None, url: str = "/mcp") -> Response:
    """A ``tools/list`` call through the site's URL for the endpoint, as a host sends it."""
    payload = wire.message("tools/list")
    headers = wire.headers(payload)
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    response: Response = Client().post(
        url, json.dumps(payload), content_type="application/json", headers=headers
    )
    return response


def assert_stopped_here(response: Response) -> None:
    """The error page of the authorization server itself: nothing sent anywhere, nothing granted."""
    assert response.status_code == 400, (
        response.status_code,
        response.get("Location"),
        response.content[:300],
    )
    assert not response.has_header("Location")
    assert STOPPED in response.content.decode()
    assert not Grant.objects.exists()


# 1. Redirect URIs that are not the registered one: an error page, never a redirect ------------------------

CYRILLIC_E = "\u0435"  # "е", which renders like the Latin "e"
LOOKALIKE = f"cli{CYRILLIC_E}nt"  # "cliеnt": only the e is Cyrillic
assert LOOKALIKE != "client" and LOOKALIKE.replace(CYRILLIC_E, "e") == "client"
PUNYCODE = LOOKALIKE.encode("idna").decode()  # its xn-- form, as a browser sends it

WEB_LOOKALIKES = [
    "https://client.example:8443/cb",  # another port on a host that is not this computer
    "https://client.example:443/cb",  # the same port spelled out is another string (RFC 9700 §2.1)
    "https://client.example/cb/",
    "https://client.example/other",
    "https://client.example/cb/../cb",
    "https://client.example/cb?x=1",
    "https://client.example/cb?",
    "https://client.example/cb;jsessionid=1",
    "https://client.example@evil.example/cb",  # userinfo: the host is evil.example
    "https://evil.example@client.example/cb",  # userinfo before the registered host
    "https://client.example/cb#fragment",
    "http://client.example/cb",
    "https://client.example/CB",
    "https://client.example./cb",
    "https://client.example.evil.example/cb",
    f"https://{LOOKALIKE}.example/cb",
    f"https://{PUNYCODE}.example/cb",
]

LOOPBACK_LOOKALIKES = [
    "http://localhost/cb",
    "http://localhost:50000/cb",
    "http://[::1]/cb",
    "http://[::1]:50000/cb",
    "http://127.0.0.2:50000/cb",
    "http://127.1:50000/cb",
    "http://2130706433:50000/cb",  # 127.0.0.1 as one number
    "http://127.0.0.1.evil.example/cb",
    "http://127.0.0.1:50000@evil.example/cb",
    "https://127.0.0.1:50000/cb",
    "http://127.0.0.1:50000/other",
    "http://127.0.0.1:50000/CB",
    "http://127.0.0.1:50000/cb?x=1",
    "http://127.0.0.1:50000/cb;x=1",
    "http://127.0.0.1:50000/cb#fragment",
]


def ask(browser: Client, client_id: str, redirect_uri: str, **extra: str) -> Response:
    response: Response = browser.get(AUTHORIZE, request_for(client_id, redirect_uri, pkce()[1], **extra))
    return response


def test_the_registered_uris_reach_the_consent_page_loopback_on_any_port(ada, web, loopback):
    # The control for the refusals below: what is registered is accepted.
    browser = browser_of(ada)
    assert ask(browser, web.client_id, WEB).status_code == 200
    for redirect_uri in (LOOPBACK, "http://127.0.0.1:50000/cb", "http://127.0.0.1:1/cb"):
        assert ask(browser, loopback.client_id, redirect_uri).status_code == 200, redirect_uri


def test_an_upper_case_host_is_the_same_host(ada, web):
    # RFC 3986 §6.2.2.1: the host is case-insensitive, so the toolkit compares it in lower case; the browser
    # would land on the registered client's own host, which is what the consent page names.
    browser = browser_of(ada)
    page = ask(browser, web.client_id, "https://CLIENT.EXAMPLE/cb")
    assert page.status_code == 200
    assert "<strong>client.example</strong>" in page.content.decode()
    answer = browser.post(AUTHORIZE, {**consent_fields(page), "allow": "Allow"})
    assert urlsplit(answer["Location"]).hostname == "client.example"


@pytest.mark.parametrize("redirect_uri", WEB_LOOKALIKES)
def test_a_redirect_uri_unlike_the_registered_https_one_stops_at_an_error_page(ada, web, redirect_uri):
    assert_stopped_here(ask(browser_of(ada), web.client_id, redirect_uri))


@pytest.mark.parametrize("redirect_uri", LOOPBACK_LOOKALIKES)
def test_a_redirect_uri_unlike_the_registered_loopback_one_stops_at_an_error_page(
    ada, loopback, redirect_uri
):
    assert_stopped_here(ask(browser_of(ada), loopback.client_id, redirect_uri))


LOOPBACK_NAMES = ["127.0.0.1", "localhost", "[::1]"]


@pytest.mark.parametrize("registered", LOOPBACK_NAMES)
@pytest.mark.parametrize("requested", LOOPBACK_NAMES)
def test_one_loopback_name_is_not_another(ada, registered, requested):
    # RFC 8252 §7.3 lets the port vary, never the host: each name may be a different listener.
    app = client(f"http://{registered}/cb")
    response = ask(browser_of(ada), app.client_id, f"http://{requested}:50000/cb")
    if registered == requested:
        assert response.status_code == 200
    else:
        assert_stopped_here(response)


@pytest.mark.parametrize("redirect_uri", ["https://evil.example/cb", "https://client.example/cb/"])
def test_prompt_none_without_a_session_never_redirects_to_an_unregistered_uri(web, redirect_uri):
    assert_stopped_here(ask(Client(), web.client_id, redirect_uri, prompt="none"))


def test_prompt_none_without_a_session_answers_the_registered_uri_with_login_required(web):
    response = ask(Client(), web.client_id, WEB, prompt="none")
    assert response.status_code == 302
    location = urlsplit(response["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == WEB
    assert parse_qs(location.query)["error"] == ["login_required"]
    assert not Grant.objects.exists()


# 2. The login page's next= ----------------------------------------------------------------------------------


@override_settings(ROOT_URLCONF=WITH_LOGIN)
def test_after_login_the_user_is_back_on_the_consent_page(ada, web):
    browser = Client()
    sent = browser.get(AUTHORIZE, request_for(web.client_id, WEB, pkce()[1]))
    assert sent.status_code == 302
    login = urlsplit(sent["Location"])
    assert login.path == "/accounts/login/"
    back = parse_qs(login.query)["next"][0]
    landed = browser.post(sent["Location"], {"username": "ada", "password": "pw", "next": back})
    assert landed.status_code == 302 and landed["Location"] == back
    assert browser.get(back).status_code == 200  # the consent page, signed in


@override_settings(ROOT_URLCONF=WITH_LOGIN)
@pytest.mark.parametrize(
    "elsewhere",
    [
        "https://evil.example/oauth/authorize/",
        "//evil.example/oauth/authorize/",
        "///evil.example/",
        "/\\evil.example/",
        "\\\\evil.example/",
        "https:evil.example/",
        "http://testserver@evil.example/",
        "javascript:alert(document.cookie)",
    ],
)
def test_a_next_to_another_host_is_not_followed_after_login(ada, elsewhere):
    landed = Client().post("/accounts/login/", {"username": "ada", "password": "pw", "next": elsewhere})
    assert landed.status_code == 302
    assert landed["Location"] == "/accounts/profile/"  # LOGIN_REDIRECT_URL: this site, not the attacker's


# 3. ChatGPT's per-connector client, through the CIMD path ---------------------------------------------------

CONNECTOR = "g-6f2c1a9e"  # ChatGPT's id for one connector: a path segment in both URLs
CHATGPT_CONNECTOR = f"https://chatgpt.com/oauth/{CONNECTOR}/client.json"
CHATGPT_CONNECTOR_REDIRECT = f"https://chatgpt.com/connector/oauth/{CONNECTOR}"
CHATGPT = "https://chatgpt.com/oauth/client.json"
CHATGPT_REDIRECT = "https://chatgpt.com/connector_platform_oauth_redirect"


def chatgpt_document(client_id: str, redirect_uri: str) -> dict[str, Any]:
    """ChatGPT's document as it publishes it: ``private_key_jwt`` chosen, ``none`` offered."""
    return {
        "client_id": client_id,
        "client_name": "ChatGPT",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "private_key_jwt",
        "token_endpoint_auth_methods_supported": ["private_key_jwt", "none"],
        "jwks_uri": "https://chatgpt.com/oauth/jwks.json",
    }


DOCUMENTS = {
    CHATGPT_CONNECTOR: chatgpt_document(CHATGPT_CONNECTOR, CHATGPT_CONNECTOR_REDIRECT),
    CHATGPT: chatgpt_document(CHATGPT, CHATGPT_REDIRECT),
}
DOWNLOADS: list[str] = []


class StubFetcher(Fetcher):
    """mcpforms' fetcher with the download served from ``DOCUMENTS``: pins, normalising and the toolkit's
    checks of the document still run."""

    def download(self, client_id: str) -> tuple[dict[str, Any], int]:
        DOWNLOADS.append(client_id)
        return dict(DOCUMENTS[client_id]), 300


def cimd_client(client_id: str) -> Registered:
    return Registered(Application.objects.get(client_id=client_id))


def test_chatgpt_s_per_connector_client_signs_in_next_to_its_stable_one(ada):
    DOWNLOADS.clear()
    browser = browser_of(ada)
    tokens = {}
    for client_id, redirect_uri in [
        (CHATGPT_CONNECTOR, CHATGPT_CONNECTOR_REDIRECT),
        (CHATGPT, CHATGPT_REDIRECT),
    ]:
        code = consented(browser, client_id, redirect_uri)
        response = redeem(cimd_client(client_id), code)
        assert response.status_code == 200, response.content
        tokens[client_id] = response.json()["access_token"]
    assert DOWNLOADS == [CHATGPT_CONNECTOR, CHATGPT]  # fetched while authorizing, never by the token endpoint
    for token in tokens.values():
        assert mcp(token).status_code == 200
    connector = Application.objects.get(client_id=CHATGPT_CONNECTOR)
    assert connector.registration_source == Application.RegistrationSource.CIMD
    assert connector.client_type == Application.CLIENT_PUBLIC
    assert connector.redirect_uris.split() == [CHATGPT_CONNECTOR_REDIRECT]


def test_one_connector_s_redirect_is_not_another_s(ada):
    other = "https://chatgpt.com/connector/oauth/g-attacker"
    browser = browser_of(ada)
    assert_stopped_here(ask(browser, CHATGPT_CONNECTOR, other))
    assert_stopped_here(ask(browser, CHATGPT, CHATGPT_CONNECTOR_REDIRECT))


# 4. Codes and PKCE -----------------------------------------------------------------------------------------


def test_a_replayed_code_is_refused_and_revokes_what_its_first_use_issued(ada, web):
    code = consented(browser_of(ada), web.client_id, WEB)
    first = redeem(web, code).json()
    rotated = refresh(web, first["refresh_token"]).json()  # and what was refreshed from it since
    elsewhere = sign_in(ada, web, WEB)  # the same user and client signed in again: not this code's
    again = redeem(web, code)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    # OAuth 2.1 §4.1.3: a code used twice SHOULD revoke the tokens issued on it; a replay means someone
    # else holds the code (and, with PKCE, its verifier), and may be the one who redeemed it first.
    assert mcp(first["access_token"]).status_code == 401
    assert mcp(rotated["access_token"]).status_code == 401
    for refresh_token in (first["refresh_token"], rotated["refresh_token"]):
        assert refresh(web, refresh_token).json()["error"] == "invalid_grant"
    assert mcp(elsewhere["access_token"]).status_code == 200
    assert refresh(web, elsewhere["refresh_token"]).status_code == 200


@pytest.mark.parametrize(
    "meanwhile",
    # Where the first request completes, within the second one: before its PKCE step reads the code
    # again, before its redirect URI is compared with the code's, and once its tokens are stored.
    ["validate_code", "get_code_challenge_method", "save_bearer_token"],
)
def test_a_code_redeemed_twice_at_once_leaves_no_token_alive(ada, web, monkeypatch, meanwhile):
    # The toolkit reads the code again after validating it, and deletes it only once the tokens are
    # stored: the second of two requests with one code found it gone (a 500, Grant.DoesNotExist), or
    # stored its tokens and was then refused, the first one's tokens living on.
    code = consented(browser_of(ada), web.client_id, WEB)
    original = getattr(Validator, meanwhile)
    responses: list[Response] = []

    def racing(self: Validator, *args: Any, **kwargs: Any) -> Any:
        result = original(self, *args, **kwargs)
        monkeypatch.setattr(Validator, meanwhile, original)
        responses.append(redeem(web, code))  # the other request, from start to end
        return result

    monkeypatch.setattr(Validator, meanwhile, racing)
    second = redeem(web, code)
    [first] = responses
    assert first.status_code == 200, first.content
    assert second.status_code == 400 and second.json()["error"] == "invalid_grant"
    assert mcp(first.json()["access_token"]).status_code == 401
    assert not AccessToken.objects.exists()
    assert not RefreshToken.objects.filter(revoked__isnull=True).exists()


def test_a_made_up_or_unused_code_revokes_nothing(ada, web):
    tokens = sign_in(ada, web, WEB)
    pending = consented(browser_of(ada), web.client_id, WEB)
    assert redeem(web, Code("made-up", pending.verifier, WEB)).json()["error"] == "invalid_grant"
    assert redeem(web, pending, code_verifier="wrong-" + "v" * 50).status_code == 400
    assert mcp(tokens["access_token"]).status_code == 200
    assert redeem(web, pending).status_code == 200


@pytest.mark.parametrize("verifier", [None, "", "wrong-" + "v" * 50])
def test_a_token_request_without_the_right_code_verifier_is_refused(ada, web, verifier):
    code = consented(browser_of(ada), web.client_id, WEB)
    response = redeem(web, code, code_verifier=verifier)
    assert response.status_code == 400
    assert response.json()["error"] in ("invalid_grant", "invalid_request")
    assert not AccessToken.objects.exists()
    assert redeem(web, code).status_code == 200  # the client holding the verifier still can


@pytest.mark.parametrize(
    "pkce_parameters",
    [
        {},  # no challenge at all
        {"code_challenge_method": "plain", "code_challenge": "v" * 50},
        {"code_challenge": "v" * 50},  # no method: RFC 7636 §4.3 makes it "plain"
        {"code_challenge_method": "S256", "code_challenge": ""},
        {"code_challenge_method": "S256", "code_challenge": "too-short"},
        {"code_challenge_method": "S256", "code_challenge": "A" * 43 + "="},  # padded: never a match
        {"code_challenge_method": "", "code_challenge": ""},
        {"code_challenge_method": "S512", "code_challenge": "A" * 43},
    ],
)
def test_an_authorization_without_a_usable_s256_challenge_is_refused_before_consent(
    ada, web, pkce_parameters
):
    browser = browser_of(ada)
    response = browser.get(AUTHORIZE, request_for(web.client_id, WEB, None, **pkce_parameters))
    # No consent page for a code no verifier could redeem. The redirect URI is the registered one, so the
    # client hears why (RFC 6749 §4.1.2.1), with no code.
    assert response.status_code == 302, response.content
    assert response["Location"].startswith(WEB + "?")
    answer = parse_qs(urlsplit(response["Location"]).query)
    assert answer["error"] == ["invalid_request"] and "code" not in answer
    assert answer["error_description"]
    assert not Grant.objects.exists()


@pytest.mark.parametrize("nonce", ["n" * 256, "a\x00b"])
def test_a_nonce_no_grant_can_store_is_refused_before_consent(ada, web, nonce):
    # The toolkit stores the nonce on the grant, in 255 characters: PostgreSQL refused a longer one, or
    # one with a NUL, at the INSERT once the user had consented (a 500), or at once for a client that
    # skips the consent page.
    browser = browser_of(ada)
    response = browser.get(AUTHORIZE, request_for(web.client_id, WEB, pkce()[1], nonce=nonce))
    assert response.status_code == 302, response.content[:200]
    answer = parse_qs(urlsplit(response["Location"]).query)
    assert answer["error"] == ["invalid_request"] and "nonce" in answer["error_description"][0]
    trusted = client(WEB, name="Skips consent")
    Application.objects.filter(pk=trusted.app.pk).update(skip_authorization=True)
    skipped = browser.get(AUTHORIZE, request_for(trusted.client_id, WEB, pkce()[1], nonce=nonce))
    assert skipped.status_code == 302 and "error=invalid_request" in skipped["Location"]
    assert not Grant.objects.exists()


def test_a_code_is_bound_to_its_client(ada, web):
    code = consented(browser_of(ada), web.client_id, WEB)
    for thief in (
        client(WEB, name="Another public client"),
        client(WEB, name="Confidential", confidential=True),
    ):
        response = redeem(thief, code)
        assert response.status_code in (400, 401), response.content
        assert response.json()["error"] == "invalid_grant"
    confidential = client(WEB, confidential=True)
    with_the_wrong_secret = redeem(Registered(confidential.app, "not-its-secret"), code)
    assert (
        with_the_wrong_secret.status_code == 401 and with_the_wrong_secret.json()["error"] == "invalid_client"
    )
    assert not AccessToken.objects.exists()
    assert redeem(web, code).status_code == 200


@pytest.mark.parametrize(
    "redirect_uri",
    ["https://client.example/other", "http://127.0.0.1:50001/cb", "https://evil.example/cb", None],
)
def test_a_code_is_bound_to_its_redirect_uri_even_another_registered_one(ada, redirect_uri):
    # RFC 6749 §4.1.3: identical to the authorization request's, not merely registered; loopback ports too.
    both = client(f"{WEB} https://client.example/other {LOOPBACK}")
    code = consented(browser_of(ada), both.client_id, "http://127.0.0.1:50000/cb")
    response = redeem(both, code, redirect_uri=redirect_uri)
    assert response.status_code == 400
    assert response.json()["error"] in ("invalid_grant", "invalid_request")
    assert not AccessToken.objects.exists()


# PostgreSQL cannot hold a NUL in text, and psycopg 3 says so with a DataError at the lookup (django-oauth-
# toolkit catches only the ValueError of psycopg 2): each was a 500 there. No client id or code holds one.
NUL_CLIENT = "\x00client"


def test_a_client_id_with_a_nul_stops_at_the_error_page(ada, web):
    assert_stopped_here(ask(browser_of(ada), NUL_CLIENT, WEB))
    assert_stopped_here(ask(Client(), NUL_CLIENT, WEB, prompt="none"))


def test_a_token_request_with_a_nul_in_its_client_id_or_code_is_refused(ada, web):
    code = consented(browser_of(ada), web.client_id, WEB)
    unknown = redeem(web, code, client_id=NUL_CLIENT)
    assert unknown.status_code == 401 and unknown.json()["error"] == "invalid_client"
    basic = base64.b64encode(b"%00client:secret").decode()  # RFC 6749 §2.3.1: form-encoded, then Basic
    in_header = Client().post(
        TOKEN,
        {"grant_type": "authorization_code", "code": code.value, "code_verifier": code.verifier},
        HTTP_AUTHORIZATION=f"Basic {basic}",
    )
    assert in_header.status_code == 401 and in_header.json()["error"] == "invalid_client"
    made_up = redeem(web, Code("\x00" + code.value, code.verifier, code.redirect_uri))
    assert made_up.status_code == 400 and made_up.json()["error"] == "invalid_grant"
    assert not AccessToken.objects.exists()
    assert redeem(web, code).status_code == 200  # the real code still works


def test_a_revocation_naming_a_client_id_with_a_nul_is_refused(ada, web):
    tokens = sign_in(ada, web, WEB)
    response = Client().post(
        "/oauth/revoke_token/", {"token": tokens["access_token"], "client_id": NUL_CLIENT}
    )
    assert response.status_code == 401 and response.json()["error"] == "invalid_client"
    assert mcp(tokens["access_token"]).status_code == 200


@pytest.mark.parametrize("credentials", ["\x80", "é:secret", "Zm9v\xff"])
def test_basic_credentials_that_are_no_base64_are_an_unknown_client(ada, web, credentials):
    # A WSGI server hands a header on as latin-1 text; base64.b64decode() refuses non-ASCII text with a
    # ValueError the toolkit does not catch (only binascii.Error): a 500 at the token and revocation
    # endpoints.
    tokens = sign_in(ada, web, WEB)
    header: dict[str, Any] = {"HTTP_AUTHORIZATION": f"Basic {credentials}"}
    refreshed = Client().post(
        TOKEN, {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]}, **header
    )
    assert refreshed.status_code == 401 and refreshed.json()["error"] == "invalid_client"
    revoked = Client().post("/oauth/revoke_token/", {"token": tokens["access_token"]}, **header)
    assert revoked.status_code == 401 and revoked.json()["error"] == "invalid_client"
    assert mcp(tokens["access_token"]).status_code == 200


def test_basic_credentials_of_one_client_and_the_id_of_another_are_an_invalid_client(ada, web):
    # oauthlib answered server_error ("Discrepency found between client identifier"), which tells the
    # client the server failed; RFC 6749 §5.2: the client's authentication failed.
    confidential = client(WEB, name="Confidential", confidential=True)
    code = consented(browser_of(ada), confidential.client_id, WEB)
    basic = base64.b64encode(f"{confidential.client_id}:{confidential.secret}".encode()).decode()
    form = {"grant_type": "authorization_code", "code": code.value, "redirect_uri": WEB}
    form |= {"code_verifier": code.verifier, "client_id": web.client_id}
    response = Client().post(TOKEN, form, HTTP_AUTHORIZATION=f"Basic {basic}")
    assert response.status_code == 401 and response.json()["error"] == "invalid_client", response.content
    assert not AccessToken.objects.exists()
    form["client_id"] = confidential.client_id
    assert Client().post(TOKEN, form, HTTP_AUTHORIZATION=f"Basic {basic}").status_code == 200


# 5. Refresh tokens -----------------------------------------------------------------------------------------


def age_past_the_grace_period(refresh_token: str) -> None:
    """Move a rotated refresh token's revocation further back than REFRESH_TOKEN_GRACE_PERIOD_SECONDS."""
    grace = timedelta(seconds=PRESET["REFRESH_TOKEN_GRACE_PERIOD_SECONDS"] + 1)
    checksum = hashlib.sha256(refresh_token.encode()).hexdigest()
    updated = RefreshToken.objects.filter(token_checksum=checksum, revoked__isnull=False).update(
        revoked=timezone.now() - grace
    )
    assert updated == 1


def test_a_refresh_rotates_the_token_and_the_old_one_is_refused_after_the_grace_period(ada, web):
    first = sign_in(ada, web, WEB)
    rotated = refresh(web, first["refresh_token"])
    assert rotated.status_code == 200, rotated.content
    assert rotated.json()["refresh_token"] != first["refresh_token"]
    assert mcp(rotated.json()["access_token"]).status_code == 200
    assert mcp(first["access_token"]).status_code == 401  # the rotated-out access token went with it
    age_past_the_grace_period(first["refresh_token"])
    replayed = refresh(web, first["refresh_token"])
    assert replayed.status_code == 400 and replayed.json()["error"] == "invalid_grant"


def test_replaying_a_rotated_refresh_token_revokes_its_whole_family(ada, web):
    first = sign_in(ada, web, WEB)
    rotated = refresh(web, first["refresh_token"]).json()
    age_past_the_grace_period(first["refresh_token"])
    assert refresh(web, first["refresh_token"]).status_code == 400  # someone replays the stolen token...
    # ...and the legitimate client's newer tokens die with it (OAuth 2.1 §4.3.1; RFC 9700 §4.14.2).
    assert mcp(rotated["access_token"]).status_code == 401
    assert refresh(web, rotated["refresh_token"]).json()["error"] == "invalid_grant"
    assert not RefreshToken.objects.filter(revoked__isnull=True).exists()


def test_two_refreshes_within_the_grace_period_both_succeed(ada, web):
    # An assistant refreshing from two workers at once sends the same refresh token twice.
    first = sign_in(ada, web, WEB)
    one = refresh(web, first["refresh_token"])
    other = refresh(web, first["refresh_token"])
    assert one.status_code == 200 and other.status_code == 200, other.content
    assert mcp(other.json()["access_token"]).status_code == 200
    assert refresh(web, other.json()["refresh_token"]).status_code == 200  # and the family lives on


def test_a_deactivated_user_s_refresh_yields_no_token_that_works(ada, web):
    tokens = sign_in(ada, web, WEB)
    User.objects.filter(pk=ada.pk).update(is_active=False)
    response = refresh(web, tokens["refresh_token"])
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid_grant"
    assert mcp(tokens["access_token"]).status_code == 401


def test_a_deactivated_user_s_code_yields_no_token(ada, web):
    code = consented(browser_of(ada), web.client_id, WEB)
    User.objects.filter(pk=ada.pk).update(is_active=False)
    response = redeem(web, code)
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid_grant"
    assert not AccessToken.objects.exists()


# 6. Access tokens at the endpoint -------------------------------------------------------------------------


def test_an_inactive_user_s_access_token_is_refused(ada, web):
    token = sign_in(ada, web, WEB)["access_token"]
    assert mcp(token).status_code == 200
    User.objects.filter(pk=ada.pk).update(is_active=False)
    refused = mcp(token)
    assert refused.status_code == 401
    assert 'error="invalid_token"' in refused["WWW-Authenticate"]


def test_a_registration_access_token_is_no_access_token_for_the_endpoint():
    registration = Client().post(
        "/oauth/register/",
        json.dumps(
            {
                "client_name": "Claude",
                "redirect_uris": ["https://claude.ai/api/mcp/auth_callback"],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            }
        ),
        content_type="application/json",
    )
    assert registration.status_code == 201, registration.content
    token = registration.json()["registration_access_token"]
    assert AccessToken.objects.get().scope == "oauth2_provider:registration"
    refused = mcp(token)
    assert refused.status_code == 401
    assert 'error="invalid_token"' in refused["WWW-Authenticate"]


def test_an_access_token_in_the_query_string_is_not_accepted(ada, web):
    token = sign_in(ada, web, WEB)["access_token"]
    refused = mcp(None, f"/mcp?access_token={token}")
    assert refused.status_code == 401  # RFC 9700 §2.4 / OAuth 2.1 §5.1.1: the header only
    assert mcp(token).status_code == 200


def test_the_token_response_is_never_cached(ada, web):
    code = consented(browser_of(ada), web.client_id, WEB)
    issued = redeem(web, code)
    assert issued.status_code == 200
    assert issued["Cache-Control"] == "no-store"  # RFC 6749 §5.1
    refreshed = refresh(web, issued.json()["refresh_token"])
    assert refreshed["Cache-Control"] == "no-store"


@pytest.fixture(params=[False, True], ids=["oauthlib-sanitized", "oauthlib-debug"])
def oauthlib_debug(request: pytest.FixtureRequest) -> Iterator[bool]:
    """oauthlib's own debug mode, which puts each request's body and headers into its log lines."""
    previous = oauthlib.get_debug()
    oauthlib.set_debug(request.param)
    yield request.param
    oauthlib.set_debug(previous)


def test_no_credential_appears_in_any_log_record_at_debug(ada, web, caplog, oauthlib_debug):
    # At DEBUG oauthlib logs the grant it creates, the tokens it issues and the refresh token it
    # validates, and the toolkit the success URL, code and all. The redaction mcpforms' AppConfig
    # installs (this suite, like a user's project, has no LOGGING of mcpforms') takes them out of every
    # record, at every level, whatever handler receives it.
    confidential = client(WEB, name="Confidential", confidential=True)
    with caplog.at_level(logging.DEBUG):
        browser = browser_of(ada)
        assert_stopped_here(ask(browser, web.client_id, "https://evil.example/cb"))  # worth a log line
        code = consented(browser, web.client_id, WEB)
        tokens = redeem(web, code).json()
        assert mcp(tokens["access_token"]).status_code == 200
        assert mcp(tokens["access_token"] + "x").status_code == 401
        assert mcp(None, f"/mcp?access_token={tokens['access_token']}").status_code == 401
        rotated = refresh(web, tokens["refresh_token"]).json()
        assert mcp(rotated["access_token"]).status_code == 200
        assert refresh(web, tokens["refresh_token"] + "x").status_code == 400  # logged as invalid
        secret_code = consented(browser, confidential.client_id, WEB)
        basic = base64.b64encode(f"{confidential.client_id}:{confidential.secret}".encode()).decode()
        form = {"grant_type": "authorization_code", "code": secret_code.value, "redirect_uri": WEB}
        form |= {"code_verifier": secret_code.verifier, "resource": ENDPOINT}
        in_header = Client().post(TOKEN, form, HTTP_AUTHORIZATION=f"Basic {basic}")
        assert in_header.status_code == 200, in_header.content
        revoked = Client().post(
            "/oauth/revoke_token/", {"token": rotated["refresh_token"], "client_id": web.client_id}
        )
        assert revoked.status_code == 200
        assert redeem(web, code).status_code == 400  # a replay
    records = caplog.records
    assert any(record.name.startswith("oauthlib") and record.levelno == logging.DEBUG for record in records)
    logged = "\n".join(f"{record.name} {record.getMessage()}" for record in records)
    credentials = [code.value, code.verifier, tokens["access_token"], tokens["refresh_token"]]
    credentials += [rotated["access_token"], rotated["refresh_token"], tokens["refresh_token"] + "x"]
    credentials += [secret_code.value, secret_code.verifier, confidential.secret, basic]
    credentials += [in_header.json()["access_token"], in_header.json()["refresh_token"]]
    for credential in credentials:
        assert credential not in logged
    assert "code=[redacted]" in logged  # the toolkit's success URL: the line stays, the code goes


# 7. Consent answers that are not the user's own -------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        {"allow": "Allow"},
        {},  # Cancel: the toolkit redirected its access_denied to whatever redirect_uri came back
        {"allow": "Allow", "resource": "urn:no-host"},  # and its invalid_target, checked before oauthlib
    ],
    ids=["allow", "cancel", "allow-bad-resource"],
)
def test_a_consent_post_naming_another_client_or_its_redirect_is_refused_without_redirect(ada, web, answer):
    other = client("https://other-client.example/cb", name="Another client")
    browser = browser_of(ada)
    fields = consent_fields(ask(browser, web.client_id, WEB))
    for tampered in (
        {"client_id": other.client_id},  # another real client, the redirect shown kept
        {"redirect_uri": "https://other-client.example/cb"},  # another client's redirect, not the one shown
        {"redirect_uri": "https://client.example/cb/"},
        {"redirect_uri": "https://evil.example/cb"},
    ):
        response = browser.post(AUTHORIZE, {**fields, **tampered, **answer})
        assert response.status_code == 400, (tampered, response.status_code, response.get("Location"))
        assert not response.has_header("Location")
    assert not Grant.objects.exists()


def test_another_user_cannot_answer_someone_s_consent_page(ada, web):
    # Grace posts the form Ada was shown, with Ada's CSRF token: it is bound to Ada's session, not hers.
    ada_browser = Client(enforce_csrf_checks=True)
    ada_browser.force_login(ada)
    fields = consent_fields(ask(ada_browser, web.client_id, WEB))
    grace = Client(enforce_csrf_checks=True)
    grace.force_login(User.objects.create_user("grace", password="pw"))
    grace.get(AUTHORIZE, request_for(web.client_id, WEB, pkce()[1]))  # her own CSRF cookie
    response = grace.post(AUTHORIZE, {**fields, "allow": "Allow"})
    assert response.status_code == 403
    assert not response.has_header("Location")
    assert not Grant.objects.exists()


# 8. Every answer to the client names the issuer (RFC 9207) -------------------------------------------------

ISSUER = f"{BASE}/oauth"


def cancelled(web: Registered) -> Response:
    browser = browser_of(User.objects.get())
    page = browser.get(AUTHORIZE, request_for(web.client_id, WEB, pkce()[1]))
    response: Response = browser.post(AUTHORIZE, consent_fields(page))  # no "allow": the Cancel button
    return response


def refused_before_consent(**parameters: str | None) -> Any:
    """An authorization request of the signed-in user, with ``parameters`` changed (None: left out)."""

    def send(web: Registered) -> Response:
        query = {**request_for(web.client_id, WEB, pkce()[1]), **parameters}
        sent = {key: value for key, value in query.items() if value is not None}
        response: Response = browser_of(User.objects.get()).get(AUTHORIZE, sent)
        return response

    return send


def signed_out_prompt_none(web: Registered) -> Response:
    response: Response = Client().get(AUTHORIZE, request_for(web.client_id, WEB, pkce()[1], prompt="none"))
    return response


ERROR_REDIRECTS = {
    "cancel": (cancelled, "access_denied"),
    "another-resource": (refused_before_consent(resource=f"{BASE}/other"), "invalid_target"),
    "plain-pkce": (refused_before_consent(code_challenge_method="plain"), "invalid_request"),
    "no-pkce": (refused_before_consent(code_challenge=None, code_challenge_method=None), "invalid_request"),
    "unknown-scope": (refused_before_consent(scope="admin"), "invalid_scope"),
    "prompt-none": (signed_out_prompt_none, "login_required"),
}


@pytest.mark.parametrize("case", ERROR_REDIRECTS)
def test_every_error_redirect_names_the_issuer(ada, web, case):
    # The metadata advertises authorization_response_iss_parameter_supported: a client that reads it
    # discards an answer without iss (RFC 9207 §2.4), so it would never hear that the user said no.
    answer, error = ERROR_REDIRECTS[case]
    response = answer(web)
    assert response.status_code == 302, response.content
    location = urlsplit(response["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == WEB
    parameters = parse_qs(location.query)
    assert parameters["error"] == [error] and parameters["state"] == ["st4te"]
    assert parameters["iss"] == [ISSUER]
    assert not Grant.objects.exists()


def test_the_code_response_names_the_issuer_once(ada, web):
    browser = browser_of(ada)
    page = browser.get(AUTHORIZE, request_for(web.client_id, WEB, pkce()[1]))
    answer = browser.post(AUTHORIZE, {**consent_fields(page), "allow": "Allow"})
    assert parse_qs(urlsplit(answer["Location"]).query)["iss"] == [ISSUER]
