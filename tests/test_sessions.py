"""The 2025 era's session stores: every worker sees the same sessions, and a round's answers complete it
for exactly one of the requests that carry them."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from mcpforms.models import LegacySession
from mcpforms.protocol.sessions import Event, MemorySessions, PendingCall, Session, SessionStore
from mcpforms.sessions import CacheSessions, DatabaseSessions

pytestmark = pytest.mark.django_db


@pytest.fixture(params=[DatabaseSessions, CacheSessions, MemorySessions])
def store(request) -> SessionStore:
    from django.core.cache import cache

    cache.clear()
    made: SessionStore = request.param()
    return made


def session(store: SessionStore, session_id: str = "s1") -> Session:
    opened = Session(
        id=session_id,
        version="2025-11-25",
        capabilities={"elicitation": {}},
        client_info={"name": "c", "version": "1"},
        principal="anonymous",
    )
    store.create(opened)
    return opened


def waiting(store: SessionStore, *keys: str) -> PendingCall:
    call = PendingCall(
        id="c1",
        session="s1",
        request_id=7,
        method="tools/call",
        params={"name": "signup"},
        request_state="state",
        asked={f"c1-{n}": key for n, key in enumerate(keys, 1)},
        events=len(keys),
    )
    events = tuple(Event(id=f"c1:{n}", data={"id": f"c1-{n}"}) for n in range(1, len(keys) + 1))
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
