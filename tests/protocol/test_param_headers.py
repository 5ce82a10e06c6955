"""Mcp-Param-* headers (spec §8.2, §8.9 rung 11): mirrored arguments must agree with the body."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from mcpforms.protocol import RequestContext, Server
from mcpforms.protocol.errors import ProtocolError
from mcpforms.protocol.param_headers import check_param_headers, param_headers
from tests import wire

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "priority": {"type": "integer", "x-mcp-header": "Priority"},
        "debug": {"type": "boolean", "x-mcp-header": "Debug"},
        "ratio": {"type": "number", "x-mcp-header": "Ratio"},  # numbers are never mirrored
        "bad": {"type": "string", "x-mcp-header": "not a token"},
        "nested": {"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}},
        "listed": {"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}},
    },
}
EXPECTED = param_headers(SCHEMA)


def test_param_headers_reads_the_properties_chain_only():
    assert EXPECTED == {
        ("region",): ("Region", "string"),
        ("priority",): ("Priority", "integer"),
        ("debug",): ("Debug", "boolean"),
        ("nested", "zone"): ("Zone", "string"),
    }


def b64(text: str) -> str:
    return f"=?base64?{base64.b64encode(text.encode()).decode()}?="


@pytest.mark.parametrize(
    ("arguments", "headers"),
    [
        ({}, {}),
        ({"region": "eu"}, {"mcp-param-region": "eu"}),
        ({"region": "Hello, 世界"}, {"mcp-param-region": b64("Hello, 世界")}),
        ({"region": "=?base64?SGVsbG8="}, {"mcp-param-region": "=?base64?SGVsbG8="}),  # no suffix: literal
        ({"priority": 42}, {"mcp-param-priority": "42.0"}),
        ({"priority": 42.0}, {"mcp-param-priority": "42"}),
        ({"debug": False}, {"mcp-param-debug": "false"}),
        ({"nested": {"zone": "a"}}, {"mcp-param-zone": "a"}),
        ({"region": None}, {}),
        ({"region": ["not", "mirrored"]}, {}),
    ],
)
def test_agreeing_headers(arguments, headers):
    check_param_headers(EXPECTED, arguments, headers)


@pytest.mark.parametrize(
    ("arguments", "headers", "message"),
    [
        ({"region": "eu"}, {}, "missing"),
        ({}, {"mcp-param-region": "eu"}, "is present"),
        ({"region": "eu"}, {"mcp-param-region": "us"}, "does not match"),
        ({"region": "Hello"}, {"mcp-param-region": "=?base64?SGVsbG8?="}, "not valid base64"),
        ({"region": "Hello"}, {"mcp-param-region": "=?base64?SGVs!!!bG8=?="}, "not valid base64"),
        ({"priority": 42}, {"mcp-param-priority": "42.5"}, "does not match"),
        ({"debug": True}, {"mcp-param-debug": "True"}, "does not match"),
        # Digits a client may send that int() reads differently, or cannot read at all.
        ({"priority": 3}, {"mcp-param-priority": "٣"}, "does not match"),
        ({"priority": 2}, {"mcp-param-priority": "²"}, "does not match"),
        ({"priority": 1}, {"mcp-param-priority": "1" * 5000}, "does not match"),
        ({"priority": 1}, {"mcp-param-priority": b64("1" * 5000)}, "does not match"),
        ({"region": ["x"]}, {"mcp-param-region": "x"}, "is present"),
    ],
)
def test_disagreeing_headers(arguments, headers, message):
    with pytest.raises(ProtocolError, match=message) as raised:
        check_param_headers(EXPECTED, arguments, headers)
    assert raised.value.code == -32020


def test_the_core_checks_them_before_the_handler_runs():
    server = Server()
    ran: list[bool] = []

    @server.tool(description="Route by region.", input_schema=SCHEMA)
    def route(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
        ran.append(True)
        return {"content": []}

    payload = wire.message("tools/call", {"name": "route", "arguments": {"region": "eu"}})
    headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "route"}
    reply = server.handle(payload, headers=headers)
    assert reply.status == 400 and reply.body is not None and reply.body["error"]["code"] == -32020
    assert ran == []
    assert server.handle(payload, headers=headers | {"mcp-param-region": "eu"}).status == 200
    assert server.handle(payload, headers=None).status == 200  # no HTTP, nothing mirrored
    assert ran == [True, True]
