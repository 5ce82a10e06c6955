"""The stdio edge: the same protocol core over newline-delimited JSON-RPC on stdin and stdout.

``manage.py mcpforms_stdio`` runs it, so that a desktop host which launches a command can use a project's
forms. One process is one connection. A 2026-07-28 client sends its ``_meta`` envelope on every request
(stdio has no headers). A 2025-era client opens with ``initialize``, and the process is then that one
session, kept in memory for as long as it runs: what a call's stream carries over HTTP (``elicitation/
create``, then the result) is written to stdout as it comes, and the client's answers arrive on stdin.

stdout carries JSON-RPC messages and nothing else, one per line; logs and anything else go to stderr.
"""

from __future__ import annotations

import logging
import os
import queue
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, redirect_stdout
from typing import IO, Any, Protocol

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.db import DatabaseError, close_old_connections, connections, reset_queries

from mcpforms.conf import conf
from mcpforms.protocol.era2025 import shim as era2025
from mcpforms.protocol.era2025.sessions import Event, MemorySessions
from mcpforms.protocol.errors import INTERNAL_ERROR, INVALID_REQUEST, ProtocolError
from mcpforms.protocol.jsonrpc import RequestId, decode, encode, error_response, readable_id, result_response
from mcpforms.protocol.reply import Reply
from mcpforms.protocol.server import Server
from mcpforms.protocol.versions import SESSION_HEADER, era_of

logger = logging.getLogger(__name__)

Caller = Callable[[], Any]
"""Who is calling, asked again for every message: a user, ``AnonymousUser``, or None once refused."""

_EOF = object()


class LineSource(Protocol):
    """What ``serve`` reads: ``sys.stdin.buffer``, or anything else with its ``readline``."""

    def readline(self, size: int = -1, /) -> bytes: ...


class Refused(Exception):
    """The process may not serve as the caller it was asked to be."""


def caller_for(username: str | None) -> Caller:
    """Return the caller of a process started with ``--user username`` (None: anonymous).

    Raise ``Refused`` for an unknown or inactive user, and for an anonymous caller when
    ``MCPFORMS['ALLOW_ANONYMOUS']`` is False: stdio applies the same rule as HTTP.
    """
    if username is None:
        if not conf.ALLOW_ANONYMOUS:
            raise Refused(
                "Anonymous callers are not allowed (MCPFORMS['ALLOW_ANONYMOUS'] is False): "
                "pass --user USERNAME to act as that user."
            )
        return AnonymousUser
    manager = get_user_model()._default_manager
    try:
        user = manager.get_by_natural_key(username)
    except get_user_model().DoesNotExist:
        raise Refused(f"No user named {username!r}.") from None
    except DatabaseError as error:
        raise Refused(f"Could not read the user {username!r} ({error}); has `migrate` run?") from None
    if not user.is_active:
        raise Refused(f"The user {username!r} is inactive: only an active user can call.")
    pk = user.pk

    def current() -> Any:
        # Read for every message, as HTTP reads the caller of every request: a user made inactive while
        # the process runs is no longer served, and a changed permission applies at once (has_perm caches
        # the permissions on the user object).
        found = manager.filter(pk=pk).first()
        return found if found is not None and found.is_active else None

    return current


@contextmanager
def protocol_stdout() -> Iterator[IO[bytes]]:
    """Keep this process's stdout for JSON-RPC alone: yield it as a binary stream, and send whatever else
    would be written there (``print``, a logging handler made for ``sys.stdout``, a C library writing to
    file descriptor 1) to stderr until the block ends."""
    sys.stdout.flush()
    messages = os.fdopen(os.dup(1), "wb")
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        with redirect_stdout(sys.stderr):
            yield messages
    finally:
        sys.stdout.flush()  # a stray write still buffered goes to stderr, where fd 1 points until now
        os.dup2(saved, 1)
        os.close(saved)
        messages.close()


def serve(server: Server, *, caller: Caller, stdin: LineSource, stdout: IO[bytes]) -> None:
    """Answer the messages on ``stdin`` until it ends, writing one JSON-RPC message a line to ``stdout``."""
    connection = _Connection(server, caller, stdout)
    inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
    reader = threading.Thread(target=connection.read, args=(stdin, inbox), name="mcpforms-stdin", daemon=True)
    reader.start()
    try:
        while True:
            try:
                item = inbox.get(timeout=connection.poll_interval())
            except queue.Empty:
                connection.poll()
                continue
            if item is _EOF:
                return
            connection.receive(item)
    except BrokenPipeError:
        logger.info("The client closed stdout; stopping")
    finally:
        connections.close_all()


class _Connection:
    """One client on stdin and stdout: its 2025-era session, if it opened one, and the calls whose stream
    is still open (each waits on the client's answer or on a URL-mode page)."""

    def __init__(self, server: Server, caller: Caller, output: IO[bytes]) -> None:
        self.server = server
        self.caller = caller
        self.output = output
        self.sessions = MemorySessions()  # the one session lives and ends with the process
        self.session_id: str | None = None
        self.writing = threading.Lock()
        self.lock = threading.Lock()  # guards `cancelled`, which the reader thread adds to
        # Request ids the client cancelled (the reader adds them at once, so that even the request that
        # is running sends nothing more); forgotten once the cancellation is processed in turn.
        self.cancelled: set[RequestId] = set()
        # The client's request id of each open 2025-era call → the last event id of its stream.
        self.streams: dict[RequestId, str] = {}
        # The id of each request the server sent → the client's request it belongs to.
        self.asked: dict[str, RequestId] = {}

    # The reader thread ----------------------------------------------------------------------------------

    def read(self, stdin: LineSource, inbox: queue.SimpleQueue[Any]) -> None:
        """Decode each line of ``stdin`` onto ``inbox``, a ``ProtocolError`` for a line that is not JSON;
        then ``_EOF``."""
        limit = conf.MAX_BODY_BYTES
        try:
            while line := stdin.readline(limit + 1):
                if len(line.rstrip(b"\r\n")) > limit:
                    while line and not line.endswith(b"\n"):  # skip the rest of it
                        line = stdin.readline(limit + 1)
                    inbox.put(ProtocolError(INVALID_REQUEST, _too_large(limit)))
                    continue
                if not line.strip():
                    continue
                try:
                    payload = decode(line)
                except ProtocolError as error:
                    inbox.put(error)
                    continue
                cancelled = _cancelled_id(payload) if _method(payload) == "notifications/cancelled" else None
                if cancelled is not None:
                    with self.lock:
                        self.cancelled.add(cancelled)
                inbox.put(payload)
        except Exception:
            logger.exception("Reading stdin failed")
        finally:
            inbox.put(_EOF)

    # The main thread ------------------------------------------------------------------------------------

    def poll_interval(self) -> float | None:
        """How long to wait for the client before looking at the open calls again: a 2025-era call whose
        user went to a URL-mode page continues when the page is done, which only a look finds out."""
        return conf.RETRY_MS / 1000 if self.streams else None

    def poll(self) -> None:
        with _request_cycle():
            for request_id in list(self.streams):
                self._resume(request_id)

    def receive(self, item: Any) -> None:
        if isinstance(item, ProtocolError):
            self.send(error_response(None, item))  # a line that is no JSON has no id to echo
            return
        with _request_cycle():
            self._receive(item)

    def _receive(self, payload: Any) -> None:
        method = _method(payload)
        if method is None and isinstance(payload, dict) and ("result" in payload or "error" in payload):
            self._client_answer(payload)
            return
        if method == "notifications/cancelled":
            self._cancel(_cancelled_id(payload))
            return
        request_id = readable_id(payload)
        user = self.caller()
        if user is None:
            if isinstance(payload, dict) and "id" in payload:
                self.send(error_response(request_id, ProtocolError(INVALID_REQUEST, _INACTIVE)))
            return
        if method == "ping" and self.session_id is None and not _modern(payload):
            # Liveness, which a client may check before or without a session (2025-11-25 Lifecycle).
            if request_id is not None:
                self.send(result_response(request_id, {}))
            return

        def notify(message: dict[str, Any]) -> None:
            if not self._is_cancelled(request_id):
                self.send(message)  # progress and log messages go out as they come

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

    def _client_answer(self, payload: dict[str, Any]) -> None:
        """The client's answer to a request of the server's: record it, then write what it led to."""
        answered = payload.get("id")
        request_id = self.asked.pop(answered, None) if isinstance(answered, str) else None
        if request_id is None or request_id not in self.streams:
            logger.warning("Ignored an answer to no open request of this server: id %r", answered)
            return
        user = self.caller()
        if user is None:
            self._forget(request_id)
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
        last = self.streams.get(request_id)
        if user is None or last is None:
            self._forget(request_id)
            return
        reply = era2025.resume(self.server, self._headers() or {}, last, user, self.sessions)
        if reply.events is not None:
            self._stream(reply.events, request_id)
            return
        self._forget(request_id)
        error = reply.body.get("error") if reply.body is not None else None
        logger.error("The call %r could not go on: %s", request_id, error)
        failed = ProtocolError(INTERNAL_ERROR, "Internal error")
        self._write(Reply(200, error_response(request_id, failed)), request_id)

    def _cancel(self, request_id: RequestId | None) -> None:
        """``notifications/cancelled``: the request sends nothing more, whatever its answers still do."""
        self._forget(request_id)
        with self.lock:
            self.cancelled.discard(request_id)

    def _forget(self, request_id: RequestId | None) -> None:
        if request_id is None:
            return
        self.streams.pop(request_id, None)
        for asked, owner in list(self.asked.items()):
            if owner == request_id:
                del self.asked[asked]

    def _is_cancelled(self, request_id: RequestId | None) -> bool:
        with self.lock:
            return request_id is not None and request_id in self.cancelled

    def _headers(self) -> dict[str, str] | None:
        """What stands in for HTTP's ``Mcp-Session-Id``: this connection's session, once it has one."""
        return {SESSION_HEADER: self.session_id} if self.session_id else None

    # Writing ------------------------------------------------------------------------------------------

    def _write(self, reply: Reply, request_id: RequestId | None) -> None:
        if self._is_cancelled(request_id):
            self._forget(request_id)  # a cancelled request gets no response (2025-11-25 Cancellation)
        elif reply.events is not None:
            assert request_id is not None  # only a request's call has a stream
            self._stream(reply.events, request_id)
        elif reply.body is not None:
            self.send(reply.body)

    def _stream(self, events: tuple[Event, ...], request_id: RequestId) -> None:
        """Write a 2025-era call's events: the server's requests, then its response, which ends it."""
        for event in events:
            if self._is_cancelled(request_id):
                self._forget(request_id)
                return
            self.streams[request_id] = event.id
            message = event.data
            if message is None:
                continue  # a keep-alive, which only tells an HTTP client to poll again
            if "method" not in message:
                self._forget(request_id)  # the call's response: its stream is over
            elif isinstance(message.get("id"), str):
                self.asked[message["id"]] = request_id
            self.send(message)

    def send(self, message: Mapping[str, Any]) -> None:
        """Write one message as one line of UTF-8 JSON (which escapes every newline inside strings)."""
        try:
            line = encode(message)
        except ValueError:  # a NaN some handler returned
            logger.exception("Could not write %r as JSON", message.get("method") or message.get("id"))
            if "method" in message or "id" not in message:
                return
            line = encode(error_response(message["id"], ProtocolError(INTERNAL_ERROR, "Internal error")))
        with self.writing:
            self.output.write(line + b"\n")
            self.output.flush()


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


def _method(payload: Any) -> str | None:
    method = payload.get("method") if isinstance(payload, dict) else None
    return method if isinstance(method, str) else None


def _cancelled_id(payload: Any) -> RequestId | None:
    params = payload.get("params") if isinstance(payload, dict) else None
    return readable_id({"id": params.get("requestId")}) if isinstance(params, dict) else None


def _modern(payload: Any) -> bool:
    """Whether the message claims 2026-07-28 in its ``_meta`` (with no session to name, as on HTTP)."""
    return era_of(payload, {}) == "2026"


def _too_large(limit: int) -> str:
    return f"Request too large: a line longer than {limit} bytes (MCPFORMS['MAX_BODY_BYTES'])"


_INACTIVE = "Unauthorized: the user this process acts as no longer exists or is inactive"
