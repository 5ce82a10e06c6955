"""The transport-agnostic core: one decoded JSON-RPC message in, one ``Reply`` out (spec §8.9).

The edge (``mcpforms.api`` over HTTP, ``mcpforms.stdio`` over stdin and stdout) decodes the body, hands
over the headers and the user, and writes the reply. Everything in between lives here, in ladder order:
message shape, era, envelope, method, params, then the handler. Nothing raises out of ``handle``: a bug
in a handler is logged and answered with -32603, never a traceback.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpforms.conf import conf
from mcpforms.protocol.budgets import address_scope
from mcpforms.protocol.context import EVERY_SCOPE, Access, Notify
from mcpforms.protocol.envelope import read_envelope
from mcpforms.protocol.era2025 import shim as era2025
from mcpforms.protocol.jsonrpc import Message, read_message, result_response
from mcpforms.protocol.methods import Call, asks_for_input, check_served, run_method, validate_params
from mcpforms.protocol.offering import Offering
from mcpforms.protocol.reply import ACCEPTED, Reply, reply_to
from mcpforms.protocol.results import finish_complete, finish_input_required, finish_task, is_task
from mcpforms.protocol.state import ANONYMOUS, principal_for
from mcpforms.protocol.versions import era_of


def handle(
    server: Offering,
    payload: Any,
    *,
    headers: Mapping[str, str] | None,
    user: Any,
    notify: Notify | None,
    address: str | None = None,
    access: Access = EVERY_SCOPE,
) -> Reply:
    if era_of(payload, headers) == "2025":
        sessions = server.sessions
        return era2025.handle(
            server,
            payload,
            headers=headers,
            user=user,
            notify=notify,
            sessions=sessions,
            address=address,
            access=access,
        )
    return reply_to(payload, lambda: _reply(server, payload, headers, user, notify, access, address))


def _reply(
    server: Offering,
    payload: Any,
    headers: Mapping[str, str] | None,
    user: Any,
    notify: Notify | None,
    access: Access,
    address: str | None,
) -> Reply:
    message = read_message(payload)
    if message.is_notification:
        # Spec §8.4: accepted notifications get 202 and no body. None is defined for HTTP clients.
        return ACCEPTED
    assert message.id is not None
    answer = _answer(server, message, headers, user, notify, access, address)
    return Reply(200, result_response(message.id, answer))


def _answer(
    server: Offering,
    message: Message,
    headers: Mapping[str, str] | None,
    user: Any,
    notify: Notify | None,
    access: Access,
    address: str | None,
) -> dict[str, Any]:
    envelope = read_envelope(message, headers)
    check_served(server, message.method)
    validate_params(message, envelope.protocol_version)
    principal = principal_for(user)
    scope = address_scope(address) if principal == ANONYMOUS else None
    result = run_method(Call(server, message, envelope, user, principal, notify, headers, access, scope))
    if asks_for_input(message.method, result):
        return finish_input_required(
            result, capabilities=envelope.client_capabilities, server_info=server.info
        )
    if is_task(message.method, result):
        return finish_task(result, capabilities=envelope.client_capabilities, server_info=server.info)
    # Discovery says nothing caller-specific. Lists and reads may vary by caller — an anonymous one sees
    # only what ALLOW_ANONYMOUS names, a user what their permissions allow — so each authorization context
    # caches its own (spec §4.2).
    public = message.method == "server/discover"
    return finish_complete(
        result,
        method=message.method,
        server_info=server.info,
        ttl_ms=conf.CACHE_TTL_MS,
        cache_scope="public" if public else "private",
    )
