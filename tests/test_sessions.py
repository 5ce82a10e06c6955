"""The 2025 era's session stores: every worker sees the same sessions, and a round's answers complete it
for exactly one of the requests that carry them."""

from __future__ import annotations

import json
import time
from datetime import timedelta
from typing import Any

import pytest
from django.core.cache import cache
from django.core.cache.backends.base import InvalidCacheKey, memcache_key_warnings
from django.core.cache.backends.locmem import LocMemCache
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.test import RequestFactory, override_settings
from django.utils import timezone

from mcpforms.api import serve
from mcpforms.models import LegacySession
from mcpforms.protocol.server import default_server
from mcpforms.protocol.sessions import Event, MemorySessions, PendingCall, Session, SessionStore
from mcpforms.sessions import CacheSessions, DatabaseSessions

pytestmark = pytest.mark.django_db


@pytest.fixture(params=[DatabaseSessions, CacheSessions, MemorySessions])
def store(request) -> SessionStore:
    from django.core.cache import cache

    cache.clear()
    made: SessionStore = request.param()
    return made


def session(
    store: SessionStore,
    session_id: str = "s1",
    *,
    principal: str = "anonymous",
    address: str | None = None,
    server: str = "default",
) -> Session:
    opened = Session(
        id=session_id,
        version="2025-11-25",
        capabilities={"elicitation": {}},
        client_info={"name": "c", "version": "1"},
        principal=principal,
        server=server,
        address=address,
    )
    store.create(opened)
    return opened


def waiting(store: SessionStore, *keys: str, call_id: str = "c1", session_id: str = "s1") -> PendingCall:
    call = PendingCall(
        id=call_id,
        session=session_id,
        request_id=7,
        method="tools/call",
        params={"name": "signup"},
        request_state="state",
        asked={f"{call_id}-{n}": key for n, key in enumerate(keys, 1)},
        events=len(keys),
    )
    events = tuple(Event(id=f"{call_id}:{n}", data={"id": f"{call_id}-{n}"}) for n in range(1, len(keys) + 1))
    store.save_call(call, events)
    return call


def test_a_session_is_read_back_and_ended(store):
    opened = session(store)
    assert store.get("s1") == opened
    store.set_log_level("s1", "warning")
    found = store.get("s1")
    assert found is not None and found.log_level == "warning"
    assert store.end("s1") is True
    assert store.get("s1") is None
    assert store.end("s1") is False


def test_the_answer_that_completes_a_round_is_handed_back_once(store):
    session(store)
    waiting(store, "name", "colour")
    assert store.answer("s1", "c1-1", {"action": "accept", "content": {"name": "Ada"}}) is None  # one missing
    assert store.answer("s1", "c1-1", {"action": "accept", "content": {"name": "Eve"}}) is None  # a re-post
    completed = store.answer("s1", "c1-2", {"action": "accept", "content": {"colour": "blue"}})
    assert completed is not None
    assert completed.answers == {
        "name": {"action": "accept", "content": {"name": "Ada"}},
        "colour": {"action": "accept", "content": {"colour": "blue"}},
    }
    assert store.answer("s1", "c1-2", {"action": "decline"}) is None  # the round was claimed already


def test_answers_are_the_sessions_own(store):
    session(store)
    session(store, "s2")
    waiting(store, "name")
    assert store.answer("s2", "c1-1", {"action": "accept"}) is None
    assert store.events_after("c1", "s2", 0) is None


def test_the_stream_is_read_back_after_the_last_event_seen(store):
    session(store)
    call = waiting(store, "name")
    final = Event(id="c1:2", data={"jsonrpc": "2.0", "id": 7, "result": {}})
    store.save_call(PendingCall(**{**call.__dict__, "events": 2, "done": True}), (final,))
    found = store.events_after("c1", "s1", 0)
    assert found is not None
    assert [event.id for event in found[1]] == ["c1:1", "c1:2"]
    after = store.events_after("c1", "s1", 1)
    assert after is not None and after[1] == [final] and after[0].done


@override_settings(MCPFORMS={"SESSION_MAX_AGE": 60})
def test_a_database_session_expires():
    store = DatabaseSessions()
    session(store)
    LegacySession.objects.filter(pk="s1").update(created=timezone.now() - timedelta(seconds=61))
    assert store.get("s1") is None


def test_a_session_keeps_its_server_and_address(store):
    opened = session(store, server="billing", address="192.0.2.1")
    found = store.get("s1")
    assert found is not None and found.server == "billing" and found.address == "192.0.2.1"
    assert found == opened


def test_live_sessions_are_counted_by_principal_and_by_address(store):
    session(store, "s1", address="192.0.2.1")
    session(store, "s2", address="192.0.2.1")
    session(store, "s3", address="192.0.2.2")
    session(store, "s4", principal="user:1", address="192.0.2.1")
    assert store.count_sessions(principal="anonymous").count == 3
    assert store.count_sessions(principal="anonymous", address="192.0.2.1").count == 2
    assert store.count_sessions(principal="user:1").count == 1
    assert store.count_sessions(principal="user:2").count == 0
    tally = store.count_sessions(principal="anonymous", address="192.0.2.2")
    assert tally.count == 1 and tally.oldest is not None and tally.oldest <= time.time()
    store.end("s1")
    store.end("s1")  # ending twice frees one place, not two
    assert store.count_sessions(principal="anonymous", address="192.0.2.1").count == 1
    assert store.count_sessions(principal="anonymous").count == 2


def test_a_sessions_calls_are_counted_once_each(store):
    session(store)
    session(store, "s2")
    call = waiting(store, "name")
    store.save_call(PendingCall(**{**call.__dict__, "events": 2, "done": True}))  # the same call again
    waiting(store, "name", call_id="c2")
    waiting(store, "name", call_id="c3", session_id="s2")
    assert store.count_calls("s1").count == 2
    assert store.count_calls("s2").count == 1
    assert store.count_calls("nope").count == 0


@override_settings(MCPFORMS={"SESSION_MAX_AGE": 60})
def test_an_expired_session_is_counted_no_more(store, monkeypatch):
    session(store)
    assert store.count_sessions(principal="anonymous").count == 1
    later = time.time() + 3 * 60
    monkeypatch.setattr(time, "time", lambda: later)
    LegacySession.objects.update(created=timezone.now() - timedelta(minutes=3))
    assert store.count_sessions(principal="anonymous").count == 0
    assert store.get("s1") is None


# ---- ids from the client on memcached ----------------------------------------------------------------------


class MemcachedKeysCache(LocMemCache):
    """A cache that refuses the keys memcached refuses (Django's own only warns about them)."""

    def validate_key(self, key: str) -> None:
        for warning in memcache_key_warnings(key):
            raise InvalidCacheKey(warning)


MEMCACHED_KEYS = {
    "default": {"BACKEND": "tests.test_sessions.MemcachedKeysCache", "LOCATION": "memcached-keys"}
}
ON_MEMCACHED = override_settings(
    CACHES=MEMCACHED_KEYS,
    MCPFORMS={"ALLOW_ANONYMOUS": True, "SESSION_STORE": "mcpforms.sessions.CacheSessions"},
)
ODD_IDS = ["a b", "x" * 300, "\t", "\x7f", "sessión-ü", "a\nb"]
NOT_FOUND = {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "Session not found"}}


def over_http(method: str, body: dict[str, Any] | None = None, **headers: Any) -> HttpResponseBase:
    factory = RequestFactory()
    if method == "POST":
        request = factory.post("/mcp", json.dumps(body), content_type="application/json", **headers)
    else:
        request = factory.generic(method, "/mcp", **headers)
    return serve(default_server, request)


def json_of(response: HttpResponseBase) -> Any:
    assert isinstance(response, HttpResponse) and response["Content-Type"] == "application/json"
    return json.loads(response.content)


def sse_messages(response: HttpResponseBase) -> list[dict[str, Any]]:
    assert isinstance(response, HttpResponse), response
    assert response["Content-Type"] == "text/event-stream", response.content
    frames = response.content.decode().split("\n\n")
    return [json.loads(frame.split("data: ", 1)[1]) for frame in frames if "data: {" in frame]


def open_session() -> str:
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {"form": {}}},
        "clientInfo": {"name": "t", "version": "1"},
    }
    opened = over_http("POST", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    assert opened.status_code == 200, opened.content  # type: ignore[attr-defined]
    session: str = opened["Mcp-Session-Id"]
    return session


@ON_MEMCACHED
@pytest.mark.parametrize(
    "session_id", ODD_IDS, ids=["space", "300 chars", "tab", "DEL", "non-ASCII", "newline"]
)
def test_a_session_id_the_server_never_minted_is_not_found_on_memcached(session_id):
    cache.clear()
    ping = {"jsonrpc": "2.0", "id": 5, "method": "ping"}
    posted = over_http("POST", ping, HTTP_MCP_SESSION_ID=session_id)
    assert (posted.status_code, json_of(posted)) == (404, NOT_FOUND | {"id": 5})
    resumed = over_http("GET", HTTP_MCP_SESSION_ID=session_id, HTTP_LAST_EVENT_ID="c:1")
    assert (resumed.status_code, json_of(resumed)) == (404, NOT_FOUND)
    ended = over_http("DELETE", HTTP_MCP_SESSION_ID=session_id)
    assert (ended.status_code, json_of(ended)) == (404, NOT_FOUND)


@ON_MEMCACHED
@pytest.mark.parametrize("odd_id", ODD_IDS, ids=["space", "300 chars", "tab", "DEL", "non-ASCII", "newline"])
def test_an_odd_answer_id_or_stream_id_on_memcached_is_no_answer_and_no_stream(odd_id):
    cache.clear()
    session = open_session()
    answer = {"jsonrpc": "2.0", "id": odd_id, "result": {"action": "accept", "content": {}}}
    posted = over_http("POST", answer, HTTP_MCP_SESSION_ID=session)
    assert posted.status_code == 202, posted.content  # type: ignore[attr-defined]
    resumed = over_http("GET", HTTP_MCP_SESSION_ID=session, HTTP_LAST_EVENT_ID=f"{odd_id}:1")
    assert resumed.status_code == 400
    assert json_of(resumed)["error"]["message"] == "Unknown Last-Event-ID: no such stream in this session"


@ON_MEMCACHED
@pytest.mark.django_db(transaction=True)  # the call runs on a worker thread, which sees committed rows only
def test_a_2025_form_flow_completes_on_memcached():
    cache.clear()
    session = open_session()
    params = {"name": "testapp_signup", "arguments": {"plan": "pro"}}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}
    (asking,) = sse_messages(over_http("POST", call, HTTP_MCP_SESSION_ID=session))
    assert asking["method"] == "elicitation/create", asking
    answer = {"jsonrpc": "2.0", "id": asking["id"], "result": {"action": "accept", "content": {}}}
    answer["result"]["content"] = {"email": "ada@example.com"}
    assert over_http("POST", answer, HTTP_MCP_SESSION_ID=session).status_code == 202
    stream = asking["id"].rpartition("-")[0]
    resumed = over_http("GET", HTTP_MCP_SESSION_ID=session, HTTP_LAST_EVENT_ID=f"{stream}:1")
    (final,) = sse_messages(resumed)
    assert final["id"] == 2 and final["result"]["structuredContent"]["email"] == "ada@example.com"
    ended = over_http("DELETE", HTTP_MCP_SESSION_ID=session)
    assert ended.status_code == 200
    ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
    assert over_http("POST", ping, HTTP_MCP_SESSION_ID=session).status_code == 404
