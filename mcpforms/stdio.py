"""The stdio edge: the same protocol core over newline-delimited JSON-RPC on stdin and stdout.

``manage.py mcpforms_stdio`` runs it, so that a desktop host which launches a command can use a project's
forms. One process is one connection. A 2026-07-28 client sends its ``_meta`` envelope on every request
(stdio has no headers). A 2025-era client opens with ``initialize``, and the process is then that one
session, kept in memory for as long as it runs: what a call's stream carries over HTTP (``elicitation/
create``, then the result) is written to stdout as it comes, and the client's answers arrive on stdin.

stdout carries JSON-RPC messages and nothing else, one per line; logs and anything else go to stderr.
This module runs the process (who calls, stdout kept for JSON-RPC, the reader thread, the loop);
``mcpforms.stdio_connection`` answers what the client sends.
"""

from __future__ import annotations

import logging
import os
import queue
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from typing import IO, Any, Protocol

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.db import DatabaseError, connections

from mcpforms.conf import conf
from mcpforms.protocol.errors import INVALID_REQUEST, ProtocolError
from mcpforms.protocol.jsonrpc import decode
from mcpforms.protocol.server import Server
from mcpforms.stdio_connection import Caller, Cancellations, Connection

logger = logging.getLogger(__name__)

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
    connection = Connection(server, caller, stdout)
    inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
    reader = threading.Thread(
        target=_read, args=(stdin, inbox, connection.cancellations), name="mcpforms-stdin", daemon=True
    )
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


def _read(stdin: LineSource, inbox: queue.SimpleQueue[Any], cancellations: Cancellations) -> None:
    """The reader thread: decode each line of ``stdin`` onto ``inbox``, a ``ProtocolError`` for a line that
    is not JSON; then ``_EOF``. A cancellation is noted at once, before the line waits its turn."""
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
            cancellations.note(payload)
            inbox.put(payload)
    except Exception:
        logger.exception("Reading stdin failed")
    finally:
        inbox.put(_EOF)


def _too_large(limit: int) -> str:
    return f"Request too large: a line longer than {limit} bytes (MCPFORMS['MAX_BODY_BYTES'])"
