"""One client of ``mcpforms.stdio``: what it sends is answered by era, and what each answer writes to stdout.

The process is the connection, so what HTTP keeps per request lives here for as long as the process runs,
in pieces each about one thing: the ``Writer`` of stdout, the ``Cancellations`` the client sent, and the
``OpenCalls`` of a 2025-era session whose streams are still being written. ``Connection`` composes them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import IO, Any

from django.db import close_old_connections, reset_queries

from mcpforms.conf import conf
from mcpforms.protocol.era2025 import shim as era2025
from mcpforms.protocol.era2025.sessions import Event, MemorySessions
from mcpforms.protocol.errors import INTERNAL_ERROR, INVALID_REQUEST, ProtocolError
from mcpforms.protocol.jsonrpc import (
    RequestId,
    encode,
    error_response,
    is_response,
    method_of,
    readable_id,
    result_response,
)
from mcpforms.protocol.reply import Reply
from mcpforms.protocol.server import Server
from mcpforms.protocol.versions import SESSION_HEADER, era_of

logger = logging.getLogger(__name__)

Caller = Callable[[], Any]
"""Who is calling, asked again for every message: a user, ``AnonymousUser``, or None once refused."""

_INTERNAL = ProtocolError(INTERNAL_ERROR, "Internal error")
_INACTIVE = "Unauthorized: the user this process acts as no longer exists or is inactive"


class Writer:
    """stdout, written one JSON-RPC message a line: whole lines, whichever thread sends."""

    def __init__(self, output: IO[bytes]) -> None:
        self._output = output
        self._lock = threading.Lock()

    def send(self, message: Mapping[str, Any]) -> None:
        """Write one message as one line of UTF-8 JSON (which escapes every newline inside strings)."""
        try:
            line = encode(message)
        except ValueError:  # a NaN some handler returned
            logger.exception("Could not write %r as JSON", message.get("method") or message.get("id"))
            if "method" in message or "id" not in message:
                return
            line = encode(error_response(message["id"], _INTERNAL))
        with self._lock:
            self._output.write(line + b"\n")
            self._output.flush()


def cancelled_request(payload: Any) -> RequestId | None:
    """The request a ``notifications/cancelled`` names; None for any other message, or one naming none."""
    if method_of(payload) != "notifications/cancelled":
        return None
    params = payload.get("params")
    return readable_id({"id": params.get("requestId")}) if isinstance(params, dict) else None


class Cancellations:
    """The requests the client cancelled, which send nothing more (2025-11-25 Cancellation).

    The reader thread notes a cancellation as soon as its line arrives, so that even the request running
    at that moment stops writing; the main thread forgets it once it processes the cancellation in turn.
    """

    def __init__(self) -> None:
        self._ids: set[RequestId] = set()
        self._lock = threading.Lock()

    def note(self, payload: Any) -> None:
        """Note the request ``payload`` cancels, when it is a ``notifications/cancelled``."""
        request_id = cancelled_request(payload)
        if request_id is not None:
            with self._lock:
                self._ids.add(request_id)

    def forget(self, request_id: RequestId | None) -> None:
        if request_id is not None:
            with self._lock:
                self._ids.discard(request_id)

    def __contains__(self, request_id: object) -> bool:
        with self._lock:
            return request_id is not None and request_id in self._ids


class OpenCalls:
    """The 2025-era calls whose stream is still open, each waiting on the client's answer or on a URL-mode
    page: how far its stream was written, and which of the server's requests belong to it."""

    def __init__(self) -> None:
        self._written: dict[RequestId, str] = {}  # the client's request id → the last event id written
        self._asked: dict[str, RequestId] = {}  # the id of a request the server sent → its call's

    def __bool__(self) -> bool:
        return bool(self._written)

    def ids(self) -> list[RequestId]:
        return list(self._written)

    def last_event(self, request_id: RequestId) -> str | None:
        return self._written.get(request_id)

    def wrote(self, request_id: RequestId, event_id: str) -> None:
        self._written[request_id] = event_id

    def asked(self, asked_id: str, request_id: RequestId) -> None:
        """The server sent the request ``asked_id`` on the stream of the call ``request_id``."""
        self._asked[asked_id] = request_id

    def answered(self, asked_id: Any) -> RequestId | None:
        """The open call that an answer to ``asked_id`` belongs to, once: None for a second answer, and
        for an id the server never sent or whose call is over."""
        request_id = self._asked.pop(asked_id, None) if isinstance(asked_id, str) else None
        return request_id if request_id is not None and request_id in self._written else None

    def forget(self, request_id: RequestId | None) -> None:
        if request_id is None:
            return
        self._written.pop(request_id, None)
        for asked, owner in list(self._asked.items()):
            if owner == request_id:
                del self._asked[asked]


class Connection:
    """One client on stdin and stdout: each message answered in its era, its 2025-era session if it opened
    one (the process is that one session), and each reply written unless its request was cancelled."""

    def __init__(self, server: Server, caller: Caller, output: IO[bytes]) -> None:
        self.server = server
        self.caller = caller
        self.writer = Writer(output)
        self.cancellations = Cancellations()
        self.calls = OpenCalls()
        self.sessions = MemorySessions()  # the one session lives and ends with the process
        self.session_id: str | None = None

    def poll_interval(self) -> float | None:
        """How long to wait for the client before looking at the open calls again: a 2025-era call whose
        user went to a URL-mode page continues when the page is done, which only a look finds out."""
        return conf.RETRY_MS / 1000 if self.calls else None

    def poll(self) -> None:
        with _request_cycle():
            for request_id in self.calls.ids():
                self._resume(request_id)

    def receive(self, item: Any) -> None:
        """Answer one decoded message, or refuse a line that was none (a ``ProtocolError``)."""
        if isinstance(item, ProtocolError):
            self.writer.send(error_response(None, item))  # a line that is no JSON has no id to echo
            return
        with _request_cycle():
            self._receive(item)

    def _receive(self, payload: Any) -> None:
        if is_response(payload):
            self._client_answer(payload)
            return
        if method_of(payload) == "notifications/cancelled":
            self._cancel(cancelled_request(payload))
            return
        request_id = readable_id(payload)
        user = self.caller()
        if user is None:
            if isinstance(payload, dict) and "id" in payload:
                self.writer.send(error_response(request_id, ProtocolError(INVALID_REQUEST, _INACTIVE)))
            return
        if method_of(payload) == "ping" and self.session_id is None and era_of(payload, {}) != "2026":
            # Liveness, which a client may check before or without a session (2025-11-25 Lifecycle); one
            # that claims 2026-07-28 in its `_meta` is the core's to answer.
            if request_id is not None:
                self.writer.send(result_response(request_id, {}))
            return

        def notify(message: dict[str, Any]) -> None:
            if request_id not in self.cancellations:
                self.writer.send(message)  # progress and log messages go out as they come

        headers = self._headers()
        if era_of(payload, headers) == "2025":
            reply = era2025.handle(
                self.server, payload, headers=headers, user=user, notify=notify, sessions=self.sessions
            )
            session_id = reply.headers.get("Mcp-Session-Id")
            if session_id:
                self.session_id = session_id
        else:
            reply = self.server.handle(payload, headers=None, user=user, notify=notify)
        self._write(reply, request_id)

    def _client_answer(self, payload: Mapping[str, Any]) -> None:
        """The client's answer to a request of the server's: record it, then write what it led to."""
        answered = payload.get("id")
        request_id = self.calls.answered(answered)
        if request_id is None:
            logger.warning("Ignored an answer to no open request of this server: id %r", answered)
            return
        user = self.caller()
        if user is None:
            self.calls.forget(request_id)
            return
        reply = era2025.handle(
            self.server, payload, headers=self._headers(), user=user, notify=None, sessions=self.sessions
        )
        if reply.body is not None:  # never written back: nobody answers an answer
            logger.warning("The answer %r was refused: %s", answered, reply.body.get("error"))
        self._resume(request_id)

    def _resume(self, request_id: RequestId) -> None:
        """Write what the call's stream holds after what was written of it."""
        user = self.caller()
        last = self.calls.last_event(request_id)
        if user is None or last is None:
            self.calls.forget(request_id)
            return
        reply = era2025.resume(self.server, self._headers() or {}, last, user, self.sessions)
        if reply.events is not None:
            self._stream(reply.events, request_id)
            return
        self.calls.forget(request_id)
        error = reply.body.get("error") if reply.body is not None else None
        logger.error("The call %r could not go on: %s", request_id, error)
        self._write(Reply(200, error_response(request_id, _INTERNAL)), request_id)

    def _cancel(self, request_id: RequestId | None) -> None:
        """``notifications/cancelled``: the request sends nothing more, whatever its answers still do."""
        self.calls.forget(request_id)
        self.cancellations.forget(request_id)

    def _headers(self) -> dict[str, str] | None:
        """What stands in for HTTP's ``Mcp-Session-Id``: this connection's session, once it has one."""
        return {SESSION_HEADER: self.session_id} if self.session_id else None

    def _write(self, reply: Reply, request_id: RequestId | None) -> None:
        if request_id in self.cancellations:
            self.calls.forget(request_id)  # a cancelled request gets no response (2025-11-25 Cancellation)
        elif reply.events is not None:
            assert request_id is not None  # only a request's call has a stream
            self._stream(reply.events, request_id)
        elif reply.body is not None:
            self.writer.send(reply.body)

    def _stream(self, events: tuple[Event, ...], request_id: RequestId) -> None:
        """Write a 2025-era call's events: the server's requests, then its response, which ends it."""
        for event in events:
            if request_id in self.cancellations:
                self.calls.forget(request_id)
                return
            self.calls.wrote(request_id, event.id)
            message = event.data
            if message is None:
                continue  # a keep-alive, which only tells an HTTP client to poll again
            if "method" not in message:
                self.calls.forget(request_id)  # the call's response: its stream is over
            elif isinstance(message.get("id"), str):
                self.calls.asked(message["id"], request_id)
            self.writer.send(message)


@contextmanager
def _request_cycle() -> Iterator[None]:
    """What Django's request cycle does around each request, for a process that may run for days: no query
    log growing forever under DEBUG, no connection kept past ``CONN_MAX_AGE`` or after it broke."""
    reset_queries()
    close_old_connections()
    try:
        yield
    finally:
        close_old_connections()
