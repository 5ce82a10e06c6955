"""What the 2025 era keeps between requests: sessions, and the calls that wait on the client's answers.

A 2025-11-25 client opens a session with ``initialize`` and sends every later request with its
``Mcp-Session-Id``; when a tool needs the user, the server sends ``elicitation/create`` as a request of its
own on the call's SSE stream, closes the stream (SEP-1699) and continues when the client POSTs the answer.
Any worker may serve any of those requests, so all of it lives in a ``SessionStore``, never in a process:
``mcpforms.session_stores`` keeps it in the database or Django's cache; ``MemorySessions`` here serves one
process (tests, a single stdio client).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from django.utils.module_loading import import_string

from mcpforms.conf import conf
from mcpforms.protocol.state import ANONYMOUS


def new_id() -> str:
    """A random id of visible ASCII, as a session id must be (2025-11-25, Streamable HTTP)."""
    return secrets.token_hex(16)


@dataclass(frozen=True)
class Session:
    """One 2025-era connection: what ``initialize`` negotiated, whose it is and on which server.

    ``server`` is the key of the server that opened it (``Offering.key``): no other server knows it.
    ``address`` is the budget scope of the client address an anonymous session was opened from
    (``mcpforms.protocol.budgets``), None when the transport has none (stdio) or the caller is a user.
    """

    id: str
    version: str
    capabilities: Mapping[str, Any]
    client_info: Mapping[str, Any] | None
    principal: str
    server: str
    address: str | None = None
    log_level: str | None = None


@dataclass(frozen=True)
class Tally:
    """How many live sessions (or pending calls) a store holds for a scope, and when the oldest of them
    was made (a POSIX time; None when there is none): a place frees up when it expires, at the latest."""

    count: int
    oldest: float | None = None


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


def _tally(times: list[float]) -> Tally:
    return Tally(len(times), min(times) if times else None)


class SessionStore(Protocol):
    """Where sessions and pending calls live. Every method is safe to call from any worker at once."""

    def create(self, session: Session) -> None: ...

    def get(self, session_id: str) -> Session | None:
        """The live session, or None when it never existed or has ended."""

    def end(self, session_id: str) -> bool:
        """End a session; False when there was none to end."""

    def set_log_level(self, session_id: str, level: str) -> None: ...

    def adopt(self, session_id: str, principal: str) -> Session | None:
        """Make the anonymous session ``session_id`` the user ``principal``'s, and drop the calls it holds;
        return the session as it now is (``address`` None: a user is budgeted alone). ``principal`` is a
        user's, never ``ANONYMOUS`` (which adopts nothing: None).

        This is how a 2025 client signs in: its anonymous ``tools/call`` got a 401, and it sends the same
        request again, with its token, in the same session (``mcpforms.protocol.era2025.shim``). Only the
        first adoption wins, atomically: None when the session is gone, or is another user's (the one who won
        a race), and never from a user to nobody or to someone else. A repeat for the user who holds it
        returns it unchanged (two requests of theirs raced) and drops nothing.

        Safe because a session id is a 128-bit secret the client got from our ``initialize``: a caller
        who names it either opened it or was handed it. One who plants an anonymous session on a victim
        gains nothing: once the victim adopts it, the attacker's anonymous requests naming it get 404,
        and the calls the attacker made in it are dropped, so nothing asked as nobody goes on as the
        user."""

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

    def count_sessions(self, *, principal: str, address: str | None = None) -> Tally:
        """The live sessions of ``principal`` (opened from ``address`` too, when given), for the budgets
        (``mcpforms.protocol.budgets``); an ended or expired session is not counted."""

    def count_calls(self, session_id: str) -> Tally:
        """The pending calls the session holds within ``STATE_MAX_AGE`` of their start, done or not (a done
        one keeps its stream for the client to read back)."""


class MemorySessions:
    """A ``SessionStore`` in this process's memory: for tests and a single process, never a deployment of
    several workers (``mcpforms.session_stores`` has those)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sessions: dict[str, Session] = {}
        self._calls: dict[str, PendingCall] = {}
        self._events: dict[str, list[Event]] = {}
        # When each was made: a long-lived process forgets expired ones, as the shared stores do.
        self._opened: dict[str, float] = {}
        self._started: dict[str, float] = {}

    def _forget_expired(self) -> None:
        now = time.time()
        for session_id, opened in list(self._opened.items()):
            if opened < now - conf.SESSION_MAX_AGE:
                self._sessions.pop(session_id, None)
                del self._opened[session_id]
        for call_id, started in list(self._started.items()):
            if started < now - conf.STATE_MAX_AGE or self._calls[call_id].session not in self._sessions:
                del self._calls[call_id], self._started[call_id]
                self._events.pop(call_id, None)

    def create(self, session: Session) -> None:
        with self._lock:
            self._forget_expired()
            self._sessions[session.id] = session
            self._opened[session.id] = time.time()

    def get(self, session_id: str) -> Session | None:
        opened = self._opened.get(session_id)
        if opened is None or opened < time.time() - conf.SESSION_MAX_AGE:
            return None
        return self._sessions.get(session_id)

    def end(self, session_id: str) -> bool:
        with self._lock:
            self._opened.pop(session_id, None)
            return self._sessions.pop(session_id, None) is not None

    def adopt(self, session_id: str, principal: str) -> Session | None:
        with self._lock:
            session = self.get(session_id)
            if session is None or principal == ANONYMOUS:
                return None
            if session.principal != ANONYMOUS:
                return session if session.principal == principal else None
            adopted = self._sessions[session_id] = replace(session, principal=principal, address=None)
            for call_id in [call.id for call in self._calls.values() if call.session == session_id]:
                del self._calls[call_id], self._started[call_id]
                self._events.pop(call_id, None)
            return adopted

    def count_sessions(self, *, principal: str, address: str | None = None) -> Tally:
        with self._lock:
            self._forget_expired()
            return _tally(
                [
                    self._opened[session.id]
                    for session in self._sessions.values()
                    if session.principal == principal and (address is None or session.address == address)
                ]
            )

    def count_calls(self, session_id: str) -> Tally:
        with self._lock:
            self._forget_expired()
            return _tally(
                [self._started[call.id] for call in self._calls.values() if call.session == session_id]
            )

    def set_log_level(self, session_id: str, level: str) -> None:
        with self._lock:
            if session_id in self._sessions:
                self._sessions[session_id] = replace(self._sessions[session_id], log_level=level)

    def save_call(self, call: PendingCall, events: tuple[Event, ...] = ()) -> None:
        with self._lock:
            self._started.setdefault(call.id, time.time())
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
