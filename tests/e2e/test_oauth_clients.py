"""Real OAuth clients sign in to the demo and call its forms as the signed-in user.

One demo server process (``make run``'s settings on a free port, its own database) is the authorization
server and the resource server at once. Each client starts with no credentials, meets the 401 of a tool
that needs a user, discovers the authorization server from the protected-resource metadata, registers
(dynamically, or by a client ID metadata document), sends the user to the consent page, and calls again
with its token. The user is a browser without a browser (``ConsentBrowser``): it signs in to the demo's
own login as ``staff``, approves the consent page the client's authorization URL opens, and hands the
redirect back (to the client's callback handler, or to the loopback server the client listens on).

Every flow ends in a completed form tool call whose record names the user: ``feedback`` (admin-defined)
stores a submission with its user, ``scoped_note`` (``oauth_urls.py``) answers with its username.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import select
import sqlite3
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import parse_qs, urlsplit

import httpx2
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.auth import OAuthClientProvider
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from tests import wire
from tests.conformance.oauth_site import STAFF, ConsentBrowser, OAuthDemo, deliver, oauth_demo
from tests.conformance.run import NODE_BIN, ROOT, free_port, running_server
from tests.e2e.oauth_cimd import CIMD_CLIENT_ID, CIMD_REDIRECT

# The settings the test server adds to the demo's: a tool that needs a second scope, and the CIMD fetch
# served from memory (the sandbox cannot serve an https client id; tests/e2e/oauth_cimd.py).
SETTINGS = """
ROOT_URLCONF = "tests.e2e.oauth_urls"
OAUTH2_PROVIDER = {
    **OAUTH2_PROVIDER,
    "SCOPES": {**OAUTH2_PROVIDER["SCOPES"], "notes": "Keep notes"},
    "CIMD_METADATA_FETCHER": "tests.e2e.oauth_cimd.MemoryFetcher",
}
MCPFORMS = {**MCPFORMS, "OAUTH_CIMD_HOSTS": ["client.example"]}
"""
# Where the Python client says it listens: nobody does, its callback handler reads the code from the
# redirect the consent page answers with.
REDIRECT = "http://127.0.0.1:8976/callback"
ERAS = {"modern": "2026-07-28", "legacy": "legacy"}
CHALLENGE = re.compile(r'^Bearer .*resource_metadata="(?P<metadata>[^"]+)"')


@dataclass
class Site:
    """The running demo, with a way to read its database."""

    demo: OAuthDemo

    @property
    def endpoint(self) -> str:
        return self.demo.endpoint

    def rows(self, sql: str, *params: object) -> list[tuple[Any, ...]]:
        with sqlite3.connect(self.demo.database) as connection:
            return connection.execute(sql, params).fetchall()

    def submitter(self, submission: object) -> str:
        """The username a stored submission belongs to."""
        query = (
            "select u.username from mcpforms_submission s join auth_user u on u.id = s.user_id where s.id = ?"
        )
        ((username,),) = self.rows(query, submission)
        return str(username)

    def application(self, client_id: str) -> tuple[str, str]:
        """How the authorization server came to know a client: (registration source, client type)."""
        query = "select registration_source, client_type from oauth2_provider_application where client_id = ?"
        ((source, kind),) = self.rows(query, client_id)
        return str(source), str(kind)

    def call_with(self, token: str) -> httpx2.Response:
        """A bare 2026-07-28 ``tools/list`` with ``token``: what the resource server makes of it."""
        body = wire.message("tools/list")
        headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            **wire.headers(body),
        }
        return httpx2.post(self.endpoint, json=body, headers=headers, timeout=30)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    directory = tmp_path_factory.mktemp("oauth-clients")
    port = free_port()
    demo = oauth_demo(directory, port, settings=SETTINGS)
    with running_server(directory / "server.log", env=demo.env, port=port):
        yield Site(demo)


@pytest.fixture
def browser(site: Site) -> Iterator[ConsentBrowser]:
    """The demo's staff user, at a browser of their own (signed out until a client sends them in)."""
    user = site.demo.browser()
    yield user
    user.close()


# ---- the Python SDK: mcp.client.auth.OAuthClientProvider ---------------------------------------------------


@dataclass
class MemoryStorage:
    """The client's token store: in memory, one per client."""

    tokens: OAuthToken | None = None
    client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


@dataclass
class SignedInUser:
    """What the SDK calls to send its user to the authorization URL and to get the code back."""

    browser: ConsentBrowser
    urls: list[str] = field(default_factory=list)

    async def redirect(self, url: str) -> None:
        self.urls.append(url)

    async def callback(self) -> AuthorizationCodeResult:
        location = await asyncio.to_thread(self.browser.approve, self.urls[-1])
        query = parse_qs(urlsplit(location).query)
        assert "code" in query, f"the authorization server refused: {location}"
        return AuthorizationCodeResult(
            code=query["code"][0], state=query.get("state", [None])[0], iss=query.get("iss", [None])[0]
        )

    def asked(self, name: str) -> list[str]:
        """The values of one query parameter of every authorization URL the client opened."""
        return [parse_qs(urlsplit(url).query).get(name, [""])[0] for url in self.urls]


@dataclass
class PythonClient:
    provider: OAuthClientProvider
    storage: MemoryStorage
    user: SignedInUser


def python_client(site: Site, browser: ConsentBrowser, *, cimd: bool = False) -> PythonClient:
    metadata = OAuthClientMetadata(
        client_name="mcpforms e2e (Python SDK)",
        redirect_uris=[CIMD_REDIRECT if cimd else REDIRECT],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )
    storage, user = MemoryStorage(), SignedInUser(browser)
    provider = OAuthClientProvider(
        server_url=site.endpoint,
        client_metadata=metadata,
        storage=storage,
        redirect_handler=user.redirect,
        callback_handler=user.callback,
        client_metadata_url=CIMD_CLIENT_ID if cimd else None,
    )
    return PythonClient(provider, storage, user)


@asynccontextmanager
async def connected(site: Site, client: PythonClient, era: str) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(auth=client.provider, timeout=60)
    async with (
        http,
        Client(streamable_http_client(site.endpoint, http_client=http), mode=ERAS[era], cache=None) as mcp,
    ):
        yield mcp


async def feedback(mcp: Client, comment: str) -> dict[str, Any]:
    result = await mcp.call_tool("feedback", {"rating": 5, "comments": comment})
    assert not result.is_error, result.content
    stored: dict[str, Any] | None = result.structured_content
    assert stored is not None
    return stored


@pytest.mark.parametrize("era", ERAS)
def test_the_python_sdk_registers_dynamically_signs_in_and_calls_as_the_user(site, browser, era):
    client = python_client(site, browser)

    async def scenario() -> tuple[str | None, dict[str, Any]]:
        async with connected(site, client, era) as mcp:
            return mcp.protocol_version, await feedback(mcp, f"Python SDK, DCR, {era}")

    version, stored = asyncio.run(scenario())
    assert version == ("2026-07-28" if era == "modern" else "2025-11-25")
    assert site.submitter(stored["submission"]) == STAFF[0]
    # One consent, for the endpoint, with S256 PKCE, as a client registered dynamically.
    assert len(browser.pages) == 1
    assert client.user.asked("resource") == [site.endpoint]
    assert client.user.asked("code_challenge_method") == ["S256"]
    assert client.storage.client_info is not None
    assert site.application(client.storage.client_info.client_id)[0] == "dcr"
    assert "Unverified" in browser.pages[0]  # it chose its own name


@pytest.mark.parametrize("era", ERAS)
def test_the_python_sdk_signs_in_with_a_client_id_metadata_document(site, browser, era):
    client = python_client(site, browser, cimd=True)

    async def scenario() -> dict[str, Any]:
        async with connected(site, client, era) as mcp:
            return await feedback(mcp, f"Python SDK, CIMD, {era}")

    stored = asyncio.run(scenario())
    assert site.submitter(stored["submission"]) == STAFF[0]
    # The URL is the client id: no registration, the server fetched the document (from memory here).
    assert client.user.asked("client_id") == [CIMD_CLIENT_ID]
    assert site.application(CIMD_CLIENT_ID) == ("cimd", "public")
    # The consent page names the host that vouches for the client, not a name the client chose.
    assert "Identified by <strong>client.example</strong>" in browser.pages[0]


def test_an_expired_token_is_refreshed_and_the_old_one_no_longer_works(site, browser):
    client = python_client(site, browser)

    async def scenario() -> tuple[OAuthToken, OAuthToken]:
        async with connected(site, client, "modern") as mcp:
            await feedback(mcp, "before the refresh")
            first = client.storage.tokens
            assert first is not None and first.refresh_token
            client.provider.context.token_expiry_time = time.time() - 1  # as if an hour had passed
            stored = await feedback(mcp, "after the refresh")
            assert site.submitter(stored["submission"]) == STAFF[0]
            second = client.storage.tokens
            assert second is not None
            return first, second

    first, second = asyncio.run(scenario())
    assert len(browser.pages) == 1  # refreshed without asking the user again
    assert second.access_token != first.access_token
    assert second.refresh_token and second.refresh_token != first.refresh_token  # rotated
    assert site.call_with(first.access_token).status_code == 401
    assert site.call_with(second.access_token).status_code == 200


def test_a_revoked_token_is_refused_with_a_challenge_and_the_client_signs_in_again(site, browser):
    client = python_client(site, browser)

    async def call(comment: str) -> dict[str, Any]:
        async with connected(site, client, "modern") as mcp:
            return await feedback(mcp, comment)

    asyncio.run(call("before the revocation"))
    tokens, info = client.storage.tokens, client.storage.client_info
    assert tokens is not None and info is not None
    revoke = {"token": tokens.access_token, "client_id": info.client_id}
    if info.client_secret:
        revoke["client_secret"] = info.client_secret
    revoked = httpx2.post(f"{site.demo.issuer}/revoke_token/", data=revoke, timeout=30)
    assert revoked.status_code == 200, revoked.text
    refused = site.call_with(tokens.access_token)
    assert refused.status_code == 401
    challenge = CHALLENGE.match(refused.headers["WWW-Authenticate"])
    assert challenge is not None and 'error="invalid_token"' in refused.headers["WWW-Authenticate"]
    assert httpx2.get(challenge["metadata"], timeout=30).json()["resource"] == site.endpoint
    # The client meets the same 401 and gets a new token (by its refresh token or by asking again).
    stored = asyncio.run(call("after the revocation"))
    assert site.submitter(stored["submission"]) == STAFF[0]
    assert client.storage.tokens is not None and client.storage.tokens.access_token != tokens.access_token


@pytest.mark.parametrize("era", ERAS)
def test_a_tool_needing_another_scope_gets_a_403_and_the_client_steps_up(site, browser, era):
    client = python_client(site, browser)

    async def scenario() -> types.CallToolResult:
        async with connected(site, client, era) as mcp:
            await feedback(mcp, "with the base scope")
            return await mcp.call_tool("scoped_note", {"note": f"stepped up, {era}"})

    result = asyncio.run(scenario())
    assert not result.is_error, result.content
    assert result.structured_content == {"note": f"stepped up, {era}", "user": STAFF[0]}
    first, second = client.user.asked("scope")
    assert first.split() == ["mcp"]
    assert set(second.split()) >= {"mcp", "notes"}  # the 403 named every scope the call needs
    assert len(browser.pages) == 2


# ---- node clients: the TypeScript SDK, mcp-remote, the Inspector CLI ---------------------------------------


def node_env(directory: Path, **extra: str) -> dict[str, str]:
    """This environment with the pinned node 22 first on PATH and a HOME of the test's own (where the
    clients would keep their tokens)."""
    path = f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    return {**os.environ, "PATH": path, "HOME": str(directory), "BROWSER": "true", **extra}


def npm_command(name: str) -> str:
    command = ROOT / "node_modules" / ".bin" / name
    assert command.exists(), "node_modules is missing: run `npm ci` (make does)"
    return str(command)


def read_line(stream: Any, process: subprocess.Popen[str], deadline: float, log: list[str]) -> str:
    """The next line of ``stream``, waiting until ``deadline``; fails with what was read so far."""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([stream], [], [], 0.2)
        if ready:
            line: str = stream.readline()
            if line:
                log.append(line)
                return line
            break  # closed
        if process.poll() is not None:
            break
    raise AssertionError("the client said nothing more:\n" + "".join(log)[-4000:])


def follow(location: str) -> None:
    """Deliver the consent page's redirect to the loopback server the client listens on."""
    answered = deliver(location)
    assert answered.status_code < 400, answered.text[-2000:]


@pytest.mark.parametrize("era", ["legacy", "auto"])
def test_the_typescript_sdk_signs_in_and_calls_as_the_user(site, browser, tmp_path, era):
    script = Path(__file__).with_name("oauth_ts_client.mjs")
    command = [
        str(NODE_BIN / "node"),
        str(script),
        site.endpoint,
        era,
        "feedback",
        json.dumps({"rating": 4, "comments": f"TypeScript SDK, {era}"}),
    ]
    node = subprocess.Popen(
        command,
        cwd=ROOT,
        env=node_env(tmp_path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert node.stdin is not None and node.stdout is not None
    said: list[str] = []
    deadline = time.monotonic() + 60
    try:
        request = json.loads(read_line(node.stdout, node, deadline, said))
        location = browser.approve(request["authorize"])
        node.stdin.write(location + "\n")
        node.stdin.flush()
        report = json.loads(read_line(node.stdout, node, deadline, said))
        assert node.wait(timeout=30) == 0
    finally:
        if node.poll() is None:
            node.kill()
        errors = node.stderr.read() if node.stderr else ""
    assert "protocolVersion" in report, errors[-4000:]
    assert report["protocolVersion"] == ("2026-07-28" if era == "auto" else "2025-11-25")
    assert site.submitter(report["result"]["submission"]) == STAFF[0]
    query = parse_qs(urlsplit(request["authorize"]).query)
    assert query["resource"] == [site.endpoint] and query["code_challenge_method"] == ["S256"]


def watch_for_url(log: Path, marker: str, timeout: float = 60) -> str:
    """The URL a client prints after ``marker`` in its log file, once it is there."""
    # The URL may be on the next line; a whole line only, since the client may be writing it. Not a
    # terminal, so no colours around the URL.
    pattern = re.compile(re.escape(marker) + r"\s*(\S+)\n")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and (found := pattern.search(log.read_text())):
            return found.group(1)
        time.sleep(0.1)
    raise AssertionError(
        f"no {marker!r} in the client's output:\n" + (log.read_text()[-4000:] if log.exists() else "")
    )


@pytest.mark.parametrize("option", [[], ["--protocol", "auto"]], ids=["default", "protocol-auto"])
def test_mcp_remote_signs_in_through_its_loopback_callback(site, browser, tmp_path, option):
    errors = tmp_path / "mcp-remote.log"
    callback_port = free_port()
    env = node_env(tmp_path, MCP_REMOTE_CONFIG_DIR=str(tmp_path / "mcp-auth"))
    bridge = StdioServerParameters(
        command=npm_command("mcp-remote"),
        args=[site.endpoint, str(callback_port), *option],
        env=env,
        cwd=ROOT,
    )

    def consent() -> str:
        url = watch_for_url(errors, "Please authorize this client by visiting:")
        location = browser.approve(url)
        follow(location)
        return url

    async def call(errlog: TextIO) -> tuple[str | None, types.CallToolResult]:
        # A desktop host opens with the 2025-11-25 handshake over stdio.
        async with Client(stdio_client(bridge, errlog=errlog), mode="legacy", cache=None) as mcp:
            result = await mcp.call_tool("feedback", {"rating": 3, "comments": "mcp-remote"})
            return mcp.protocol_version, result

    async def scenario() -> tuple[str, str | None, types.CallToolResult]:
        with errors.open("w") as errlog:
            driving = asyncio.create_task(asyncio.to_thread(consent))
            calling = asyncio.create_task(call(errlog))
            await asyncio.wait({driving, calling}, timeout=90, return_when=asyncio.FIRST_EXCEPTION)
            if not calling.done():
                calling.cancel()  # the user never got to consent: mcp-remote would wait for ever
            url = await driving
            return url, *(await calling)

    url, version, result = asyncio.run(scenario())
    log = errors.read_text()
    assert version == "2025-11-25", log[-4000:]
    assert not result.is_error and result.structured_content is not None, log[-4000:]
    assert site.submitter(result.structured_content["submission"]) == STAFF[0]
    query = parse_qs(urlsplit(url).query)
    assert query["redirect_uri"] == [f"http://localhost:{callback_port}/oauth/callback"]
    assert query["resource"] == [site.endpoint]
    assert ("Remote server speaks MCP 2026-07-28" in log) == bool(option)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_inspector_cli_signs_in_and_calls_as_the_user(site, browser, tmp_path, era):
    output = tmp_path / "inspector.log"
    callback = f"http://127.0.0.1:{free_port()}/oauth/callback"
    era_option = [] if era == "legacy" else ["--protocol-era", era]
    command = [npm_command("mcp-inspector"), "--cli", site.endpoint, *era_option, "--callback-url", callback]
    command += [
        "--method",
        "tools/call",
        "--tool-name",
        "feedback",
        "--tool-arg",
        "rating=2",
        "comments=Inspector CLI",
    ]
    # Without a terminal the CLI signs in only when told it may open a browser; BROWSER=true opens none.
    env = node_env(tmp_path, MCP_AUTO_OPEN_ENABLED="true", MCP_INSPECTOR_SECRET_STORE="memory")
    with output.open("w") as errlog:
        inspector = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=errlog, text=True
        )
        try:
            url = watch_for_url(output, "Please navigate to:")
            follow(browser.approve(url))
            stdout, _ = inspector.communicate(timeout=60)
        finally:
            if inspector.poll() is None:
                inspector.kill()
    assert inspector.returncode == 0, output.read_text()[-4000:]
    result = json.loads(stdout)
    assert not result.get("isError"), result
    assert (types.SERVER_INFO_META_KEY in result.get("_meta", {})) == (era == "modern")
    assert site.submitter(result["structuredContent"]["submission"]) == STAFF[0]
    assert parse_qs(urlsplit(url).query)["redirect_uri"] == [callback]
