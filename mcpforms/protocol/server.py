"""``Server``: what one endpoint offers, and the core's entry point: one decoded message in, a reply out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpforms.protocol.context import DEFAULT_SERVER, EVERY_SCOPE, Access, Notify
from mcpforms.protocol.dispatch import handle
from mcpforms.protocol.offering import Offering, built, by_key
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
        address: str | None = None,
        access: Access = EVERY_SCOPE,
    ) -> Reply:
        """Answer one decoded JSON-RPC message; never raises.

        ``headers`` are the transport's, names lower-cased (None on a transport without headers);
        ``notify`` receives the notifications a handler emits before the result (progress);
        ``address`` is the client's network address, when the transport has one (HTTP's REMOTE_ADDR):
        the 2025 era budgets anonymous sessions by it. ``access`` is what the transport knows of the
        caller's credentials: their OAuth scopes, and whether it can ask an anonymous caller to sign in.
        """
        return handle(
            self, payload, headers=headers, user=user, notify=notify, address=address, access=access
        )


def servers() -> list[Server]:
    """Every server alive in this process, in the order they were built."""
    return [server for _, server in sorted(built.items()) if isinstance(server, Server)]


def server_for(key: str) -> Server | None:
    """The server whose ``key`` is ``key``; the last built, if several share it (``mcpforms.E020``)."""
    found = by_key.get(key)
    return found if isinstance(found, Server) else None


def anonymous_may_use(key: str, name: str) -> bool:
    """Whether an anonymous caller of the server ``key`` may see and use its tool or prompt ``name``."""
    server = server_for(key)
    return server is not None and server.anonymous_may_use(name)


default_server = Server(key=DEFAULT_SERVER)
"""The server mcpforms' own registry fills, and the one ``mcpforms.api.urls`` serves."""
