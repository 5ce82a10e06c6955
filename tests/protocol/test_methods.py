"""The methods, the same in both eras: which are served, what a handler must return, which results may ask
for input, and params checked against the revision's schema."""

from __future__ import annotations

from typing import Any

import pytest

from mcpforms.protocol.era2025.sessions import MemorySessions
from mcpforms.protocol.errors import ProtocolError
from mcpforms.protocol.jsonrpc import Message
from mcpforms.protocol.methods import asks_for_input, check_served, validate_params
from mcpforms.protocol.reply import Reply
from mcpforms.protocol.server import Server
from tests import wire

META = wire.meta()


class Eras:
    """One server, asked the same request by a 2026-07-28 client and in a 2025-11-25 session."""

    def __init__(self, server: Server) -> None:
        self.server = server
        opened = server.handle(wire.initialize())
        self.session = {"mcp-session-id": opened.headers["Mcp-Session-Id"]}

    def both(self, method: str, params: dict[str, Any]) -> tuple[Reply, Reply]:
        request = {"jsonrpc": "2.0", "id": 4, "method": method}
        modern = self.server.handle({**request, "params": {**params, "_meta": META}})
        legacy = self.server.handle({**request, "params": params}, headers=self.session)
        return modern, legacy


def tools_only() -> Server:
    server = Server(key="methods-test", allow_anonymous=True, sessions=MemorySessions())

    @server.tool(description="Return what is no result.")
    def broken(ctx: Any, arguments: Any) -> Any:
        return ["not", "a", "dict"]

    return server


@pytest.mark.parametrize("method", ["prompts/list", "resources/list", "resources/templates/list"])
def test_a_method_whose_capability_is_not_advertised_is_unknown_in_both_eras(method):
    modern, legacy = Eras(tools_only()).both(method, {})
    error = {"code": -32601, "message": f"Method not found: {method}"}
    assert modern == legacy == Reply(404, {"jsonrpc": "2.0", "id": 4, "error": error})


def test_a_handler_that_returns_no_dict_is_an_internal_error_in_both_eras(caplog):
    modern, legacy = Eras(tools_only()).both("tools/call", {"name": "broken"})
    internal = {"jsonrpc": "2.0", "id": 4, "error": {"code": -32603, "message": "Internal error"}}
    assert modern == legacy == Reply(200, internal)
    assert caplog.text.count("The tools/call handler returned <class 'list'> instead of a dict") == 2


def test_the_2025_era_serves_no_method_outside_its_own():
    server = tools_only()
    check_served(server, "server/discover")
    with pytest.raises(ProtocolError) as raised:
        check_served(server, "server/discover", among={"tools/list"})
    assert raised.value.as_error() == {"code": -32601, "message": "Method not found: server/discover"}


@pytest.mark.parametrize(
    ("method", "result", "asks"),
    [
        ("tools/call", {"resultType": "input_required"}, True),
        ("prompts/get", {"resultType": "input_required"}, True),
        ("resources/read", {"resultType": "input_required"}, True),
        ("tools/list", {"resultType": "input_required"}, False),  # spec §6.1: only those three may ask
        ("tools/call", {"resultType": "complete"}, False),
        ("tools/call", {"content": []}, False),
    ],
)
def test_only_some_methods_results_may_ask_for_input(method, result, asks):
    assert asks_for_input(method, result) is asks


def test_params_are_checked_against_the_revision_except_the_input_responses():
    answers = {"q": "any shape at all"}
    validate_params(
        Message("tools/call", {"name": "x", "inputResponses": answers, "_meta": META}, id=1), "2026-07-28"
    )
    with pytest.raises(ProtocolError) as raised:
        validate_params(Message("tools/call", {"arguments": {}, "_meta": META}, id=1), "2026-07-28")
    assert raised.value.code == -32602 and raised.value.message.startswith("Invalid params: name:")
    with pytest.raises(ProtocolError) as raised:
        validate_params(Message("server/discover", {}, id=1), "2025-11-25")
    assert raised.value.code == -32601
