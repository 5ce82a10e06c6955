"""The 2025 era on the same endpoint: initialize, sessions, 2025 result shapes, and a form tool asking the
user through a server request on a stream the server closes, answered by a separate POST."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from mcpforms.protocol import legacy
from mcpforms.protocol.reply import Reply
from mcpforms.protocol.server import Server
from mcpforms.protocol.sessions import MemorySessions
from mcpforms.registry import register
from tests.forms import SignupForm

pytestmark = pytest.mark.django_db  # a completed form records its flow

ELICITATION: dict[str, Any] = {"elicitation": {"form": {}}}


class LegacyClient:
    """A 2025-11-25 client over the core: a session header on every request after initialize."""

    def __init__(
        self, server: Server, *, capabilities: dict[str, Any] | None = None, version: str = "2025-11-25"
    ):
        self.server = server
        self.ids = itertools.count(1)
        reply = self.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": capabilities or {},
                "clientInfo": {"name": "legacy-test", "version": "1"},
            },
        )
        assert reply.status == 200, reply
        self.session = reply.headers["Mcp-Session-Id"]
        self.initialized = reply.body["result"] if reply.body else {}
        assert self.send({"jsonrpc": "2.0", "method": "notifications/initialized"}) == Reply(202)

    @property
    def headers(self) -> dict[str, str]:
        return {"mcp-session-id": self.session} if hasattr(self, "session") else {}

    def send(self, payload: dict[str, Any]) -> Reply:
        return self.server.handle(payload, headers=self.headers)

    def request(self, method: str, params: dict[str, Any] | None = None) -> Reply:
        self.last_id = next(self.ids)
        return self.send({"jsonrpc": "2.0", "id": self.last_id, "method": method, "params": params or {}})

    def result(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        reply = self.request(method, params)
        assert reply.status == 200 and reply.body is not None and "result" in reply.body, reply
        result: dict[str, Any] = reply.body["result"]
        return result


@pytest.fixture
def server() -> Server:
    server = Server(name="legacy", sessions=MemorySessions())
    register(SignupForm, server=server, message="Create your account")
    return server


@pytest.mark.parametrize(
    ("asked", "agreed"),
    [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2026-07-28", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
    ],
)
def test_initialize_negotiates_a_2025_version_and_opens_a_session(server, asked, agreed):
    client = LegacyClient(server, version=asked)
    assert client.initialized["protocolVersion"] == agreed
    assert client.initialized["serverInfo"]["name"] == "legacy"
    assert "tools" in client.initialized["capabilities"]
    assert all(0x21 <= ord(character) <= 0x7E for character in client.session)


def test_requests_name_their_session(server):
    client = LegacyClient(server)
    headerless = server.handle({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}, headers={})
    assert headerless.status == 400 and headerless.body is not None
    assert headerless.body["error"]["code"] == -32000
    unknown = server.handle(
        {"jsonrpc": "2.0", "id": 9, "method": "tools/list"}, headers={"mcp-session-id": "nope"}
    )
    assert unknown.status == 404
    assert client.result("ping") == {}


def test_results_have_the_2025_shape(server):
    client = LegacyClient(server)
    listed = client.result("tools/list")
    assert {tool["name"] for tool in listed["tools"]} >= {"signup"}
    assert not {"resultType", "ttlMs", "cacheScope"} & set(listed)
    done = client.result(
        "tools/call", {"name": "signup", "arguments": {"email": "ada@example.com", "plan": "pro"}}
    )
    assert "resultType" not in done and done["structuredContent"]["email"] == "ada@example.com"


def test_2026_only_methods_are_unknown_and_set_level_is_checked(server):
    client = LegacyClient(server)
    reply = client.request("server/discover")
    assert reply.status == 404 and reply.body is not None and reply.body["error"]["code"] == -32601
    assert client.result("logging/setLevel", {"level": "warning"}) == {}
    bad = client.request("logging/setLevel", {"level": "loud"})
    assert bad.status == 400 and bad.body is not None and bad.body["error"]["code"] == -32602


def test_a_form_tool_asks_through_a_server_request_and_finishes_on_the_resumed_stream(server):
    client = LegacyClient(server, capabilities=ELICITATION)
    reply = client.request("tools/call", {"name": "signup", "arguments": {"plan": "team"}})
    assert reply.status == 200 and reply.events is not None
    (asking,) = reply.events
    assert asking.retry_ms is not None  # the client knows when to come back: the stream ends here
    request = asking.data
    assert request is not None and request["method"] == "elicitation/create"
    assert request["params"]["message"].startswith("Create your account")
    assert "email" in request["params"]["requestedSchema"]["properties"]

    # Nothing new yet: the client is handed its last event id again, to poll with.
    waiting = legacy.resume(server, client.headers, asking.id, None, server.sessions)
    assert [event.id for event in waiting.events or ()] == [asking.id]

    answer = {
        "jsonrpc": "2.0",
        "id": request["id"],
        "result": {"action": "accept", "content": {"email": "ada@example.com"}},
    }
    assert client.send(answer) == Reply(202)
    assert client.send(answer) == Reply(202)  # a retried POST of the same answer runs nothing twice
    resumed = legacy.resume(server, client.headers, asking.id, None, server.sessions)
    (final,) = resumed.events or ()
    assert final.data is not None and final.data["id"] == client.last_id
    assert final.data["result"]["structuredContent"] == {
        "email": "ada@example.com",
        "plan": "team",
        "age": None,
        "newsletter": False,
    }


def test_a_declined_form_ends_the_call_with_an_error_result(server):
    client = LegacyClient(server, capabilities=ELICITATION)
    reply = client.request("tools/call", {"name": "signup", "arguments": {}})
    (asking,) = reply.events or ()
    assert asking.data is not None
    client.send({"jsonrpc": "2.0", "id": asking.data["id"], "result": {"action": "decline"}})
    (final,) = legacy.resume(server, client.headers, asking.id, None, server.sessions).events or ()
    assert final.data is not None and final.data["result"]["isError"] is True
    assert "declined" in final.data["result"]["content"][0]["text"]


def test_ending_a_session_makes_it_unknown(server):
    client = LegacyClient(server)
    assert legacy.end(client.headers, None, server.sessions).status == 200
    reply = client.request("ping")
    assert reply.status == 404
    assert legacy.resume(server, client.headers, None, None, server.sessions).status == 404


def test_a_session_is_its_owners(server, django_user_model):
    client = LegacyClient(server)
    other = django_user_model(pk=7, username="mallory")
    reply = server.handle({"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=client.headers, user=other)
    assert reply.status == 404


def test_an_mcp_apps_host_gets_the_form_ui_on_a_2025_session(server):
    apps = {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}
    client = LegacyClient(server, capabilities=apps)
    assert "io.modelcontextprotocol/ui" in client.initialized["capabilities"]["extensions"]
    shown = client.result("tools/call", {"name": "signup", "arguments": {}})
    assert shown["_meta"]["ui"]["resourceUri"] == "ui://mcpforms/signup" and "resultType" not in shown
    (content,) = client.result("resources/read", {"uri": "ui://mcpforms/signup"})["contents"]
    assert content["mimeType"] == "text/html;profile=mcp-app" and "<form" in content["text"]
    submitted = client.result(
        "tools/call", {"name": "signup_submit", "arguments": {"email": "ada@example.com", "plan": "pro"}}
    )
    assert submitted["structuredContent"]["email"] == "ada@example.com"


def test_a_2025_session_lists_the_app_only_submit_tool_only_when_it_declared_mcp_apps(server):
    apps = {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}
    names = [tool["name"] for tool in LegacyClient(server, capabilities=apps).result("tools/list")["tools"]]
    assert names == ["signup", "signup_submit"]
    plain = LegacyClient(server, capabilities={"elicitation": {}})
    assert [tool["name"] for tool in plain.result("tools/list")["tools"]] == ["signup"]
