"""Decoding a client's JSON: a number the server cannot hold is refused at the edge, over HTTP and stdio,
in either era, before any handler, session store or schema sees it; and telling a response from a request."""

from __future__ import annotations

import io
import json
import sys
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.http import HttpResponse
from django.test import RequestFactory

from mcpforms import stdio
from mcpforms.api import serve
from mcpforms.protocol import Server
from mcpforms.protocol.errors import PARSE_ERROR, ProtocolError
from mcpforms.protocol.jsonrpc import decode, is_response, method_of
from mcpforms.protocol.server import default_server
from tests import wire

VERSION = "2026-07-28"
DIGIT_LIMIT = sys.int_info.default_max_str_digits  # 4300: what Python reads as an int from text


def refusal(body: str | bytes) -> ProtocolError:
    with pytest.raises(ProtocolError) as raised:
        decode(body)
    return raised.value


@pytest.mark.parametrize("number", ["1e400", "-1e400", "1E+400", "1e309", "-2e308", "123456789e301"])
def test_a_number_beyond_a_double_is_a_parse_error_not_infinity(number):
    # json.loads reads these as float('inf'), which is no JSON and could never be written back.
    error = refusal('{"a": [' + number + "]}")
    assert error.code == PARSE_ERROR
    assert "overflows" in error.message and "1.8e308" in error.message


@pytest.mark.parametrize(
    ("number", "value"),
    [("1e308", 1e308), ("-1.7976931348623157e308", -1.7976931348623157e308), ("1e-400", 0.0), ("-0.0", 0.0)],
)
def test_a_number_within_a_double_is_read(number, value):
    assert decode('{"a": ' + number + "}") == {"a": value}


@pytest.mark.parametrize("digits", [309, 400, 4000, DIGIT_LIMIT])
def test_a_long_integer_within_pythons_limit_is_read_exactly(digits):
    assert decode('{"a": -%s}' % ("9" * digits)) == {"a": -int("9" * digits)}


@pytest.mark.parametrize("number", ["9" * (DIGIT_LIMIT + 1), "9" * 5000, "-" + "9" * 5000, "1" * 100_000])
def test_an_integer_longer_than_python_reads_is_a_clear_parse_error(number):
    error = refusal('{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"a": ' + number + "}}")
    assert error.code == PARSE_ERROR
    assert error.message == f"Parse error: an integer has more than {DIGIT_LIMIT} digits"


def test_a_lower_digit_limit_set_by_the_project_is_named_in_the_refusal():
    saved = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(1000)
    try:
        assert decode("[%s]" % ("9" * 1000)) == [int("9" * 1000)]
        error = refusal("[%s]" % ("9" * 1001))
    finally:
        sys.set_int_max_str_digits(saved)
    assert error.message == "Parse error: an integer has more than 1000 digits"


@pytest.mark.parametrize(
    ("payload", "response", "method"),
    [
        ({"jsonrpc": "2.0", "id": "e-1", "result": {}}, True, None),
        ({"jsonrpc": "2.0", "id": "e-1", "error": {"code": -1, "message": "no"}}, True, None),
        ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, False, "ping"),
        ({"jsonrpc": "2.0", "method": "notifications/cancelled"}, False, "notifications/cancelled"),
        # A method member, even one that is no string, makes it no response: an invalid request.
        ({"jsonrpc": "2.0", "id": 1, "method": None, "result": {}}, False, None),
        ({"jsonrpc": "2.0", "id": 1, "method": 5}, False, None),
        ({"jsonrpc": "2.0", "id": 1}, False, None),
        ([{"jsonrpc": "2.0", "id": "e-1", "result": {}}], False, None),
        ("junk", False, None),
    ],
)
def test_a_response_has_a_result_or_an_error_and_no_method(payload, response, method):
    assert is_response(payload) is response
    assert method_of(payload) == method


META = wire.meta(wire.ELICITATION)
URL_ONLY = wire.meta({"elicitation": {"url": {}}})
APPS = wire.meta(wire.APPS)
INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"elicitation": {}},
    "clientInfo": {"name": "t", "version": "1"},
}


def body_with(message: dict[str, Any], number: str) -> bytes:
    """``message`` as JSON with the raw ``number`` where the string "NUMBER" stands."""
    return json.dumps(message).replace('"NUMBER"', number).encode()


def post(body: bytes, **headers: Any) -> HttpResponse:
    request = RequestFactory().post("/mcp", body, content_type="application/json", **headers)
    response = serve(default_server, request)
    assert isinstance(response, HttpResponse)
    return response


def tools_call(
    name: str, arguments: dict[str, Any], meta: dict[str, Any], request_id: Any = 1
) -> tuple[dict[str, Any], dict[str, str]]:
    """A 2026-07-28 tools/call and the headers that agree with it."""
    params = {"name": name, "arguments": arguments, "_meta": meta}
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    headers = {"HTTP_MCP_PROTOCOL_VERSION": VERSION, "HTTP_MCP_METHOD": "tools/call", "HTTP_MCP_NAME": name}
    return message, headers


def initialize(**params: Any) -> tuple[dict[str, Any], dict[str, str]]:
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE | params}, {}


WHERE = {
    "2025 initialize": initialize(x="NUMBER"),
    "2025 capabilities": initialize(capabilities={"elicitation": {}, "x": "NUMBER"}),
    "tools/call, a field": tools_call("testapp_signup", {"age": "NUMBER"}, META),
    "tools/call, an unknown key": tools_call("testapp_signup", {"email": "a@b.co", "zz": "NUMBER"}, META),
    "URL mode": tools_call("testapp_signup", {"age": "NUMBER"}, URL_ONLY),
    "MCP Apps echo, id null": tools_call("testapp_signup_submit", {"age": "NUMBER"}, APPS, None),
    "_meta": tools_call("testapp_signup", {}, META | {"x": "NUMBER"}),
}


@pytest.mark.django_db
@pytest.mark.parametrize("number", ["1e400", "-1e400"])
@pytest.mark.parametrize("where", list(WHERE))
def test_an_overflowing_number_anywhere_in_a_request_is_refused_at_the_http_edge(where, number):
    message, headers = WHERE[where]
    response = post(body_with(message, number), **headers)
    assert response.status_code == 400, response.content
    error = json.loads(response.content)["error"]
    assert error["code"] == -32700 and "overflows" in error["message"], error


@pytest.mark.django_db
def test_an_overflowing_number_in_a_2025_sessions_request_is_refused_at_the_http_edge():
    opened = post(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE}).encode()
    )
    session = opened["Mcp-Session-Id"]
    params = {"name": "testapp_signup", "arguments": {"age": "NUMBER"}}
    message = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}
    response = post(body_with(message, "1e400"), HTTP_MCP_SESSION_ID=session)
    assert response.status_code == 400
    assert json.loads(response.content)["error"]["code"] == -32700


@pytest.mark.django_db  # each line is served as Django serves a request
def test_stdio_decodes_the_same_way():
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"x": "NUMBER"}}
    stdin = io.BytesIO(
        body_with(ping, "1e400") + b"\n" + body_with(ping, "9" * 5000) + b"\n" + body_with(ping, "1") + b"\n"
    )
    stdout = io.BytesIO()
    stdio.serve(Server(), caller=AnonymousUser, stdin=stdin, stdout=stdout)
    overflowing, too_long, pong = (json.loads(text) for text in stdout.getvalue().decode().splitlines())
    assert overflowing["id"] is None and overflowing["error"]["code"] == -32700
    assert "overflows" in overflowing["error"]["message"]
    assert too_long["error"] == {
        "code": -32700,
        "message": f"Parse error: an integer has more than {DIGIT_LIMIT} digits",
    }
    assert pong == {"jsonrpc": "2.0", "id": 2, "result": {}}
