"""The two-round ``signup`` flow the benchmarks send, as bytes and checks: no Django, no transport.

Round one calls the tool with the one argument the model knows and gets ``input_required`` with a
``requestState``; round two repeats the call with the user's answers and the ``requestState`` of that
same flow's round one, and gets the complete result. ``bench/two_round_flow.py`` sends these through
Django's test client, ``bench/http_flow.py`` over real HTTP.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

PROTOCOL_VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}
TOOL = "signup"
# The same tool with a handler that inserts the signup into a table (``bench/writes.py``), on every server.
WRITE_TOOL = "signup_write"


def headers_for(tool: str) -> dict[str, str]:
    """The 2026-07-28 headers, which must repeat the body's version, method and tool name."""
    return {"MCP-Protocol-Version": PROTOCOL_VERSION, "Mcp-Method": "tools/call", "Mcp-Name": tool}


HEADERS = headers_for(TOOL)
ARGUMENTS = {"plan": "pro"}
EMAIL = "ada@example.com"
ANSWER = {"email": EMAIL, "plan": "pro", "age": 36, "newsletter": True}
# The key of the tool's input request, and so of the answer: mcpforms keys it by the tool's name, the other
# servers use this one for both tools; round two answers under the key round one asked with.
INPUT_KEY = "signup"

# What mcpforms asks for in round one: the schema it derives from SignupForm for the fields not supplied.
# The benchmark's other servers ask with it as it is.
REQUESTED_SCHEMA = {
    "type": "object",
    "properties": {
        "email": {
            "type": "string",
            "format": "email",
            "maxLength": 320,
            "title": "Email",
            "description": "We send the confirmation link here.",
        },
        "age": {"type": "integer", "minimum": 18, "maximum": 120, "title": "Age"},
        "newsletter": {"type": "boolean", "title": "Send me the newsletter"},
    },
    "required": ["email"],
}


class FlowError(Exception):
    """A round that did not answer what the flow expects: the benchmarks count it as an error."""


def call_body(request_id: int, extra: Mapping[str, Any] | None = None, *, tool: str = TOOL) -> bytes:
    """The ``tools/call`` of ``tool`` with the model's arguments, plus ``extra`` params (round two's)."""
    params = {"name": tool, "arguments": ARGUMENTS, "_meta": META, **(extra or {})}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}).encode()


def result_of(body: bytes) -> dict[str, Any]:
    """The JSON-RPC result in ``body``; a JSON-RPC error or an ``isError`` result is a ``FlowError``."""
    message = json.loads(body)
    if "result" not in message:
        raise FlowError(f"JSON-RPC error: {message.get('error')}")
    result: dict[str, Any] = message["result"]
    if result.get("isError"):
        raise FlowError(f"isError result: {result.get('content')}")
    return result


def answers_for(first: Mapping[str, Any]) -> dict[str, Any]:
    """Round two's extra params: the answers, and the ``requestState`` round one (``first``) returned."""
    if first.get("resultType") != "input_required" or "requestState" not in first:
        raise FlowError(f"round one did not ask: {first}")
    answer = {key: {"action": "accept", "content": ANSWER} for key in first.get("inputRequests") or {}}
    return {"inputResponses": answer, "requestState": first["requestState"]}


def check_done(result: Mapping[str, Any]) -> None:
    """Raise ``FlowError`` unless ``result`` is round two's complete result, with the answered email."""
    structured = result.get("structuredContent") or {}
    if result.get("resultType", "complete") != "complete" or structured.get("email") != EMAIL:
        raise FlowError(f"round two did not complete: {result}")
