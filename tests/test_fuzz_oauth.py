"""Fuzz every endpoint of the authorization server: whatever arrives, the answer is never a 500 and never a
traceback, and the authorization endpoint never redirects anywhere but a registered redirect URI (with
``iss``) or the site's login.

The site is ``tests/urls.py`` on ``mcpforms.oauth.settings()``: the metadata documents, authorize (GET, and
the consent form's POST), token, revoke, registration with its RFC 7592 management, and the connected-
assistants page with its POST. Introspection is not mounted. Requests go through Django's test client,
which re-raises what a view lets escape, so a crash fails the example where it happens. Values are valid
four times in five (``mostly``), so the fuzzing reaches the deeper rungs: a real client id, a code just
consented to, a live refresh token, a real registration access token.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client, override_settings
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from oauth2_provider.models import Application

import mcpforms.oauth
from tests.protocol.test_fuzz import MARKER, NUMBERS, STRINGS, json_values, mostly

if TYPE_CHECKING:
    from django.test.client import _MonkeyPatchedWSGIResponse as Response

pytestmark = pytest.mark.django_db

BASE = "http://testserver"
ENDPOINT = f"{BASE}/mcp"
ISSUER = f"{BASE}/oauth"
WEB = "https://client.example/cb"
LOOPBACK = "http://127.0.0.1/cb"
LOGIN = "/accounts/login/"  # Django's default LOGIN_URL: where a signed-out visitor is sent
MCPFORMS = {
    "AUTHENTICATION": ["mcpforms.oauth.OAuth2Auth"],
    "BASE_URL": BASE,
    # Every example registers from the test client's one address: the throttle and the cap would soon
    # answer 429 to everything, and the fuzzing would stop at that rung.
    "OAUTH_DCR_PER_ADDRESS": None,
    "OAUTH_DCR_UNUSED": None,
}
# What Django's test client answers with when nothing crashed. 5xx is never among them.
CLEAR = {200, 201, 204, 302, 400, 401, 403, 404, 405, 413, 415, 429}
FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.fixture(autouse=True)
def site() -> Iterator[None]:
    cache.clear()
    with override_settings(OAUTH2_PROVIDER=mcpforms.oauth.settings(), MCPFORMS=MCPFORMS):
        yield
    cache.clear()


# The site's clients and people ---------------------------------------------------------------------------


def application(redirect_uris: str, *, secret: str | None = None) -> Application:
    return Application.objects.create(
        name="A fuzzed client",
        client_type=Application.CLIENT_CONFIDENTIAL if secret else Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=redirect_uris,
        registration_source=Application.RegistrationSource.DCR,
        **({"client_secret": secret} if secret else {}),
    )


class Site:
    """The rows the fuzzing starts from, and the values that make a request get further."""

    SECRET = "a-client-secret-" + "s" * 40

    def __init__(self) -> None:
        self.user = User.objects.create_user("ada", password="pw")
        self.web = application(WEB)
        self.loopback = application(LOOPBACK)
        self.confidential = application(WEB, secret=self.SECRET)

    def browser(self) -> Client:
        browser = Client()
        browser.force_login(self.user)
        return browser

    @property
    def client_ids(self) -> list[str]:
        return [self.web.client_id, self.loopback.client_id, self.confidential.client_id]


@pytest.fixture
def site_rows() -> Site:
    return Site()


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def consented(site: Site, app: Application, redirect_uri: str) -> tuple[str, str]:
    """A code the user just agreed to, and its verifier."""
    verifier, challenge = pkce()
    query = {
        "response_type": "code",
        "client_id": app.client_id,
        "redirect_uri": redirect_uri,
        "scope": "mcp",
        "state": "s",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": ENDPOINT,
    }
    browser = site.browser()
    page = browser.get("/oauth/authorize/", query)
    assert page.status_code == 200, page.content
    answer = browser.post("/oauth/authorize/", {**query, "allow": "Allow"})
    assert answer.status_code == 302, answer.content
    return parse_qs(urlsplit(answer["Location"]).query)["code"][0], verifier


def tokens_of(site: Site) -> dict[str, Any]:
    code, verifier = consented(site, site.web, WEB)
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": WEB}
    form |= {"client_id": site.web.client_id, "code_verifier": verifier, "resource": ENDPOINT}
    response = Client().post("/oauth/token/", form)
    assert response.status_code == 200, response.content
    tokens: dict[str, Any] = response.json()
    return tokens


# What arrives -----------------------------------------------------------------------------------------------

# Text a form field or a query parameter can carry: Django decodes either as UTF-8 with replacement, so a
# lone surrogate never arrives that way (it does in JSON, below). Numbers past int()'s 4,300 digits,
# NUL, percent-escapes a decoder may read again, lookalike URIs, empty and blank values.
HOSTILE = [
    "\x00",
    "a\x00b",
    "%00",
    "%ZZ",
    "9" * 5000,
    "9" * 30,
    "-1",
    "",
    " ",
    "\t\n",
    "\u202e",
    "x" * 5000,
    "https://evil.example/cb",
    "javascript:alert(1)",
    "http://127.0.0.1:1/cb",
    f"{WEB}\x00",
    f"{ENDPOINT}\x00",
    "S256",
    "plain",
    "mcp",
    "mcp admin",
]
hostile_text = st.sampled_from(HOSTILE) | st.text(st.characters(codec="utf-8"), max_size=20)
# What a WSGI server hands on as a header: latin-1 text, NUL included.
header_value = st.text(st.characters(max_codepoint=0xFF), max_size=40) | st.sampled_from(HOSTILE[:6])


def field(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A parameter: usually valid, else hostile, now and then left out (None)."""
    return mostly(mostly(valid, hostile_text), st.none())


def form_of(fields: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """A query or form: each field drawn, the left-out ones dropped, now and then a stray one added."""
    extra = st.dictionaries(
        st.sampled_from(["x", "nonce", "claims", "prompt", "request_uri"]), hostile_text, max_size=2
    )
    return st.tuples(st.fixed_dictionaries(fields), extra).map(
        lambda drawn: {key: value for key, value in {**drawn[1], **drawn[0]}.items() if value is not None}
    )


def changed(
    valid: dict[str, Any], others: dict[str, st.SearchStrategy[Any]]
) -> st.SearchStrategy[dict[str, Any]]:
    """``valid`` with up to three fields changed (to another plausible value of ``others``, a hostile one,
    or left out) and now and then a stray one added: near enough to valid to reach every rung."""
    names = sorted(set(valid) | set(others))

    def replaced(chosen: list[str]) -> st.SearchStrategy[dict[str, Any]]:
        return st.fixed_dictionaries(
            {name: others.get(name, hostile_text) | hostile_text | st.none() for name in chosen}
        )

    changes = st.lists(st.sampled_from(names), max_size=3, unique=True).flatmap(replaced)
    extra = st.dictionaries(
        st.sampled_from(["x", "nonce", "claims", "request_uri"]), hostile_text, max_size=1
    )
    return st.tuples(changes, extra).map(
        lambda drawn: {
            key: value for key, value in {**drawn[1], **valid, **drawn[0]}.items() if value is not None
        }
    )


def basic(client_id: str, secret: str) -> str:
    return "Basic " + base64.b64encode(f"{quote(client_id)}:{quote(secret)}".encode()).decode()


# What comes back --------------------------------------------------------------------------------------------


def assert_clear(response: Response) -> None:
    """No 5xx, no traceback; JSON that is an object, with an RFC 6749 ``error`` when it is a refusal."""
    assert response.status_code in CLEAR, (response.status_code, response.content[:300])
    event(f"HTTP {response.status_code}")
    content = b"" if response.streaming else response.content
    assert b"Traceback" not in content
    if response.get("Content-Type", "").startswith("application/json") and content:
        body = json.loads(content)
        assert isinstance(body, dict), body
        if response.status_code >= 400:
            assert isinstance(body.get("error"), str), body
            event(f"error {body['error']}")


def assert_never_elsewhere(response: Response, request_path: str) -> None:
    """A redirect of the authorization endpoint goes to a registered redirect URI, naming the issuer, or
    to the site's own login (and back)."""
    if response.status_code != 302:
        return
    location = urlsplit(response["Location"])
    if not location.netloc:
        assert location.path in (LOGIN, request_path), response["Location"]
        return
    target = f"{location.scheme}://{location.netloc}{location.path}"
    loopback = location.scheme == "http" and location.hostname == "127.0.0.1" and location.path == "/cb"
    assert target == WEB or loopback, response["Location"]
    # In the query for a code; an implicit request's refusal comes in the fragment (RFC 6749 §4.2.2.1).
    parameters = parse_qs(location.fragment or location.query)
    assert parameters.get("iss") == [ISSUER], response["Location"]


# The metadata documents -------------------------------------------------------------------------------------

DOCUMENTS = [
    "/.well-known/oauth-authorization-server/oauth",
    "/.well-known/openid-configuration/oauth",
    "/oauth/.well-known/openid-configuration",
    "/.well-known/oauth-authorization-server",
    "/.well-known/oauth-protected-resource/mcp",
    "/.well-known/oauth-protected-resource",
]


@FUZZ
@given(
    path=st.sampled_from(DOCUMENTS)
    | hostile_text.map(lambda tail: "/.well-known/oauth-protected-resource/" + quote(tail)),
    verb=st.sampled_from(["get", "get", "get", "head", "post", "options", "delete"]),
    query=st.dictionaries(hostile_text, hostile_text, max_size=2),
    with_base_url=st.booleans(),
)
def test_the_metadata_documents_answer_anything_clearly(path, verb, query, with_base_url):
    configured = MCPFORMS if with_base_url else {**MCPFORMS, "BASE_URL": None}
    with override_settings(MCPFORMS=configured):
        response = getattr(Client(), verb)(path, query if verb == "get" else None)
    assert_clear(response)


# The authorization endpoint and its consent form ------------------------------------------------------------


AUTHORIZATION_OTHERS = {
    "response_type": st.sampled_from(["token", "code token", "none", "code code"]),
    "redirect_uri": st.sampled_from(
        [LOOPBACK, "http://127.0.0.1:50000/cb", f"{WEB}/", "https://evil.example/cb"]
    ),
    "scope": st.sampled_from(["mcp mcp", "admin", ""]),
    "code_challenge": st.text("A", min_size=42, max_size=44),
    "code_challenge_method": st.sampled_from(["plain", "S512", "s256"]),
    "resource": st.sampled_from([f"{ENDPOINT}/", f"{BASE}/other", "urn:x", f"{ENDPOINT}?x=1"]),
    "prompt": st.sampled_from(["none", "login", "consent", "create", "none login"]),
    "approval_prompt": st.sampled_from(["auto", "force"]),
}


def authorization_request(site: Site) -> st.SearchStrategy[dict[str, Any]]:
    """An authorization request of one of the site's clients, as a client sends it, then changed."""

    def valid(app: Application) -> dict[str, Any]:
        query = {"response_type": "code", "client_id": app.client_id, "scope": "mcp", "state": "s"}
        query |= {"redirect_uri": app.redirect_uris.split()[0], "resource": ENDPOINT}
        return query | {"code_challenge": pkce()[1], "code_challenge_method": "S256"}

    others = {**AUTHORIZATION_OTHERS, "client_id": st.sampled_from(site.client_ids)}
    return st.sampled_from([site.web, site.loopback, site.confidential]).flatmap(
        lambda app: changed(valid(app), others)
    )


@FUZZ
@given(data=st.data(), signed_in=st.booleans(), verb=st.sampled_from(["get"] * 8 + ["head", "put", "delete"]))
def test_the_authorization_endpoint_answers_any_request_and_redirects_only_where_registered(
    site_rows, data, signed_in, verb
):
    query = data.draw(authorization_request(site_rows))
    browser = site_rows.browser() if signed_in else Client()
    path = data.draw(st.sampled_from(["/oauth/authorize/", "/oauth/authorize"]))
    response = getattr(browser, verb)(path, query if verb in ("get", "head") else None)
    assert_clear(response)
    assert_never_elsewhere(response, path)


@FUZZ
@given(data=st.data())
def test_the_consent_form_answers_any_post_and_redirects_only_where_registered(site_rows, data):
    # What the browser posts back: the consent page's hidden fields, changed, and Allow, Cancel or "Not you?".
    fields = data.draw(authorization_request(site_rows))
    button = data.draw(
        st.sampled_from([{"allow": "Allow"}, {}, {"allow": ""}, {"mcpforms_switch_user": "1"}])
    )
    response = site_rows.browser().post("/oauth/authorize/", {**fields, **button})
    assert_clear(response)
    assert_never_elsewhere(response, "/oauth/authorize/")


# The token and revocation endpoints -------------------------------------------------------------------------


@FUZZ
@given(
    data=st.data(), grant=st.sampled_from(["public code", "secret in the body", "secret in Basic", "refresh"])
)
def test_the_token_endpoint_answers_any_request_with_rfc_6749_json(site_rows, data, grant):
    headers: dict[str, Any] = {}
    if grant == "refresh":
        form = {"grant_type": "refresh_token", "refresh_token": tokens_of(site_rows)["refresh_token"]}
        form["client_id"] = site_rows.web.client_id
    else:
        app = site_rows.web if grant == "public code" else site_rows.confidential
        code, verifier = consented(site_rows, app, WEB)
        form = {"grant_type": "authorization_code", "code": code, "code_verifier": verifier}
        form |= {"redirect_uri": WEB, "client_id": app.client_id, "resource": ENDPOINT}
        if grant == "secret in the body":
            form["client_secret"] = Site.SECRET
        elif grant == "secret in Basic":
            headers["HTTP_AUTHORIZATION"] = basic(app.client_id, Site.SECRET)
    others = {
        "grant_type": st.sampled_from(
            ["authorization_code", "refresh_token", "client_credentials", "password"]
        ),
        "client_id": st.sampled_from(site_rows.client_ids),
        "client_secret": st.just(Site.SECRET),
        "redirect_uri": st.sampled_from([LOOPBACK, f"{WEB}/"]),
        "resource": st.sampled_from([f"{BASE}/other", f"{ENDPOINT}/"]),
        "scope": st.sampled_from(["mcp", "admin"]),
        "code": st.just("no-such-code"),
    }
    form = data.draw(changed(form, others))
    if data.draw(st.integers(0, 4)) == 0:  # what the Authorization header says instead
        headers["HTTP_AUTHORIZATION"] = data.draw(
            st.builds(basic, st.sampled_from(site_rows.client_ids) | hostile_text, hostile_text)
            | header_value.map(lambda value: f"Basic {value}")
            | header_value
        )
    path = data.draw(st.sampled_from(["/oauth/token/", "/oauth/token"]))
    if data.draw(st.integers(0, 9)) == 0:  # a body that is no form
        raw = data.draw(st.binary(max_size=60))
        kind = data.draw(
            st.sampled_from(["application/json", "text/plain", "application/x-www-form-urlencoded"])
        )
        response = Client().post(path, raw, content_type=kind, **headers)
    else:
        response = Client().post(path, form, **headers)
    assert_clear(response)
    if response.status_code >= 400:
        assert response["Content-Type"] == "application/json"  # RFC 6749 §5.2, never a page
        assert response.json()["error"] != "server_error", response.content  # the client's error, not ours


@FUZZ
@given(data=st.data())
def test_the_revocation_endpoint_answers_any_request(site_rows, data):
    tokens = tokens_of(site_rows) if data.draw(st.booleans()) else {"access_token": "a", "refresh_token": "r"}
    form = data.draw(
        form_of(
            {
                "token": field(st.sampled_from([tokens["access_token"], tokens["refresh_token"]])),
                "token_type_hint": st.none() | st.sampled_from(["access_token", "refresh_token", "id_token"]),
                "client_id": field(st.sampled_from(site_rows.client_ids)),
                "client_secret": st.none() | st.just(Site.SECRET) | hostile_text,
            }
        )
    )
    authorization = data.draw(st.none() | header_value.map(lambda value: f"Basic {value}"))
    headers = {"HTTP_AUTHORIZATION": authorization} if authorization else {}
    verb = data.draw(st.sampled_from(["post"] * 5 + ["get"]))
    response = getattr(Client(), verb)("/oauth/revoke_token/", form if verb == "post" else None, **headers)
    assert_clear(response)


# Registration and its RFC 7592 management ------------------------------------------------------------------

redirect_uris = st.lists(
    mostly(
        st.sampled_from(
            [WEB, LOOPBACK, "http://localhost:3334/cb", "cursor://anysphere.cursor-mcp/oauth/callback"]
        ),
        hostile_text | json_values,
    ),
    max_size=4,
)
client_metadata = st.fixed_dictionaries(
    {"redirect_uris": mostly(redirect_uris, json_values)},
    optional={
        "client_name": mostly(st.text(max_size=30), json_values | st.just("n" * 300)),
        "token_endpoint_auth_method": mostly(
            st.sampled_from(["none", "client_secret_post", "client_secret_basic"]), json_values
        ),
        "grant_types": mostly(st.just(["authorization_code", "refresh_token"]), json_values),
        "response_types": json_values,
        "scope": json_values,
        "software_id": json_values,
    },
)


@st.composite
def registration_bodies(draw: st.DrawFn) -> bytes:
    """A client metadata document, sometimes with hostile JSON text (a lone surrogate, a NUL, a number
    past what Python reads) in place of one of its values; now and then no document at all."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.binary(max_size=60) | json_values.map(lambda value: json.dumps(value).encode()))
    document: dict[str, Any] = draw(client_metadata)
    if not draw(st.booleans()):
        return json.dumps(document).encode()
    where = draw(st.sampled_from(["client_name", "redirect_uris", "software_id", "a key"]))
    if where == "redirect_uris":
        document["redirect_uris"] = [WEB, MARKER]
    elif where == "a key":
        document[MARKER] = 1
    else:
        document[where] = MARKER
    # A key can only be a string; a value anything of test_fuzz's, or a redirect URI with a NUL in it.
    texts = STRINGS + [('"https://c.example/\\u0000cb"', None)]
    raw, _ = draw(st.sampled_from(texts if where == "a key" else texts + NUMBERS))
    return json.dumps(document).replace(json.dumps(MARKER), raw, 1).encode()


def register(body: bytes, **headers: Any) -> Response:
    response: Response = Client().post("/oauth/register/", body, content_type="application/json", **headers)
    return response


@FUZZ
@given(
    body=registration_bodies(), content_type=st.sampled_from(["application/json"] * 4 + ["text/plain", ""])
)
def test_registration_answers_any_document_with_rfc_7591_json(body, content_type):
    response = Client().post("/oauth/register/", body, content_type=content_type)
    assert_clear(response)
    assert response["Content-Type"] == "application/json", response.content[:200]
    if response.status_code == 201:
        # What was stored can be read back as it was answered: text every database holds.
        registered = response.json()
        app = Application.objects.get(client_id=registered["client_id"])
        assert app.redirect_uris.split() == registered["redirect_uris"]


@FUZZ
@given(
    data=st.data(),
    verb=st.sampled_from(["get", "put", "put", "delete", "post", "patch"]),
    body=registration_bodies(),
)
def test_the_registration_management_endpoint_answers_anything_with_rfc_7592_json(data, verb, body):
    created = register(json.dumps({"redirect_uris": [WEB], "token_endpoint_auth_method": "none"}).encode())
    assert created.status_code == 201, created.content
    registered = created.json()
    client_id = data.draw(mostly(st.just(registered["client_id"]), hostile_text))
    token = data.draw(mostly(st.just(registered["registration_access_token"]), header_value))
    path = "/oauth/register/" + quote(client_id, safe="") + data.draw(st.sampled_from(["/", ""]))
    headers = {} if data.draw(st.integers(0, 9)) == 0 else {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    if verb in ("put", "post", "patch"):
        response = getattr(Client(), verb)(path, body, content_type="application/json", **headers)
    else:
        response = getattr(Client(), verb)(path, **headers)
    assert_clear(response)


# Connected assistants ---------------------------------------------------------------------------------------


@FUZZ
@given(
    data=st.data(),
    signed_in=st.sampled_from([True, True, True, False]),
    verb=st.sampled_from(["post"] * 4 + ["get", "put"]),
)
def test_the_connected_assistants_page_answers_any_post(site_rows, data, signed_in, verb):
    if data.draw(st.booleans()):
        tokens_of(site_rows)  # an assistant to revoke
    chosen = data.draw(
        field(st.sampled_from([str(site_rows.web.pk), str(site_rows.confidential.pk)]))
        | st.integers().map(str)
    )
    form = {} if chosen is None else {"application": chosen}
    browser = site_rows.browser() if signed_in else Client()
    response = getattr(browser, verb)("/oauth/connected/", form if verb == "post" else None)
    assert_clear(response)
    if response.status_code == 302:
        assert urlsplit(response["Location"]).path in ("/oauth/connected/", LOGIN)


# The resource server: what a client presents as its bearer token --------------------------------------------


@FUZZ
@given(authorization=header_value | header_value.map(lambda value: f"Bearer {value}"))
def test_the_endpoint_refuses_any_bearer_token_with_a_challenge(authorization):
    response = Client().post("/mcp", "{}", content_type="application/json", HTTP_AUTHORIZATION=authorization)
    assert response.status_code in (400, 401), (response.status_code, response.content[:200])
    assert b"Traceback" not in response.content
    if response.status_code == 401:
        assert response["WWW-Authenticate"].startswith("Bearer")
