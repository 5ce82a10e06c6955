"""``Reply``: what the core hands a transport for one message, and the one way a refusal becomes one."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcpforms.protocol.era2025.sessions import Event
from mcpforms.protocol.errors import ProtocolError, failure, status_of
from mcpforms.protocol.jsonrpc import RequestId, error_response, readable_id


@dataclass(frozen=True)
class Reply:
    """An HTTP-style status and a JSON-RPC body, or no body at all (202).

    ``headers`` are for the transport to send along (the 2025 era's ``Mcp-Session-Id``). ``events``, when
    set, replace the body: an SSE stream of those events, each with its id, that ends after the last one
    (SEP-1699: the client reconnects with ``Last-Event-ID`` for what comes next).
    """

    status: int
    body: dict[str, Any] | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    events: tuple[Event, ...] | None = None


ACCEPTED = Reply(202)


def refusal(error: ProtocolError, request_id: RequestId | None) -> Reply:
    """The reply carrying ``error``: its HTTP status and headers, and the error response echoing the id."""
    return Reply(status_of(error), error_response(request_id, error), headers=error.headers)


def reply_to(payload: Any, answer: Callable[[], Reply]) -> Reply:
    """``answer()``, the reply to ``payload``; never raises. What it raises is refused, echoing the
    payload's id where it can be read: a ``ProtocolError`` as it is; anything else as -32603, a bug whose
    traceback goes to the log only, or as -32010 (503) to retry when the database or cache was out of
    reach (``errors.failure``)."""
    request_id = readable_id(payload)
    try:
        return answer()
    except ProtocolError as error:
        return refusal(error, request_id)
    except Exception as error:
        return refusal(failure(error, request_id), request_id)
