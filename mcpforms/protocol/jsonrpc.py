"""The JSON-RPC 2.0 envelope: decoding a body, telling requests from notifications, building responses."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mcpforms.protocol.errors import INVALID_REQUEST, PARSE_ERROR, ProtocolError

RequestId = str | int


@dataclass(frozen=True)
class Message:
    """A well-formed request (``id`` set) or notification (``id`` None)."""

    method: str
    params: dict[str, Any]
    id: RequestId | None = None

    @property
    def is_notification(self) -> bool:
        return self.id is None


def decode(body: bytes | str) -> Any:
    """Parse a body as JSON; raise -32700 when it is not (spec §8.9 rung 3)."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        # ValueError covers bad UTF-8 and bad JSON; RecursionError a pathologically nested document.
        raise ProtocolError(PARSE_ERROR, "Parse error: the body is not JSON") from None


def encode(payload: Any) -> bytes:
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def readable_id(payload: Any) -> RequestId | None:
    """Return the request id when it can be read, so even a rejected request gets its id echoed."""
    if isinstance(payload, dict):
        value = payload.get("id")
        if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
            return value
    return None


def read_message(payload: Any) -> Message:
    """Check ``payload`` is one JSON-RPC request or notification; raise -32600 otherwise.

    A 2026-07-28 body is a single message: batches and posted responses are invalid (spec §8.1).
    """
    if isinstance(payload, list):
        raise ProtocolError(INVALID_REQUEST, "Invalid request: batches are not supported")
    if not isinstance(payload, dict):
        raise ProtocolError(INVALID_REQUEST, "Invalid request: the body must be a JSON-RPC object")
    if payload.get("jsonrpc") != "2.0":
        raise ProtocolError(INVALID_REQUEST, 'Invalid request: "jsonrpc" must be "2.0"')
    method = payload.get("method")
    if not isinstance(method, str):
        raise ProtocolError(INVALID_REQUEST, 'Invalid request: "method" must be a string')
    params = payload.get("params", None)
    if "params" in payload and not isinstance(params, dict):
        raise ProtocolError(INVALID_REQUEST, 'Invalid request: "params" must be an object')
    if "id" not in payload:
        return Message(method=method, params=params or {})
    request_id = readable_id(payload)
    if request_id is None:
        # Null, fractional, boolean or structured ids are not request ids (spec §1.1).
        raise ProtocolError(INVALID_REQUEST, 'Invalid request: "id" must be a string or an integer')
    return Message(method=method, params=params or {}, id=request_id)


def result_response(request_id: RequestId, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error_response(request_id: RequestId | None, error: ProtocolError) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": error.as_error()}


def notification(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}
