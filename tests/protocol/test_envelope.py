"""The envelope rungs of the ladder (spec §8.9, 5-8) and the message shape before them (rung 3)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from mcpforms.protocol.envelope import Envelope, decode_header_value, read_envelope
from mcpforms.protocol.errors import ProtocolError
from mcpforms.protocol.jsonrpc import Message, decode, read_message, readable_id
from tests.wire import VERSION, meta

META = meta()
HEADERS = {"mcp-protocol-version": VERSION, "mcp-method": "tools/call", "mcp-name": "greet"}


def message(params: dict[str, Any], method: str = "tools/call") -> Message:
    return Message(method=method, params=params, id=1)


def code_of(params: dict[str, Any], headers: dict[str, str] | None, method: str = "tools/call") -> int:
    with pytest.raises(ProtocolError) as raised:
        read_envelope(message(params, method), headers)
    return raised.value.code


def test_a_valid_envelope():
    meta = {**META, "progressToken": 7, "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"}}
    envelope = read_envelope(message({"name": "greet", "_meta": meta}), HEADERS)
    assert envelope == Envelope(VERSION, {}, {"name": "c", "version": "1"}, progress_token=7)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"_meta": None},
        {"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}},
        {"_meta": {"io.modelcontextprotocol/protocolVersion": VERSION}},
        {"_meta": {**META, "io.modelcontextprotocol/protocolVersion": 2026}},
        {"_meta": {**META, "io.modelcontextprotocol/clientCapabilities": []}},
    ],
)
def test_missing_or_malformed_meta_is_invalid_params(params):
    assert code_of({"name": "greet", **params}, HEADERS) == -32602


def test_header_disagreeing_with_body_beats_an_unsupported_version():
    params = {"name": "greet", "_meta": {**META, "io.modelcontextprotocol/protocolVersion": "v999.0.0"}}
    assert code_of(params, HEADERS) == -32020
    assert code_of(params, {**HEADERS, "mcp-protocol-version": "v999.0.0"}) == -32022
    assert code_of(params, None) == -32022


def test_unsupported_version_names_the_supported_ones():
    params = {"_meta": {**META, "io.modelcontextprotocol/protocolVersion": "1900-01-01"}}
    with pytest.raises(ProtocolError) as raised:
        read_envelope(message(params, "server/discover"), None)
    assert raised.value.data == {"supported": [VERSION], "requested": "1900-01-01"}
    # ...and says what would work, for the person reading a client's error.
    assert str(raised.value) == (
        "Unsupported protocol version '1900-01-01': send 2026-07-28 in _meta, or open with an initialize "
        "request for 2025-11-25, 2025-06-18, 2025-03-26; upgrading the client may be needed"
    )


@pytest.mark.parametrize(
    "headers",
    [
        {"mcp-method": "tools/call", "mcp-name": "greet"},
        {"mcp-protocol-version": VERSION, "mcp-name": "greet"},
        {"mcp-protocol-version": VERSION, "mcp-method": "tools/list", "mcp-name": "greet"},
        {"mcp-protocol-version": VERSION, "mcp-method": "Tools/Call", "mcp-name": "greet"},
        {"mcp-protocol-version": VERSION, "mcp-method": "tools/call"},
        {"mcp-protocol-version": VERSION, "mcp-method": "tools/call", "mcp-name": "other"},
        {"mcp-protocol-version": VERSION, "mcp-method": "tools/call", "mcp-name": "=?base64?!!?="},
    ],
)
def test_header_mismatch(headers):
    assert code_of({"name": "greet", "_meta": META}, headers) == -32020


def test_headers_tolerate_whitespace_and_base64():
    encoded = base64.b64encode("grüß".encode()).decode()
    headers = {
        "mcp-protocol-version": f" {VERSION} ",
        "mcp-method": "tools/call ",
        "mcp-name": f"=?base64?{encoded}?=",
    }
    assert read_envelope(message({"name": "grüß", "_meta": META}), headers).protocol_version == VERSION


def test_name_header_is_not_needed_when_the_body_has_no_name():
    # The params check reports the missing name; the header rung has nothing to compare.
    headers = {"mcp-protocol-version": VERSION, "mcp-method": "tools/call"}
    assert read_envelope(message({"_meta": META}), headers).protocol_version == VERSION


@pytest.mark.parametrize(("raw", "expected"), [(None, None), ("plain", "plain"), ("=?base64?aGk=?=", "hi")])
def test_decode_header_value(raw, expected):
    assert decode_header_value(raw) == expected


@pytest.mark.parametrize("body", [b"", b"{", b"\xff", "[" * 100_000])
def test_decode_rejects_non_json(body):
    with pytest.raises(ProtocolError) as raised:
        decode(body)
    assert raised.value.code == -32700


@pytest.mark.parametrize(
    "payload",
    [
        [],
        [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}],
        "x",
        {"id": 1, "method": "tools/list"},
        {"jsonrpc": "1.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 1},
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": []},
        {"jsonrpc": "2.0", "id": None, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": True, "method": "tools/list"},
    ],
)
def test_read_message_rejects_what_is_not_one_request(payload):
    with pytest.raises(ProtocolError) as raised:
        read_message(payload)
    assert raised.value.code == -32600


def test_read_message():
    assert read_message({"jsonrpc": "2.0", "method": "n"}).is_notification
    request = read_message({"jsonrpc": "2.0", "id": "a", "method": "m", "params": {"x": 1}})
    assert (request.id, request.params, request.is_notification) == ("a", {"x": 1}, False)


@pytest.mark.parametrize(
    ("payload", "expected"), [({"id": 3}, 3), ({"id": "s"}, "s"), ({"id": False}, None), ([], None)]
)
def test_readable_id(payload, expected):
    assert readable_id(payload) == expected
