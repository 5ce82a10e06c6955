"""Client ID Metadata Documents (mcpforms.oauth.cimd): the hosted assistants sign in with the documents they
publish, the fetch cannot be turned against the server's network, and only a signed-in user's authorization
request makes the server fetch anything. All offline: DNS answers and the documents' host are stubs."""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
import logging
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any
from unittest import mock
from urllib.parse import parse_qs, urlsplit

import pytest
import urllib3
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client, override_settings
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from oauth2_provider.cimd import CIMDError
from oauth2_provider.models import Application

import mcpforms.oauth
from tests.test_auth import body, post

if TYPE_CHECKING:
    from django.test.client import _MonkeyPatchedWSGIResponse as Response

pytestmark = pytest.mark.django_db

FETCHER = "mcpforms.oauth.cimd.Fetcher"
PERMISSION = "mcpforms.oauth.cimd.ResolutionPermission"
BACKEND = "mcpforms.oauth.cimd.Backend"

# The recommended settings (mcpforms.oauth.settings()), with a short fetch budget for the slow-body test.
PROVIDER: dict[str, Any] = mcpforms.oauth.settings(
    CIMD_FETCH_TIMEOUT_SECONDS=1,
    # DOT's views keep one oauthlib core per class, built with the backend of the first request of the
    # whole test run: rebuild it, so this module's backend is the one serving its requests.
    ALWAYS_RELOAD_OAUTHLIB_CORE=True,
)
assert (PROVIDER["CIMD_METADATA_FETCHER"], PROVIDER["OAUTH2_BACKEND_CLASS"]) == (FETCHER, BACKEND)
assert list(PROVIDER["CIMD_REGISTRATION_PERMISSION_CLASSES"]) == [PERMISSION]
MCP = {
    "AUTHENTICATION": ["mcpforms.oauth.OAuth2Auth"],
    "BASE_URL": "http://testserver",
}
ENDPOINT = "http://testserver/mcp"

CLAUDE = "https://claude.ai/oauth/mcp-oauth-client-metadata"
CLAUDE_CODE = "https://claude.ai/oauth/claude-code-client-metadata"
CHATGPT = "https://chatgpt.com/oauth/client.json"
VSCODE = "https://vscode.dev/oauth/client-metadata.json"

# The documents as the hosts publish them (reference §2): what DOT 3.4.1 refuses is kept as is.
CLAUDE_DOCUMENT = {
    "client_id": CLAUDE,
    "client_name": "Claude",
    "redirect_uris": ["https://claude.ai/api/mcp/auth_callback", "https://claude.com/api/mcp/auth_callback"],
    "grant_types": ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:jwt-bearer"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
}
CLAUDE_CODE_DOCUMENT = {
    "client_id": CLAUDE_CODE,
    "client_name": "Claude Code",
    "redirect_uris": ["http://localhost/callback", "http://127.0.0.1/callback"],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
}
CHATGPT_DOCUMENT = {
    "client_id": CHATGPT,
    "client_name": "ChatGPT",
    "redirect_uris": ["https://chatgpt.com/connector_platform_oauth_redirect"],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "private_key_jwt",
    "token_endpoint_auth_methods_supported": ["private_key_jwt", "none"],
    "jwks_uri": "https://chatgpt.com/oauth/jwks.json",
}
VSCODE_DOCUMENT = {
    "client_id": VSCODE,
    "client_name": "Visual Studio Code",
    "redirect_uris": ["http://127.0.0.1:33418/", "https://vscode.dev/redirect"],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
}
PUBLIC = "160.79.104.10"  # any globally routable address will do
CLOUDFLARE_CHALLENGE = (403, "text/html; charset=UTF-8", b"<!DOCTYPE html><title>Just a moment...</title>")


# The network, stubbed: DNS answers per host and what each (host, path) serves ---------------------------


class Network:
    """What DOT's fetcher sees of the world: getaddrinfo answers and an HTTPS host, both recorded."""

    def __init__(self) -> None:
        self.answers: dict[str, list[list[str]]] = {}  # host -> successive answers (the last one repeats)
        self.served: dict[tuple[str, str], tuple[int, str, bytes]] = {}
        self.lookups: list[str] = []
        self.connections: list[dict[str, Any]] = []  # one per connection attempt, with what it asked for

    def serve(
        self, url: str, document: Any = None, *, response: tuple[int, str, bytes] | None = None
    ) -> None:
        parts = urlsplit(url)
        assert parts.hostname is not None
        self.answers.setdefault(parts.hostname, [[PUBLIC]])
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        self.served[parts.hostname, path] = response or (
            200,
            "application/json",
            json.dumps(document).encode(),
        )

    def getaddrinfo(self, host: str, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        self.lookups.append(host)
        answers = self.answers.get(host)
        if not answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        ips = answers.pop(0) if len(answers) > 1 else answers[0]
        return [
            (socket.AF_INET6, socket.SOCK_STREAM, 6, "", (ip, port, 0, 0))
            if ":" in ip
            else (socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port))
            for ip in ips
        ]

    def pool(self, host: str, port: int, **options: Any) -> StubPool:
        return StubPool(self, host, port, options)


class StubResponse:
    def __init__(self, status: int, content_type: str, content: bytes, location: str | None = None) -> None:
        self.status = status
        self.headers = urllib3.HTTPHeaderDict({"Content-Type": content_type})
        if location:
            self.headers["Location"] = location
        self._content = content

    def read(self, amt: int | None = None) -> bytes:
        return self.read1(amt)

    def read1(self, amt: int | None = None) -> bytes:
        chunk, self._content = (
            (self._content, b"") if amt is None else (self._content[:amt], self._content[amt:])
        )
        return chunk

    def release_conn(self) -> None:
        pass


class StubPool:
    def __init__(self, network: Network, host: str, port: int, options: dict[str, Any]) -> None:
        self.network, self.host, self.port, self.options = network, host, port, options

    def urlopen(self, method: str, path: str, **options: Any) -> StubResponse:
        hostname = self.options["server_hostname"]
        self.network.connections.append(
            {"ip": self.host, "port": self.port, "hostname": hostname, "path": path, **options}
        )
        served = self.network.served.get((hostname, path))
        if served is None:
            return StubResponse(404, "text/html", b"<h1>Not Found</h1>")
        return StubResponse(*served)

    def close(self) -> None:
        pass


@pytest.fixture
def network() -> Iterator[Network]:
    stub = Network()
    with (
        mock.patch("oauth2_provider.cimd.socket.getaddrinfo", stub.getaddrinfo),
        mock.patch("oauth2_provider.cimd.urllib3.HTTPSConnectionPool", stub.pool),
    ):
        yield stub


@pytest.fixture(autouse=True)
def provider() -> Iterator[None]:
    cache.clear()  # DOT's per-URL failure backoff lives in the cache
    with override_settings(OAUTH2_PROVIDER=PROVIDER, MCPFORMS=MCP):
        yield
    cache.clear()


def fetch(client_id: str) -> tuple[dict[str, Any], int]:
    from mcpforms.oauth.cimd import Fetcher

    document, max_age = Fetcher().fetch(client_id)
    return document, max_age


def refused(client_id: str) -> str:
    with pytest.raises(CIMDError) as error:
        fetch(client_id)
    return str(error.value)


# The fetcher: every address class DOT refuses, refused still, before any connection ----------------------


# (address, what it hides): each is what a hostile DNS server could answer for a client_id's host.
TEREDO_HIDING_10_0_0_1 = "2001:0:4136:e378:8000:63bf:f5ff:fffe"  # client 10.0.0.1, obfuscated (RFC 4380)
INTERNAL = [
    "127.0.0.1",
    "::1",
    "10.1.2.3",
    "172.16.0.5",
    "192.168.1.1",
    "169.254.169.254",  # cloud metadata
    "100.64.0.1",  # CGNAT (RFC 6598)
    "0.0.0.0",
    "::ffff:10.0.0.1",  # IPv4-mapped
    "::ffff:169.254.169.254",
    "64:ff9b::a00:1",  # NAT64 well-known prefix, 10.0.0.1 inside
    "64:ff9b::a9fe:a9fe",  # NAT64, 169.254.169.254 inside
    "2002:a00:1::1",  # 6to4, 10.0.0.1 inside
    TEREDO_HIDING_10_0_0_1,
    "fc00::1",  # unique local
    "fe80::1",  # link-local
]


def test_the_teredo_fixture_really_hides_a_private_address():
    teredo = ipaddress.IPv6Address(TEREDO_HIDING_10_0_0_1).teredo
    assert teredo is not None and teredo[1] == ipaddress.IPv4Address("10.0.0.1")


@pytest.mark.parametrize("address", INTERNAL)
def test_a_host_resolving_to_an_internal_address_is_never_connected_to(network, address):
    network.serve(CHATGPT, CHATGPT_DOCUMENT)
    network.answers["chatgpt.com"] = [[address]]
    with override_settings(MCPFORMS={**MCP, "OAUTH_CIMD_PINNED": {}}):
        assert "non-public address" in refused(CHATGPT)
    assert network.connections == []


def test_one_internal_answer_among_public_ones_refuses_the_whole_host(network):
    network.serve(CHATGPT, CHATGPT_DOCUMENT)
    network.answers["chatgpt.com"] = [[PUBLIC, "10.0.0.7", "8.8.8.8"]]
    with override_settings(MCPFORMS={**MCP, "OAUTH_CIMD_PINNED": {}}):
        assert "non-public address" in refused(CHATGPT)
    assert network.connections == []


def test_dns_rebinding_between_check_and_connect_cannot_move_the_connection(network):
    # The host answers a public address first and an internal one to every later lookup: the connection
    # goes to the address that was checked, named by the real host for TLS, and nothing looks it up again.
    network.serve(VSCODE, VSCODE_DOCUMENT)
    network.answers["vscode.dev"] = [[PUBLIC], ["127.0.0.1"]]
    document, _ = fetch(VSCODE)
    assert document["client_id"] == VSCODE
    assert network.lookups == ["vscode.dev"]
    (connection,) = network.connections
    assert (connection["ip"], connection["port"], connection["hostname"]) == (PUBLIC, 443, "vscode.dev")
    assert connection["headers"]["Host"] == "vscode.dev"


def test_a_redirect_is_not_followed(network):
    elsewhere = "https://vscode.dev/elsewhere.json"
    network.serve(VSCODE, response=(302, "text/html", b""))
    network.serve(elsewhere, VSCODE_DOCUMENT)
    assert "HTTP 302" in refused(VSCODE)
    assert [connection["path"] for connection in network.connections] == ["/oauth/client-metadata.json"]
    assert all(connection["redirect"] is False for connection in network.connections)


@pytest.mark.parametrize(
    "response",
    [
        CLOUDFLARE_CHALLENGE,
        (200, "text/html", b"<html>{}</html>"),
        (200, "application/json", b"<html>not json</html>"),
        (200, "application/json", b'["a", "list"]'),
    ],
)
def test_a_document_that_is_not_a_json_object_is_refused(network, response):
    network.serve(VSCODE, response=response)
    assert "JSON" in refused(VSCODE) or "HTTP 403" in refused(VSCODE)


def test_an_oversized_document_is_refused(network):
    padded = json.dumps({**VSCODE_DOCUMENT, "padding": "x" * 17_000}).encode()
    network.serve(VSCODE, response=(200, "application/json", padded))
    assert "maximum allowed size" in refused(VSCODE)


@pytest.mark.parametrize(
    "client_id",
    [
        "https://vscode.dev:8443/oauth/client-metadata.json",  # another port: a port scan of a public host
        "https://vscode.dev:22/oauth/client-metadata.json",
        "https://user:pw@vscode.dev/oauth/client-metadata.json",  # userinfo
        "https://vscode.dev/oauth/client-metadata.json#frag",  # fragment
        "https://vscode.dev/oauth/../client-metadata.json",  # dot segments
        "https://vscode.dev/oauth/./client-metadata.json",
        "https://vscode.dev/oauth/%2e%2e/client-metadata.json",  # the same dot segments, percent-encoded
        "https://vscode.dev/oauth/%2E/client-metadata.json",
        "http://vscode.dev/oauth/client-metadata.json",  # not https
        "https://vscode.dev",  # no path
    ],
)
def test_a_client_id_url_of_the_wrong_shape_is_refused_before_any_lookup(network, client_id):
    network.serve(VSCODE, VSCODE_DOCUMENT)
    network.answers["vscode.dev"] = [[PUBLIC]]
    refused(client_id)
    assert network.lookups == [] and network.connections == []


# A slow body: a real socket dripping a byte at a time ----------------------------------------------------


@pytest.fixture
def dripping_host() -> Iterator[tuple[Network, dict[str, Any]]]:
    """vscode.dev answers (publicly) and every connection lands on a local server that sends its (valid)
    document one byte every 50 ms: ~8 s for the whole body, far beyond the 1 s fetch budget."""
    document = json.dumps({**VSCODE_DOCUMENT, "padding": " " * 100}).encode()
    server = socket.create_server(("127.0.0.1", 0))
    local_port = server.getsockname()[1]
    stop = threading.Event()

    def drip() -> None:
        connection, _ = server.accept()
        with connection:
            connection.recv(65536)
            head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(document)}\r\n"
            connection.sendall(head.encode() + b"\r\n")
            for byte in document:
                if stop.wait(0.05):
                    return
                try:
                    connection.sendall(bytes([byte]))
                except OSError:
                    return

    thread = threading.Thread(target=drip, daemon=True)
    thread.start()
    asked: dict[str, Any] = {}
    network = Network()
    network.answers["vscode.dev"] = [[PUBLIC]]

    def pool(host: str, port: int, **options: Any) -> urllib3.HTTPConnectionPool:
        asked.update(host=host, port=port, **options)
        return urllib3.HTTPConnectionPool("127.0.0.1", local_port, timeout=options["timeout"], retries=False)

    real_getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host: str, *args: Any, **kwargs: Any) -> list[Any]:
        # The stub answers for vscode.dev; the local connection underneath resolves for real.
        lookup = real_getaddrinfo if host == "127.0.0.1" else network.getaddrinfo
        return lookup(host, *args, **kwargs)

    with (
        mock.patch("oauth2_provider.cimd.socket.getaddrinfo", getaddrinfo),
        mock.patch("oauth2_provider.cimd.urllib3.HTTPSConnectionPool", pool),
    ):
        yield network, asked
    stop.set()
    thread.join(5)
    server.close()


def test_a_slow_drip_body_is_cut_off_at_the_fetch_budget(dripping_host):
    _, asked = dripping_host
    started = time.monotonic()
    # Either the socket's read timeout or the budget between reads ends it, whichever comes first on a
    # loaded machine: "timed out", or "took longer than CIMD_FETCH_TIMEOUT_SECONDS".
    with pytest.raises(CIMDError, match="(?i)time"):
        fetch(VSCODE)
    elapsed = time.monotonic() - started
    assert asked["host"] == PUBLIC
    # CIMD_FETCH_TIMEOUT_SECONDS is 1: one more socket read may be under way when the budget runs out.
    assert elapsed < 2.5, f"the fetch held the worker for {elapsed:.1f}s"


# Normalising what the hosts publish -------------------------------------------------------------------


def test_claude_ai_s_extra_jwt_bearer_grant_is_dropped(network):
    network.serve(CLAUDE, CLAUDE_DOCUMENT)
    document, _ = fetch(CLAUDE)
    assert document["grant_types"] == ["authorization_code", "refresh_token"]


def test_chatgpt_choosing_private_key_jwt_while_offering_none_is_a_public_client(network):
    network.serve(CHATGPT, CHATGPT_DOCUMENT)
    document, _ = fetch(CHATGPT)
    assert document["token_endpoint_auth_method"] == "none"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"token_endpoint_auth_method": "client_secret_post"}, "shared secret"),
        ({"token_endpoint_auth_method": "client_secret_basic"}, "shared secret"),
        (
            {
                "token_endpoint_auth_method": "client_secret_jwt",
                "token_endpoint_auth_methods_supported": ["none"],
            },
            "shared secret",
        ),
        ({"token_endpoint_auth_methods_supported": ["private_key_jwt"]}, "'none'"),
        ({"token_endpoint_auth_methods_supported": None}, "'none'"),
        ({"grant_types": ["implicit"]}, "authorization_code"),
        ({"grant_types": ["urn:ietf:params:oauth:grant-type:jwt-bearer"]}, "authorization_code"),
        ({"grant_types": "authorization_code"}, "grant_types"),
    ],
)
def test_a_document_mcpforms_cannot_serve_safely_is_refused(network, change, message):
    network.serve(CHATGPT, {**CHATGPT_DOCUMENT, **change})
    with override_settings(MCPFORMS={**MCP, "OAUTH_CIMD_PINNED": {}}):
        assert message in refused(CHATGPT)


# Pinned documents -----------------------------------------------------------------------------------------


def test_the_shipped_pins_are_the_hosts_documents():
    from mcpforms.oauth.cimd import pinned_documents

    pins = pinned_documents()
    assert set(pins) == {CLAUDE, CLAUDE_CODE, CHATGPT}
    for client_id, document in pins.items():
        assert document["client_id"] == client_id
    assert pins[CLAUDE]["redirect_uris"] == CLAUDE_DOCUMENT["redirect_uris"]
    assert pins[CHATGPT]["jwks_uri"] == "https://chatgpt.com/oauth/jwks.json"


def test_a_cloudflare_challenge_for_claude_ai_falls_back_to_the_pinned_copy(network, caplog):
    network.serve(CLAUDE, response=CLOUDFLARE_CHALLENGE)
    with caplog.at_level(logging.WARNING, logger="mcpforms.oauth.cimd"):
        document, max_age = fetch(CLAUDE)
    assert document["redirect_uris"] == CLAUDE_DOCUMENT["redirect_uris"]
    assert document["grant_types"] == ["authorization_code", "refresh_token"]  # normalised like a live one
    assert max_age == 300  # re-fetched at the next authorization after the shortest lifetime DOT allows
    assert "pinned copy" in caplog.text and CLAUDE in caplog.text and "HTTP 403" in caplog.text


def test_a_live_document_that_differs_from_its_pin_wins_and_the_difference_is_logged(network, caplog):
    network.serve(CLAUDE, {**CLAUDE_DOCUMENT, "client_name": "Claude (new)"})
    with caplog.at_level(logging.WARNING, logger="mcpforms.oauth.cimd"):
        document, _ = fetch(CLAUDE)
    assert document["client_name"] == "Claude (new)"
    assert "differs from mcpforms' pinned copy" in caplog.text and "client_name" in caplog.text


def test_a_live_document_equal_to_its_pin_logs_nothing(network, caplog):
    from mcpforms.oauth.cimd import pinned_documents

    network.serve(CLAUDE, pinned_documents()[CLAUDE])
    with caplog.at_level(logging.INFO, logger="mcpforms.oauth.cimd"):
        fetch(CLAUDE)
    assert "pinned" not in caplog.text


@pytest.mark.parametrize(
    "lookalike",
    [
        "https://claude.ai.evil.example/oauth/mcp-oauth-client-metadata",
        "https://evil.example/claude.ai/oauth/mcp-oauth-client-metadata",
        "https://claude.ai/oauth/mcp-oauth-client-metadata/",
        "https://claude.ai/oauth/mcp-oauth-client-metadata?x=1",
        "https://claude.ai/oauth/MCP-oauth-client-metadata",
        "https://claude.ai:443/oauth/mcp-oauth-client-metadata",
        "https://claude.com/oauth/mcp-oauth-client-metadata",
    ],
)
def test_a_pin_is_used_only_for_its_exact_client_id(network, lookalike):
    network.serve(lookalike, response=CLOUDFLARE_CHALLENGE)
    refused(lookalike)


def test_pins_can_be_replaced_and_turned_off(network):
    network.serve(CLAUDE, response=CLOUDFLARE_CHALLENGE)
    with override_settings(MCPFORMS={**MCP, "OAUTH_CIMD_PINNED": {}}):
        assert "HTTP 403" in refused(CLAUDE)
    own = {**CLAUDE_DOCUMENT, "client_name": "Claude, as this site pins it"}
    with override_settings(MCPFORMS={**MCP, "OAUTH_CIMD_PINNED": {CLAUDE: own}}):
        assert fetch(CLAUDE)[0]["client_name"] == "Claude, as this site pins it"
        network.serve(CHATGPT, response=CLOUDFLARE_CHALLENGE)
        assert "HTTP 403" in refused(CHATGPT)  # only the configured pins remain


# Authorize -> consent -> token, as each host does it -------------------------------------------------------


class Inputs(HTMLParser):
    """The name/value of every <input> of a page: what a browser would post back from the consent form."""

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        fields = dict(attrs)
        if tag == "input" and fields.get("name") and fields.get("type") != "submit":
            self.values[fields["name"] or ""] = fields.get("value") or ""


def url(name: str, dot_name: str) -> str:
    """mcpforms.oauth.urls' name, or DOT's own while the curated URLs are not mounted yet."""
    try:
        return reverse(name)
    except NoReverseMatch:
        return reverse(dot_name)


def authorize_url() -> str:
    return url("mcpforms-oauth-authorize", "oauth2_provider:authorize")


def token_url() -> str:
    return url("mcpforms-oauth-token", "oauth2_provider:token")


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def ask(browser: Client, client_id: str, redirect_uri: str, challenge: str, **extra: str) -> Response:
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "scope": "mcp",
        "state": "st4te",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": ENDPOINT,
        **extra,
    }
    response: Response = browser.get(authorize_url(), query)
    return response


def consent(browser: Client, page: Response) -> Response:
    assert page.status_code == 200, page.content
    inputs = Inputs()
    inputs.feed(page.content.decode())
    response: Response = browser.post(authorize_url(), {**inputs.values, "allow": "Authorize"})
    return response


def exchange(client_id: str, code: str, redirect_uri: str, verifier: str) -> Response:
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect_uri,
        "client_id": client_id,
        "code_verifier": verifier,
        "resource": ENDPOINT,
    }
    response: Response = Client().post(token_url(), form)
    return response


def sign_in(network: Network, user: User, client_id: str, redirect_uri: str) -> str:
    """The whole flow, as an assistant and its user walk it; returns the access token."""
    browser = Client()
    browser.force_login(user)
    verifier, challenge = pkce()
    redirect = consent(browser, ask(browser, client_id, redirect_uri, challenge))
    assert redirect.status_code == 302, redirect.content
    location = urlsplit(redirect["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == redirect_uri
    answer = parse_qs(location.query)
    assert answer["state"] == ["st4te"]
    fetched = len(network.connections)
    response = exchange(client_id, answer["code"][0], redirect_uri, verifier)
    assert response.status_code == 200, response.content
    assert len(network.connections) == fetched  # the token endpoint fetches nothing
    token: str = response.json()["access_token"]
    return token


def random_port() -> int:
    return secrets.choice(range(20000, 60000))


HOSTS = {
    "claude.ai": (CLAUDE, CLAUDE_DOCUMENT, lambda: "https://claude.ai/api/mcp/auth_callback"),
    "claude.ai via claude.com": (CLAUDE, CLAUDE_DOCUMENT, lambda: "https://claude.com/api/mcp/auth_callback"),
    "ChatGPT": (CHATGPT, CHATGPT_DOCUMENT, lambda: "https://chatgpt.com/connector_platform_oauth_redirect"),
    "Claude Code": (CLAUDE_CODE, CLAUDE_CODE_DOCUMENT, lambda: f"http://localhost:{random_port()}/callback"),
    "VS Code": (VSCODE, VSCODE_DOCUMENT, lambda: f"http://127.0.0.1:{random_port()}/"),
}


@pytest.mark.parametrize("host", list(HOSTS))
def test_each_host_signs_in_with_the_document_it_publishes(network, ada, host):
    client_id, document, redirect_uri = HOSTS[host]
    network.serve(client_id, document)
    token = sign_in(network, ada, client_id, redirect_uri())
    answer = body(post("tools/call", {"name": "whoami", "arguments": {}}, token=token))
    assert answer["result"]["content"][0]["text"] == f"user:{ada.pk}"
    application = Application.objects.get(client_id=client_id)
    assert application.registration_source == Application.RegistrationSource.CIMD
    assert application.client_type == Application.CLIENT_PUBLIC


def test_claude_ai_signs_in_from_its_pin_when_cloudflare_challenges_the_fetch(network, ada, caplog):
    network.serve(CLAUDE, response=CLOUDFLARE_CHALLENGE)
    with caplog.at_level(logging.WARNING, logger="mcpforms.oauth.cimd"):
        token = sign_in(network, ada, CLAUDE, "https://claude.ai/api/mcp/auth_callback")
    assert post("tools/list", token=token).status_code == 200
    assert "pinned copy" in caplog.text


def test_a_stale_document_is_not_refetched_by_the_token_endpoint(network, ada):
    network.serve(CHATGPT, CHATGPT_DOCUMENT)
    browser = Client()
    browser.force_login(ada)
    verifier, challenge = pkce()
    redirect_uri = "https://chatgpt.com/connector_platform_oauth_redirect"
    redirect = consent(browser, ask(browser, CHATGPT, redirect_uri, challenge))
    code = parse_qs(urlsplit(redirect["Location"]).query)["code"][0]
    Application.objects.filter(client_id=CHATGPT).update(cimd_expires_at=timezone.now() - timedelta(days=1))
    fetched = len(network.connections)
    response = exchange(CHATGPT, code, redirect_uri, verifier)
    assert response.status_code == 200, response.content
    assert len(network.connections) == fetched


# Where a document may be resolved -------------------------------------------------------------------------


def assert_error_page(response: Response) -> None:
    assert response.status_code == 400, (response.status_code, response.content[:300])
    assert not response.has_header("Location")


@pytest.mark.parametrize("client_id", [CHATGPT, "https://attacker.example/client.json"])
def test_the_anonymous_token_endpoint_fetches_nothing_and_inserts_no_client(network, client_id):
    network.serve(client_id, {**CHATGPT_DOCUMENT, "client_id": client_id})
    with override_settings(MCPFORMS={**MCP, "OAUTH_CIMD_HOSTS": "*"}):
        for grant in (
            {
                "grant_type": "authorization_code",
                "code": "x",
                "redirect_uri": CHATGPT_DOCUMENT["redirect_uris"][0],
            },
            {"grant_type": "refresh_token", "refresh_token": "x"},
        ):
            response = Client().post(
                token_url(), {**grant, "client_id": client_id, "code_verifier": "v" * 50}
            )
            assert response.status_code in (400, 401), response.content
            assert response.json()["error"] == "invalid_client"
    assert network.lookups == [] and network.connections == []
    assert not Application.objects.exists()


def test_an_anonymous_authorize_request_fetches_nothing_even_with_prompt_none(network):
    network.serve(CHATGPT, CHATGPT_DOCUMENT)
    _, challenge = pkce()
    response = ask(Client(), CHATGPT, CHATGPT_DOCUMENT["redirect_uris"][0], challenge, prompt="none")
    assert_error_page(response)
    assert network.connections == [] and not Application.objects.exists()
    # Without prompt=none the anonymous visitor is sent to sign in first, still without a fetch.
    response = ask(Client(), CHATGPT, CHATGPT_DOCUMENT["redirect_uris"][0], challenge)
    assert response.status_code == 302 and "login" in response["Location"]
    assert network.connections == []


def test_a_host_outside_the_allowlist_is_not_fetched(network, ada):
    other = "https://assistant.example/oauth/client.json"
    network.serve(other, {**VSCODE_DOCUMENT, "client_id": other})
    browser = Client()
    browser.force_login(ada)
    _, challenge = pkce()
    assert_error_page(ask(browser, other, VSCODE_DOCUMENT["redirect_uris"][0], challenge))
    assert network.connections == [] and not Application.objects.exists()
    for allowed in ("*", [".example"], ["assistant.example"]):
        cache.clear()
        with override_settings(MCPFORMS={**MCP, "OAUTH_CIMD_HOSTS": allowed}):
            assert ask(browser, other, VSCODE_DOCUMENT["redirect_uris"][0], challenge).status_code == 200
        Application.objects.all().delete()


def test_a_document_naming_another_client_id_is_refused(network, ada):
    network.serve(VSCODE, {**VSCODE_DOCUMENT, "client_id": CHATGPT})
    browser = Client()
    browser.force_login(ada)
    _, challenge = pkce()
    assert_error_page(ask(browser, VSCODE, VSCODE_DOCUMENT["redirect_uris"][0], challenge))
    assert not Application.objects.exists()


def test_a_redirect_uri_the_document_does_not_list_gets_no_redirect(network, ada):
    network.serve(CLAUDE, CLAUDE_DOCUMENT)
    browser = Client()
    browser.force_login(ada)
    _, challenge = pkce()
    assert_error_page(ask(browser, CLAUDE, "https://claude.ai.evil.example/api/mcp/auth_callback", challenge))


def test_a_manual_application_owning_the_url_is_never_taken_over(network, ada):
    manual = Application.objects.create(
        client_id=CLAUDE,
        name="Our own Claude client",
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="https://manual.example/cb",
    )
    network.serve(CLAUDE, CLAUDE_DOCUMENT)
    browser = Client()
    browser.force_login(ada)
    _, challenge = pkce()
    assert_error_page(ask(browser, CLAUDE, CLAUDE_DOCUMENT["redirect_uris"][0], challenge))
    manual.refresh_from_db()
    assert manual.registration_source == Application.RegistrationSource.MANUAL
    assert manual.redirect_uris == "https://manual.example/cb"
    assert network.connections == []


def test_without_mcpforms_backend_the_permission_resolves_nothing(network, ada):
    # ResolutionPermission fails closed: no backend says who is signed in, so nothing is fetched.
    network.serve(CHATGPT, CHATGPT_DOCUMENT)
    browser = Client()
    browser.force_login(ada)
    _, challenge = pkce()
    default_backend = {**PROVIDER, "OAUTH2_BACKEND_CLASS": "oauth2_provider.oauth2_backends.OAuthLibCore"}
    with override_settings(OAUTH2_PROVIDER=default_backend):
        assert_error_page(ask(browser, CHATGPT, CHATGPT_DOCUMENT["redirect_uris"][0], challenge))
    assert network.connections == []


# System checks --------------------------------------------------------------------------------------------


def cimd_check_ids(**mcpforms: Any) -> list[str]:
    from mcpforms.checks.oauth_clients import check_cimd_settings

    with override_settings(MCPFORMS={**MCP, **mcpforms}):
        return [str(message.id) for message in check_cimd_settings()]


def test_the_recommended_configuration_passes_the_checks():
    assert cimd_check_ids() == []
    assert cimd_check_ids(OAUTH_CIMD_HOSTS="*", OAUTH_CIMD_PINNED={}) == []
    with override_settings(OAUTH2_PROVIDER={**PROVIDER, "CIMD_ENABLED": False}):
        assert cimd_check_ids() == []  # CIMD off: nothing to judge but the MCPFORMS keys


@pytest.mark.parametrize("hosts", ["claude.ai", ["claude.ai", 3], [""], None, {"claude.ai": True}])
def test_e310_the_host_allowlist_is_a_list_of_hosts(hosts):
    assert cimd_check_ids(OAUTH_CIMD_HOSTS=hosts) == ["mcpforms.E310"]


@pytest.mark.parametrize(
    "pins",
    [
        [CLAUDE_DOCUMENT],
        {CLAUDE: "the document"},
        {CLAUDE: {**CLAUDE_DOCUMENT, "client_id": CHATGPT}},
        {"http://claude.ai/x": {**CLAUDE_DOCUMENT, "client_id": "http://claude.ai/x"}},
        {CLAUDE: {**CLAUDE_DOCUMENT, "redirect_uris": []}},
        {CLAUDE: {**CLAUDE_DOCUMENT, "token_endpoint_auth_method": "client_secret_post"}},
    ],
)
def test_e311_pins_are_documents_keyed_by_their_own_client_id(pins):
    assert cimd_check_ids(OAUTH_CIMD_PINNED=pins) == ["mcpforms.E311"]


def test_e312_resolution_permission_without_mcpforms_backend_resolves_nothing():
    default_backend = {**PROVIDER, "OAUTH2_BACKEND_CLASS": "oauth2_provider.oauth2_backends.OAuthLibCore"}
    with override_settings(OAUTH2_PROVIDER=default_backend):
        assert cimd_check_ids() == ["mcpforms.E312"]


def test_w320_cimd_resolvable_from_the_token_endpoint():
    open_permission = {
        **PROVIDER,
        "CIMD_REGISTRATION_PERMISSION_CLASSES": ["oauth2_provider.cimd.AllowAllCIMDPermission"],
    }
    with override_settings(OAUTH2_PROVIDER=open_permission):
        assert cimd_check_ids() == ["mcpforms.W320"]


def test_w321_dot_s_own_fetcher_refuses_the_hosts():
    dot_fetcher = {**PROVIDER, "CIMD_METADATA_FETCHER": "oauth2_provider.cimd.SafeMetadataFetcher"}
    with override_settings(OAUTH2_PROVIDER=dot_fetcher):
        assert cimd_check_ids() == ["mcpforms.W321"]


def test_w322_a_pin_for_a_host_the_allowlist_refuses_is_never_used():
    assert cimd_check_ids(OAUTH_CIMD_HOSTS=["vscode.dev"]) == ["mcpforms.W322"]
    assert cimd_check_ids(OAUTH_CIMD_HOSTS=["vscode.dev"], OAUTH_CIMD_PINNED={}) == []


def test_the_checks_are_registered():
    from django.core.checks import run_checks

    with override_settings(MCPFORMS={**MCP, "OAUTH_CIMD_HOSTS": 7}):
        assert "mcpforms.E310" in [message.id for message in run_checks()]
