"""``Reply``: what the core hands back to a transport for one message."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcpforms.protocol.era2025.sessions import Event


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
