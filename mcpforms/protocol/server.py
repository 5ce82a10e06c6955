"""``Server``: what one endpoint offers, and the core's entry point: one decoded message in, a reply out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpforms.protocol.context import Notify
from mcpforms.protocol.dispatch import handle
from mcpforms.protocol.offering import Offering
from mcpforms.protocol.reply import Reply


class Server(Offering):
    """What one endpoint serves (see ``Offering``), and ``handle`` to serve it."""

    def handle(
        self,
        payload: Any,
        *,
        headers: Mapping[str, str] | None = None,
        user: Any = None,
        notify: Notify | None = None,
    ) -> Reply:
        """Answer one decoded JSON-RPC message; never raises.

        ``headers`` are the transport's, names lower-cased (None on a transport without headers);
        ``notify`` receives the notifications a handler emits before the result (progress).
        """
        return handle(self, payload, headers=headers, user=user, notify=notify)


default_server = Server()
"""The server mcpforms' own registry fills, and the one ``mcpforms.api.urls`` serves."""
