"""The 2025 era's session stores: every worker sees the same sessions, and a round's answers complete it
for exactly one of the requests that carry them."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest
from django import forms
from django.contrib.auth.models import AnonymousUser, User
from django.core.cache import cache
from django.core.cache.backends.base import InvalidCacheKey, memcache_key_warnings
from django.core.cache.backends.locmem import LocMemCache
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.test import RequestFactory, override_settings
from django.utils import timezone
from oauth2_provider.models import Application

from mcpforms.api import serve
from mcpforms.models import Era2025Session
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.era2025.sessions import Event, MemorySessions, PendingCall, Session, SessionStore
from mcpforms.protocol.server import Server, default_server
from mcpforms.registry import register
from mcpforms.session_stores import CacheSessions, DatabaseSessions
from mcpforms.tools import FormTool
from tests.forms import SignupForm
from tests.test_oauth import REDIRECT, issue

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


def test_a_resumed_question_lists_its_fields_in_the_forms_order(store):
    """A client shows a form elicitation's fields in the order of its schema's properties; PostgreSQL's
    jsonb would hand a stored event back with its keys re-sorted (shortest first)."""
    session(store)
    call = waiting(store, "dates")
    order = ["departure", "return_date", "budget"]
    fields = {name: {"type": "string"} for name in order}
    question = {
        "jsonrpc": "2.0",
        "id": "c1-2",
        "method": "elicitation/create",
        "params": {"mode": "form", "message": "Dates", "requestedSchema": {"properties": fields}},
    }
    store.save_call(PendingCall(**{**call.__dict__, "events": 2}), (Event(id="c1:2", data=question),))
    found = store.events_after("c1", "s1", 1)
    assert found is not None
    (resumed,) = found[1]
    assert resumed.data is not None
    assert list(resumed.data["params"]["requestedSchema"]["properties"]) == order
    assert list(resumed.data) == list(question)


@override_settings(MCPFORMS={"SESSION_MAX_AGE": 60})
def test_a_database_session_expires():
    store = DatabaseSessions()
    session(store)
    Era2025Session.objects.filter(pk="s1").update(created=timezone.now() - timedelta(seconds=61))
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
    Era2025Session.objects.update(created=timezone.now() - timedelta(minutes=3))
    assert store.count_sessions(principal="anonymous").count == 0
    assert store.get("s1") is None


# ---- ids from the client on memcached ----------------------------------------------------------------------


class MemcachedKeysCache(LocMemCache):
    """A cache that refuses the keys memcached refuses (Django's own only warns about them)."""

    def validate_key(self, key: str) -> None:
        for warning in memcache_key_warnings(key):
            raise InvalidCacheKey(warning)


MEMCACHED_KEYS = {
    "default": {"BACKEND": "tests.test_session_stores.MemcachedKeysCache", "LOCATION": "memcached-keys"}
}
ON_MEMCACHED = override_settings(
    CACHES=MEMCACHED_KEYS,
    MCPFORMS={"ALLOW_ANONYMOUS": True, "SESSION_STORE": "mcpforms.session_stores.CacheSessions"},
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


# ---- a session opened anonymously is adopted by the first user who signs in on it --------------------------


def test_an_anonymous_session_is_adopted_by_the_first_user_with_its_anonymous_calls_dropped(store):
    session(store, address="192.0.2.1")
    waiting(store, "name")
    adopted = store.adopt("s1", "user:1")
    assert adopted is not None and adopted.principal == "user:1"
    assert adopted.address is None  # a user's session is budgeted by its user, not by an address
    assert store.get("s1") == adopted
    # What was asked as nobody does not go on as the user: the anonymous call is gone.
    assert store.events_after("c1", "s1", 0) is None
    assert store.answer("s1", "c1-1", {"action": "accept", "content": {"name": "Ada"}}) is None
    assert store.count_calls("s1").count == 0
    # The session moved from the anonymous budgets to the user's.
    assert store.count_sessions(principal="anonymous").count == 0
    assert store.count_sessions(principal="anonymous", address="192.0.2.1").count == 0
    assert store.count_sessions(principal="user:1").count == 1
    # The user's own calls from now on are kept and counted.
    waiting(store, "name", call_id="c2")
    assert store.events_after("c2", "s1", 0) is not None
    assert store.count_calls("s1").count == 1
    assert store.end("s1") is True
    assert store.count_sessions(principal="user:1").count == 0


def test_an_adopted_session_is_its_users_for_good(store):
    session(store)
    assert store.adopt("s1", "user:1") is not None
    waiting(store, "name")
    assert store.adopt("s1", "user:2") is None  # the other user lost the race
    assert store.adopt("s1", "anonymous") is None  # never anonymous again
    again = store.adopt("s1", "user:1")  # the same user's request that raced its own: still theirs
    assert again is not None and again.principal == "user:1"
    found = store.get("s1")
    assert found is not None and found.principal == "user:1"
    assert store.events_after("c1", "s1", 0) is not None  # nor did the repeat drop the user's call


def test_nobody_adopts_and_a_users_session_and_an_unknown_one_are_never_adopted(store):
    session(store, "s0")
    waiting(store, "name", call_id="c0", session_id="s0")
    assert store.adopt("s0", "anonymous") is None  # nobody adopts: what nobody asked stays
    assert store.events_after("c0", "s0", 0) is not None
    session(store, principal="user:1")
    waiting(store, "name")
    assert store.adopt("s1", "user:2") is None
    assert store.adopt("s1", "anonymous") is None
    assert store.adopt("nope", "user:2") is None
    found = store.get("s1")
    assert found is not None and found.principal == "user:1"
    assert store.events_after("c1", "s1", 0) is not None
    assert store.count_sessions(principal="user:2").count == 0


@override_settings(MCPFORMS={"SESSION_MAX_AGE": 60})
def test_an_expired_session_is_not_adopted(store, monkeypatch):
    session(store)
    later = time.time() + 3 * 60
    monkeypatch.setattr(time, "time", lambda: later)
    Era2025Session.objects.update(created=timezone.now() - timedelta(minutes=3))
    assert store.adopt("s1", "user:1") is None
    assert store.count_sessions(principal="user:1").count == 0


@pytest.mark.parametrize("made", [MemorySessions, CacheSessions])
def test_of_users_adopting_one_session_at_once_exactly_one_wins(made):
    cache.clear()
    racing: SessionStore = made()
    session(racing)
    start = threading.Barrier(8)

    def adopt(user: int) -> str | None:
        start.wait()
        adopted = racing.adopt("s1", f"user:{user}")
        return adopted.principal if adopted is not None else None

    with ThreadPoolExecutor(max_workers=8) as pool:
        won = [principal for principal in pool.map(adopt, range(8)) if principal is not None]
    found = racing.get("s1")
    assert len(won) == 1 and found is not None and found.principal == won[0]
    assert sum(racing.count_sessions(principal=f"user:{user}").count for user in range(8)) == 1


def test_a_stale_write_of_a_cached_session_does_not_make_an_adopted_one_anonymous_again():
    cache.clear()
    cached = CacheSessions()
    opened = session(cached)
    stale = cache.get(cached._key("session", "s1"))
    assert cached.adopt("s1", "user:1") is not None
    # A worker that read the session before the adoption writes it back (set_log_level does so).
    cache.set(cached._key("session", "s1"), stale)
    found = cached.get("s1")
    assert found is not None and found.principal == "user:1" and found.id == opened.id


# ---- over HTTP: an anonymous client meets the 401, signs in and goes on in the same session ----------------

OAUTH = override_settings(
    MCPFORMS={
        "AUTHENTICATION": ["mcpforms.auth.AccessTokenAuth", "mcpforms.oauth.OAuth2Auth"],
        "BASE_URL": "http://testserver",
    },
    OAUTH2_PROVIDER={"SCOPES": {"mcp": "Use this site's forms"}, "DEFAULT_SCOPES": ["mcp"]},
)
STORES = {"memory": MemorySessions, "cache": CacheSessions, "database": DatabaseSessions}


class MembersTool(FormTool):
    """A form only a signed-in user may fill; it says whose it was."""

    form_class = SignupForm
    name = "members"

    def handle(self, request: RequestContext, form: forms.BaseForm) -> Any:
        return {"plan": form.cleaned_data["plan"], "principal": request.principal}


def signing_in_server(store: SessionStore) -> Server:
    """Anonymous callers get in (for "signup"); "members" needs a user."""
    server = Server(key="signing-in", allow_anonymous=["signup"], sessions=store)
    register(SignupForm, server=server, name="signup")
    register(MembersTool, server=server)
    return server


def post_2025(
    server: Server, body: dict[str, Any], *, session: str | None, token: str | None
) -> HttpResponse:
    headers: dict[str, Any] = {"HTTP_MCP_PROTOCOL_VERSION": "2025-11-25"}
    if session is not None:
        headers["HTTP_MCP_SESSION_ID"] = session
    if token is not None:
        headers["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    request = RequestFactory().post("/mcp", json.dumps(body), content_type="application/json", **headers)
    request.user = AnonymousUser()
    response = serve(server, request)
    assert isinstance(response, HttpResponse), response
    return response


@OAUTH
@pytest.mark.django_db(transaction=True)  # the call runs on a worker thread, which sees committed rows only
@pytest.mark.parametrize("made", STORES.values(), ids=STORES.keys())
def test_a_client_that_signs_in_goes_on_in_the_session_it_opened_anonymously(made):
    cache.clear()
    server = signing_in_server(made())
    application = Application.objects.create(
        name="An MCP client",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=REDIRECT,
        skip_authorization=True,
    )
    ada, bob = User.objects.create_user("ada"), User.objects.create_user("bob")
    ada_token = issue(application, ada, resource="http://testserver/mcp")
    bob_token = issue(application, bob, resource="http://testserver/mcp")
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "signs-in-later", "version": "1"},
    }
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    opened = post_2025(server, initialize, session=None, token=None)
    assert opened.status_code == 200, opened.content
    session = opened["Mcp-Session-Id"]
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"} | {
        "params": {"name": "members", "arguments": {"email": "ada@example.com", "plan": "pro"}}
    }

    refused = post_2025(server, call, session=session, token=None)
    assert refused.status_code == 401, refused.content
    assert refused["WWW-Authenticate"].startswith('Bearer realm="mcp", resource_metadata=')

    # The client signs in and sends the same request again, in the same session: it runs as Ada.
    answered = post_2025(server, call, session=session, token=ada_token)
    assert answered.status_code == 200, answered.content
    assert json_of(answered)["result"]["structuredContent"] == {"plan": "pro", "principal": f"user:{ada.pk}"}

    # From now on the session is Ada's: neither nobody nor Bob may name it.
    ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
    anonymous = post_2025(server, ping, session=session, token=None)
    assert (anonymous.status_code, json_of(anonymous)) == (404, NOT_FOUND | {"id": 3})
    other = post_2025(server, ping, session=session, token=bob_token)
    assert (other.status_code, json_of(other)) == (404, NOT_FOUND | {"id": 3})
    assert post_2025(server, ping, session=session, token=ada_token).status_code == 200
