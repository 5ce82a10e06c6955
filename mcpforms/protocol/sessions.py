"""What the 2025 era keeps between requests: sessions, and the calls that wait on the client's answers.

A 2025-11-25 client opens a session with ``initialize`` and sends every later request with its
``Mcp-Session-Id``; when a tool needs the user, the server sends ``elicitation/create`` as a request of its
own on the call's SSE stream, closes the stream (SEP-1699) and continues when the client POSTs the answer.
Any worker may serve any of those requests, so all of it lives in a ``SessionStore``, never in a process:
``mcpforms.sessions`` keeps it in the database or Django's cache; ``MemorySessions`` here serves one
process (tests, a single stdio client).
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from django.utils.module_loading import import_string

from mcpforms.conf import conf


def new_id() -> str:
    """A random id of visible ASCII, as a session id must be (2025-11-25, Streamable HTTP)."""
    return secrets.token_hex(16)


@dataclass(frozen=True)
class Session:
    """One 2025-era connection: what ``initialize`` negotiated, and whose it is."""

    id: str
    version: str
    capabilities: Mapping[str, Any]
    client_info: Mapping[str, Any] | None
    principal: str
    log_level: str | None = None


@dataclass(frozen=True)
class Event:
    """One SSE event of a call's stream; ``data`` None is an empty event (a priming or keep-alive one)."""

    id: str
    data: Mapping[str, Any] | None = None
    retry_ms: int | None = None


@dataclass(frozen=True)
class PendingCall:
    """A request whose handler asked the client something: the round in flight and what came back.

    ``asked`` maps the id of each request the server sent to the ``inputRequests`` key it answers;
    ``answers`` holds the client's results by key. ``events`` counts the stream's events so far.
    ``pages`` are the asked ids that sent the user to a URL (they double as ``elicitationId``); once the
    user accepted them all, the call is ``waiting`` for the pages to be done, not for the client.
    """

    id: str
    session: str
    request_id: str | int
    method: str
    params: Mapping[str, Any]
    request_state: str | None = None
    asked: Mapping[str, str] = field(default_factory=dict)
    answers: Mapping[str, Any] = field(default_factory=dict)
    events: int = 0
    done: bool = False
    pages: tuple[str, ...] = ()
    waiting: bool = False

    @property
    def complete(self) -> bool:
        """Whether every request of the round has its answer."""
        return bool(self.asked) and set(self.asked.values()) <= set(self.answers)


Stream = tuple[PendingCall, list[Event]]


class SessionStore(Protocol):
    """Where sessions and pending calls live. Every method is safe to call from any worker at once."""

    def create(self, session: Session) -> None: ...

    def get(self, session_id: str) -> Session | None:
        """The live session, or None when it never existed or has ended."""

    def end(self, session_id: str) -> bool:
        """End a session; False when there was none to end."""

    def set_log_level(self, session_id: str, level: str) -> None: ...

    def save_call(self, call: PendingCall, events: tuple[Event, ...] = ()) -> None:
        """Store ``call`` as it now is, and add ``events`` to its stream; an event whose id the stream
        already has is the same event, written by another worker at the same moment, and is skipped."""

    def answer(self, session_id: str, request_id: str, result: Any) -> PendingCall | None:
        """Record the client's answer to the server's request ``request_id``. Return the call when this
        answer completed its round — to exactly one caller, who then runs the next round — else None."""

    def events_after(
        self, call_id: str, session_id: str, seen: int
    ) -> tuple[PendingCall, list[Event]] | None:
        """The call and the events of its stream after the ``seen``-th; None when the call is unknown."""


class MemorySessions:
    """A ``SessionStore`` in this process's memory: for tests and a single process, never a deployment of
    several workers (``mcpforms.sessions`` has those)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sessions: dict[str, Session] = {}
        self._calls: dict[str, PendingCall] = {}
        self._events: dict[str, list[Event]] = {}

    def create(self, session: Session) -> None:
        with self._lock:
            self._sessions[session.id] = session

    def get(self, session_id: str) -> Session | None:
        return self._sessions.get(session_id)

    def end(self, session_id: str) -> bool:
        with self._lock:
            return self._sessions.pop(session_id, None) is not None

    def set_log_level(self, session_id: str, level: str) -> None:
        with self._lock:
            if session_id in self._sessions:
                self._sessions[session_id] = replace(self._sessions[session_id], log_level=level)

    def save_call(self, call: PendingCall, events: tuple[Event, ...] = ()) -> None:
        with self._lock:
            self._calls[call.id] = call
            stream = self._events.setdefault(call.id, [])
            known = {event.id for event in stream}
            stream.extend(event for event in events if event.id not in known)

    def answer(self, session_id: str, request_id: str, result: Any) -> PendingCall | None:
        with self._lock:
            for call in self._calls.values():
                key = call.asked.get(request_id)
                if call.session != session_id or key is None or call.done or key in call.answers:
                    continue
                updated = replace(call, answers={**call.answers, key: result})
                self._calls[call.id] = updated
                return updated if updated.complete else None
        return None

    def events_after(
        self, call_id: str, session_id: str, seen: int
    ) -> tuple[PendingCall, list[Event]] | None:
        call = self._calls.get(call_id)
        if call is None or call.session != session_id:
            return None
        return call, self._events.get(call_id, [])[seen:]


def configured_store() -> SessionStore:
    """The store ``MCPFORMS["SESSION_STORE"]`` names (a dotted path to a class), made once per setting."""
    path = conf.SESSION_STORE
    cached = _stores.get(path)
    if cached is None:
        cached = _stores[path] = import_string(path)()
    return cached


_stores: dict[str, SessionStore] = {}
