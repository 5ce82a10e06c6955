"""The 2025 era on the same endpoint: initialize, sessions, 2025 result shapes, and a form tool asking the
user through a server request on a stream the server closes, answered by a separate POST."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from django.http import HttpResponse
from django.test import RequestFactory, override_settings

from mcpforms.api import serve
from mcpforms.protocol.era2025 import shim as era2025
from mcpforms.protocol.era2025.sessions import MemorySessions
from mcpforms.protocol.reply import Reply
from mcpforms.protocol.server import Server
from mcpforms.registry import register
from tests import wire
from tests.forms import SignupForm

pytestmark = pytest.mark.django_db  # a completed form records its flow

ELICITATION: dict[str, Any] = {"elicitation": {"form": {}}}


class Era2025Client:
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
    client = Era2025Client(server, version=asked)
    assert client.initialized["protocolVersion"] == agreed
    assert client.initialized["serverInfo"]["name"] == "legacy"
    assert "tools" in client.initialized["capabilities"]
    assert all(0x21 <= ord(character) <= 0x7E for character in client.session)


def test_requests_name_their_session(server):
    client = Era2025Client(server)
    headerless = server.handle({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}, headers={})
    assert headerless.status == 400 and headerless.body is not None
    assert headerless.body["error"]["code"] == -32000
    unknown = server.handle(
        {"jsonrpc": "2.0", "id": 9, "method": "tools/list"}, headers={"mcp-session-id": "nope"}
    )
    assert unknown.status == 404
    assert client.result("ping") == {}


def test_results_have_the_2025_shape(server):
    client = Era2025Client(server)
    listed = client.result("tools/list")
    assert {tool["name"] for tool in listed["tools"]} >= {"signup"}
    assert not {"resultType", "ttlMs", "cacheScope"} & set(listed)
    done = client.result(
        "tools/call", {"name": "signup", "arguments": {"email": "ada@example.com", "plan": "pro"}}
    )
    assert "resultType" not in done and done["structuredContent"]["email"] == "ada@example.com"


def test_2026_only_methods_are_unknown_and_set_level_is_checked(server):
    client = Era2025Client(server)
    reply = client.request("server/discover")
    assert reply.status == 404 and reply.body is not None and reply.body["error"]["code"] == -32601
    assert client.result("logging/setLevel", {"level": "warning"}) == {}
    bad = client.request("logging/setLevel", {"level": "loud"})
    assert bad.status == 400 and bad.body is not None and bad.body["error"]["code"] == -32602


def test_a_form_tool_asks_through_a_server_request_and_finishes_on_the_resumed_stream(server):
    client = Era2025Client(server, capabilities=ELICITATION)
    reply = client.request("tools/call", {"name": "signup", "arguments": {"plan": "team"}})
    assert reply.status == 200 and reply.events is not None
    (asking,) = reply.events
    assert asking.retry_ms is not None  # the client knows when to come back: the stream ends here
    request = asking.data
    assert request is not None and request["method"] == "elicitation/create"
    assert request["params"]["message"].startswith("Create your account")
    assert "email" in request["params"]["requestedSchema"]["properties"]

    # Nothing new yet: the client is handed its last event id again, to poll with.
    waiting = era2025.resume(server, client.headers, asking.id, None, server.sessions)
    assert [event.id for event in waiting.events or ()] == [asking.id]

    answer = {
        "jsonrpc": "2.0",
        "id": request["id"],
        "result": {"action": "accept", "content": {"email": "ada@example.com"}},
    }
    assert client.send(answer) == Reply(202)
    assert client.send(answer) == Reply(202)  # a retried POST of the same answer runs nothing twice
    resumed = era2025.resume(server, client.headers, asking.id, None, server.sessions)
    (final,) = resumed.events or ()
    assert final.data is not None and final.data["id"] == client.last_id
    assert final.data["result"]["structuredContent"] == {
        "email": "ada@example.com",
        "plan": "team",
        "age": None,
        "newsletter": False,
    }


def test_a_declined_form_ends_the_call_with_an_error_result(server):
    client = Era2025Client(server, capabilities=ELICITATION)
    reply = client.request("tools/call", {"name": "signup", "arguments": {}})
    (asking,) = reply.events or ()
    assert asking.data is not None
    client.send({"jsonrpc": "2.0", "id": asking.data["id"], "result": {"action": "decline"}})
    (final,) = era2025.resume(server, client.headers, asking.id, None, server.sessions).events or ()
    assert final.data is not None and final.data["result"]["isError"] is True
    assert "declined" in final.data["result"]["content"][0]["text"]


def test_ending_a_session_makes_it_unknown(server):
    client = Era2025Client(server)
    assert era2025.end(server, client.headers, None, server.sessions).status == 200
    reply = client.request("ping")
    assert reply.status == 404
    assert era2025.resume(server, client.headers, None, None, server.sessions).status == 404


def test_a_session_is_its_owners(server, django_user_model):
    # A user's session, that is: one opened anonymously is the first user's who names it (below).
    owner = django_user_model(pk=1, username="ada")
    headers = {"mcp-session-id": initialize(server, user=owner).headers["Mcp-Session-Id"]}
    other = django_user_model(pk=7, username="mallory")
    reply = server.handle({"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=headers, user=other)
    assert reply.status == 404


def test_an_mcp_apps_host_gets_the_form_ui_on_a_2025_session(server):
    client = Era2025Client(server, capabilities=wire.APPS)
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
    listed = Era2025Client(server, capabilities=wire.APPS).result("tools/list")["tools"]
    names = [tool["name"] for tool in listed]
    assert names == ["signup", "signup_submit"]
    plain = Era2025Client(server, capabilities={"elicitation": {}})
    assert [tool["name"] for tool in plain.result("tools/list")["tools"]] == ["signup"]


# ---- a session belongs to its server -----------------------------------------------------------------------


def test_a_session_opened_on_one_server_is_unknown_on_another_that_shares_its_store():
    store = MemorySessions()
    first, second = Server(key="first", sessions=store), Server(key="second", sessions=store)
    register(SignupForm, server=first)
    register(SignupForm, server=second)
    client = Era2025Client(first, capabilities=ELICITATION)
    asking = client.request("tools/call", {"name": "signup", "arguments": {}})
    ((event,),) = [asking.events or ()]
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}

    posted = second.handle(ping, headers=client.headers)
    assert posted.status == 404 and posted.body is not None
    assert posted.body["error"] == {"code": -32001, "message": "Session not found"}
    resumed = era2025.resume(second, client.headers, event.id, None, store)
    assert resumed.status == 404 and resumed.body is not None
    assert resumed.body["error"]["message"] == "Session not found"
    ended = era2025.end(second, client.headers, None, store)
    assert ended.status == 404
    # The session lives on where it was opened.
    assert client.result("ping") == {}
    assert era2025.resume(first, client.headers, event.id, None, store).status == 200


# ---- what a session keeps ----------------------------------------------------------------------------------

APPS = {"mimeTypes": ["text/html;profile=mcp-app"]}


def test_a_session_keeps_only_what_the_server_reads_of_the_clients_declarations(server):
    padding = ["x" * 50_000] * 4
    client = Era2025Client(
        server,
        capabilities={
            "elicitation": {"form": {"junk": padding}, "url": {}},
            "experimental": {"junk": {"padding": padding}},
            "roots": {"listChanged": True, "junk": padding},
            "extensions": {"io.modelcontextprotocol/ui": APPS, "com.example/other": {"junk": padding}},
        },
    )
    session = server.sessions.get(client.session)
    assert session is not None
    assert session.capabilities == {
        "elicitation": {"form": {}, "url": {}},
        "roots": {},
        "extensions": {"io.modelcontextprotocol/ui": APPS},
    }
    # What the form UI needs still works on this session.
    shown = client.result("tools/call", {"name": "signup", "arguments": {}})
    assert shown["_meta"]["ui"]["resourceUri"] == "ui://mcpforms/signup"


def test_a_session_keeps_the_client_info_a_submission_would(server):
    reply = server.handle(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "n" * 5_000, "version": "1", "icons": [{"src": "x" * 90_000}]},
            },
        }
    )
    session = server.sessions.get(reply.headers["Mcp-Session-Id"])
    assert session is not None and session.client_info == {"name": "n" * 200, "version": "1"}


def test_a_2025_flow_with_unknown_argument_keys_stores_none_of_them_and_completes(server):
    client = Era2025Client(server, capabilities=ELICITATION)
    arguments = {"plan": "team", "junk": "x" * 50_000, "more": {"deep": ["y"] * 1_000}}
    reply = client.request("tools/call", {"name": "signup", "arguments": arguments, "extra": "z" * 9_000})
    (asking,) = reply.events or ()
    assert asking.data is not None
    call_id = asking.id.partition(":")[0]
    found = server.sessions.events_after(call_id, client.session, 0)
    assert found is not None
    stored, _ = found
    assert stored.params == {"name": "signup", "arguments": {"plan": "team"}}

    answer = {"action": "accept", "content": {"email": "ada@example.com"}}
    assert client.send({"jsonrpc": "2.0", "id": asking.data["id"], "result": answer}) == Reply(202)
    (final,) = era2025.resume(server, client.headers, asking.id, None, server.sessions).events or ()
    assert final.data is not None and "error" not in final.data, final.data
    assert final.data["result"]["structuredContent"]["plan"] == "team"
    assert final.data["result"]["structuredContent"]["email"] == "ada@example.com"


# ---- budgets -----------------------------------------------------------------------------------------------


def initialize(server: Server, *, address: str | None = None, user: Any = None) -> Reply:
    payload = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        },
    }
    return server.handle(payload, user=user, address=address)


def assert_over_budget(reply: Reply, setting: str) -> None:
    assert reply.status == 429 and reply.body is not None, reply
    error = reply.body["error"]
    assert error["code"] == -32000 and f"MCPFORMS['{setting}']" in error["message"], error
    assert int(reply.headers["Retry-After"]) > 0


@override_settings(MCPFORMS={"ALLOW_ANONYMOUS": True, "ANONYMOUS_SESSIONS_PER_ADDRESS": 2})
def test_anonymous_sessions_are_budgeted_per_address(server):
    assert initialize(server, address="192.0.2.1").status == 200
    assert initialize(server, address="192.0.2.1").status == 200
    assert_over_budget(initialize(server, address="192.0.2.1"), "ANONYMOUS_SESSIONS_PER_ADDRESS")
    assert initialize(server, address="192.0.2.2").status == 200
    # An IPv6 host owns its whole /64: another address in it is the same client.
    assert initialize(server, address="2001:db8::1").status == 200
    assert initialize(server, address="2001:db8::2").status == 200
    assert_over_budget(initialize(server, address="2001:db8::ffff"), "ANONYMOUS_SESSIONS_PER_ADDRESS")


@override_settings(MCPFORMS={"ALLOW_ANONYMOUS": True, "ANONYMOUS_SESSIONS": 2})
def test_anonymous_sessions_have_a_global_budget_and_an_ended_one_frees_its_place(server):
    first = initialize(server, address="192.0.2.1")
    assert initialize(server, address="192.0.2.2").status == 200
    assert_over_budget(initialize(server, address="192.0.2.3"), "ANONYMOUS_SESSIONS")
    assert_over_budget(initialize(server), "ANONYMOUS_SESSIONS")  # stdio has no address
    headers = {"mcp-session-id": first.headers["Mcp-Session-Id"]}
    assert era2025.end(server, headers, None, server.sessions).status == 200
    assert initialize(server, address="192.0.2.3").status == 200


@override_settings(MCPFORMS={"ALLOW_ANONYMOUS": True, "SESSIONS_PER_PRINCIPAL": 1})
def test_a_users_sessions_are_budgeted_apart_from_anonymous_ones(server, django_user_model):
    ada, bob = django_user_model(pk=1, username="ada"), django_user_model(pk=2, username="bob")
    assert initialize(server, user=ada, address="192.0.2.1").status == 200
    assert_over_budget(initialize(server, user=ada, address="192.0.2.9"), "SESSIONS_PER_PRINCIPAL")
    assert initialize(server, user=bob, address="192.0.2.1").status == 200
    assert initialize(server, address="192.0.2.1").status == 200


@override_settings(MCPFORMS={"ALLOW_ANONYMOUS": True, "CALLS_PER_SESSION": 1})
def test_a_session_holds_a_budget_of_pending_calls(server):
    client = Era2025Client(server, capabilities=ELICITATION)
    assert client.request("tools/call", {"name": "signup", "arguments": {}}).events
    refused = client.request("tools/call", {"name": "signup", "arguments": {}})
    assert_over_budget(refused, "CALLS_PER_SESSION")
    # A call that needs nothing from the user is not kept, so it is not refused.
    done = {"name": "signup", "arguments": {"email": "ada@example.com", "plan": "pro"}}
    assert client.result("tools/call", done)["structuredContent"]["plan"] == "pro"


# ---- Last-Event-ID is ours or unknown ----------------------------------------------------------------------

UNKNOWN_STREAM = {"code": -32600, "message": "Unknown Last-Event-ID: no such stream in this session"}


def resume_over_http(server: Server, session: str, last_event_id: str) -> tuple[int, Any]:
    request = RequestFactory().get("/mcp", HTTP_MCP_SESSION_ID=session, HTTP_LAST_EVENT_ID=last_event_id)
    response = serve(server, request)
    assert isinstance(response, HttpResponse)
    if response["Content-Type"] == "application/json":
        return response.status_code, json.loads(response.content)
    return response.status_code, response.content.decode()


def a_waiting_call(server: Server) -> tuple[Era2025Client, str]:
    """A session whose signup call waits on the user; the id of the call's stream."""
    client = Era2025Client(server, capabilities=ELICITATION)
    (asking,) = client.request("tools/call", {"name": "signup", "arguments": {}}).events or ()
    return client, asking.id.partition(":")[0]


@pytest.mark.parametrize(
    "seen",
    ["²", "٣", "1" * 5000, "1" * 19, "-1", "+1", "1.0", "1 2", " 1", "", "1:1", "0x1"],
    ids=[
        "superscript",
        "arabic-indic",
        "5000 digits",
        "19 digits",
        "negative",
        "plus",
        "fraction",
        "inner space",
        "leading space",
        "empty",
        "two colons",
        "hex",
    ],
)
def test_a_last_event_id_that_is_not_one_the_server_sent_is_unknown(server, seen):
    # str.isdigit() says yes to "²", which int() then refuses: that was a -32603.
    client, stream = a_waiting_call(server)
    assert resume_over_http(server, client.session, f"{stream}:{seen}") == (
        400,
        {"jsonrpc": "2.0", "id": None, "error": UNKNOWN_STREAM},
    )


@pytest.mark.parametrize("seen", ["1", "0", "9" * 18])
def test_a_last_event_id_of_up_to_18_ascii_digits_is_resumed(server, seen):
    client, stream = a_waiting_call(server)
    status, stream_text = resume_over_http(server, client.session, f" {stream}:{seen} ")
    assert status == 200 and f"id: {stream}:" in stream_text


# ---- a session opened anonymously is adopted by the first user who signs in on it --------------------------

PING = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
NOT_FOUND = {"jsonrpc": "2.0", "id": 9, "error": {"code": -32001, "message": "Session not found"}}


def test_a_session_opened_anonymously_becomes_the_first_signed_in_users(server, django_user_model):
    client = Era2025Client(server)
    ada, bob = django_user_model(pk=1, username="ada"), django_user_model(pk=2, username="bob")
    assert server.handle(PING, headers=client.headers, user=ada).status == 200
    # Now it is Ada's: nobody and Bob are told it does not exist, Ada goes on in it.
    assert server.handle(PING, headers=client.headers) == Reply(404, NOT_FOUND)
    assert server.handle(PING, headers=client.headers, user=bob) == Reply(404, NOT_FOUND)
    assert server.handle(PING, headers=client.headers, user=ada).status == 200
    assert era2025.end(server, client.headers, bob, server.sessions).status == 404


def test_a_users_session_never_becomes_anonymous(server, django_user_model):
    ada = django_user_model(pk=1, username="ada")
    opened = initialize(server, user=ada)
    headers = {"mcp-session-id": opened.headers["Mcp-Session-Id"]}
    assert server.handle(PING, headers=headers) == Reply(404, NOT_FOUND)
    assert server.handle(PING, headers=headers, user=ada).status == 200


def test_what_was_asked_anonymously_does_not_go_on_once_a_user_adopts_the_session(server, django_user_model):
    client, stream = a_waiting_call(server)
    ada = django_user_model(pk=1, username="ada")
    accepted = {"action": "accept", "content": {"email": "ada@example.com", "plan": "pro"}}
    answer = {"jsonrpc": "2.0", "id": f"{stream}-1", "result": accepted}
    # Ada's answer to the question asked of nobody adopts the session, and answers nothing.
    assert server.handle(answer, headers=client.headers, user=ada) == Reply(202)
    resumed = era2025.resume(server, client.headers, f"{stream}:1", ada, server.sessions)
    assert (resumed.status, resumed.body) == (400, {"jsonrpc": "2.0", "id": None, "error": UNKNOWN_STREAM})
    assert server.handle(answer, headers=client.headers).status == 404  # nor may nobody answer it now
    # Ada's own calls in the session are asked anew, as her.
    asked = server.handle(
        {"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "signup", "arguments": {}}},
        headers=client.headers,
        user=ada,
    )
    assert asked.status == 200 and asked.events


@override_settings(MCPFORMS={"ALLOW_ANONYMOUS": True, "SESSIONS_PER_PRINCIPAL": 1})
def test_a_user_at_their_session_budget_does_not_adopt_another_session(server, django_user_model):
    ada = django_user_model(pk=1, username="ada")
    assert initialize(server, user=ada).status == 200
    client = Era2025Client(server)
    assert_over_budget(server.handle(PING, headers=client.headers, user=ada), "SESSIONS_PER_PRINCIPAL")
    assert_over_budget(
        era2025.resume(server, client.headers, "c:1", ada, server.sessions), "SESSIONS_PER_PRINCIPAL"
    )
    # Refused, the session stays its anonymous opener's.
    assert server.handle(PING, headers=client.headers).status == 200


def test_an_initialize_sent_as_a_notification_is_an_invalid_request():
    # Found by the fuzz test: the handshake needs an answer, and a notification gets none.
    notification = {"jsonrpc": "2.0", "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}
    reply = Server().handle(notification)
    assert reply.status == 400 and reply.body is not None
    assert reply.body["error"]["code"] == -32600
    assert "initialize is a request" in reply.body["error"]["message"]
