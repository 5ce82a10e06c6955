"""The JSON-RPC 2.0 envelope: decoding a body, telling requests, notifications and responses apart,
building responses."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpforms.conf import conf
from mcpforms.protocol.errors import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, ProtocolError

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
    """Parse a body as strict JSON and check its text; raise -32700 when it is not (spec §8.9 rung 3).

    Strict: no NaN or Infinity, which are not JSON and could not be written back, nor a number so large
    it would become one; no integer longer than Python reads; no lone surrogate, which is no Unicode text
    and could be neither stored nor echoed; nothing nested deeper than ``MAX_JSON_DEPTH``. Valid JSON that
    no request needs is -32602: a NUL in a string, which PostgreSQL cannot store, and a string (a key too)
    longer than ``MAX_STRING_LENGTH`` characters.
    """
    try:
        # json.loads' own reading of bytes (UTF-8, or UTF-16/32 by their first bytes), then one decoder
        # for every body, where json.loads with hooks builds a new one each time.
        text = body if isinstance(body, str) else body.decode(json.detect_encoding(body), "surrogatepass")
        payload = _DECODER.decode(text)
    except (ValueError, RecursionError):
        # ValueError covers bad UTF-8, bad JSON and NaN; RecursionError a pathologically nested document.
        raise ProtocolError(PARSE_ERROR, "Parse error: the body is not JSON") from None
    _check_text(payload, max_depth=conf.MAX_JSON_DEPTH, max_length=conf.MAX_STRING_LENGTH)
    return payload


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    # json.loads turns 1e400 into inf even when the Infinity literal is refused: inf is no more JSON than
    # the literal, and would fail every encode() and JSON column it reached.
    value = float(text)
    if not math.isfinite(value):
        raise ProtocolError(
            PARSE_ERROR, "Parse error: a number overflows a double (beyond about ±1.8e308) to infinity"
        )
    return value


def _integer(text: str) -> int:
    # int() refuses text longer than sys.get_int_max_str_digits() with a ValueError that would read as
    # "not JSON"; the same bound applies where a project lifted it, since reading such text costs
    # quadratic time (the reason for Python's limit, CVE-2020-10735).
    limit = _max_digits()
    if len(text) - text.startswith("-") > limit:
        raise ProtocolError(PARSE_ERROR, f"Parse error: an integer has more than {limit} digits")
    return int(text)


def _max_digits() -> int:
    default = sys.int_info.default_max_str_digits
    configured = sys.get_int_max_str_digits()  # 0 when the project lifted the limit
    return min(configured, default) if configured else default


_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite, parse_int=_integer)


def _check_text(payload: Any, *, max_depth: int, max_length: int) -> None:
    pending: list[tuple[Any, int]] = [(payload, 1)]
    while pending:
        value, depth = pending.pop()
        if depth > max_depth:
            raise ProtocolError(PARSE_ERROR, f"Parse error: the body nests deeper than {max_depth} levels")
        if isinstance(value, str):
            _check_string(value, max_length)
        elif isinstance(value, dict):
            for key, item in value.items():
                _check_string(key, max_length)
                pending.append((item, depth + 1))
        elif isinstance(value, list):
            pending.extend((item, depth + 1) for item in value)


def _check_string(text: str, max_length: int) -> None:
    try:
        if not text.isascii():  # O(1) in CPython, and nearly every string of a request is ASCII
            text.encode("utf-8")
    except UnicodeEncodeError:
        raise ProtocolError(
            PARSE_ERROR, "Parse error: a string holds a lone surrogate (\\ud800-\\udfff)"
        ) from None
    if "\x00" in text:
        raise ProtocolError(INVALID_PARAMS, "Invalid params: a string holds a NUL character (\\u0000)")
    if len(text) > max_length:
        raise ProtocolError(
            INVALID_PARAMS,
            f"Invalid params: a string is longer than {max_length} characters "
            "(MCPFORMS['MAX_STRING_LENGTH'])",
        )


def encode(payload: Any) -> bytes:
    # allow_nan=False: a NaN some handler returned is an error here, never invalid JSON on the wire.
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def readable_id(payload: Any) -> RequestId | None:
    """Return the request id when it can be read, so even a rejected request gets its id echoed."""
    if isinstance(payload, dict):
        value = payload.get("id")
        if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
            return value
    return None


def method_of(payload: Any) -> str | None:
    """Return the method the message names, when it names one as a string."""
    method = payload.get("method") if isinstance(payload, Mapping) else None
    return method if isinstance(method, str) else None


def is_response(payload: Any) -> bool:
    """Whether ``payload`` is a response, a result or an error and no method: from a client, its answer to
    a request of the server's (JSON-RPC 2.0 §5), which only the 2025 era sends."""
    return (
        isinstance(payload, Mapping)
        and "method" not in payload
        and ("result" in payload or "error" in payload)
    )


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
