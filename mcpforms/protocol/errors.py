"""JSON-RPC error codes, the exceptions that carry them, and the HTTP status each one earns (spec §1.2, §1.3).

Raise ``ProtocolError`` (or one of its factories) anywhere below the edge: the dispatcher turns it into an
error response echoing the request id. ``ToolError`` is different: it is a tool *execution* failure, which the
spec reports as a result with ``isError: true``, not as a JSON-RPC error.
"""

from __future__ import annotations

from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# The 2026-07-28 allocations (spec §1.2); nothing else in -32020..-32099 may ever be emitted.
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022

# Spec §1.3: ladder rejections are 400, an unknown method 404. Everything else travels in-band with 200,
# as the reference SDKs do, so a handler's -32603 is never an HTTP 500.
_HTTP_STATUS: dict[int, int] = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}


def http_status(code: int) -> int:
    """Return the HTTP status of a response carrying the error ``code``."""
    return _HTTP_STATUS.get(code, 200)


class ProtocolError(Exception):
    """A JSON-RPC error to send back instead of a result."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def as_error(self) -> dict[str, Any]:
        """Return the ``error`` member of the response."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class ToolError(Exception):
    """A tool execution failure: the client gets ``isError: true`` with this message as text (spec §5.2)."""


def invalid_params(message: str, data: Any = None) -> ProtocolError:
    return ProtocolError(INVALID_PARAMS, message, data)


def method_not_found(method: str) -> ProtocolError:
    return ProtocolError(METHOD_NOT_FOUND, f"Method not found: {method}")


def header_mismatch(message: str) -> ProtocolError:
    return ProtocolError(HEADER_MISMATCH, f"Header mismatch: {message}")


def unsupported_version(requested: str, supported: list[str], *, handshake: list[str]) -> ProtocolError:
    """-32022, saying what would work: a version this server takes in ``_meta``, or the ``initialize``
    handshake of the versions in ``handshake``."""
    # Both data members are required, and `supported` must be a subset of server/discover's (spec §1.2).
    return ProtocolError(
        UNSUPPORTED_PROTOCOL_VERSION,
        f"Unsupported protocol version {requested!r}: send {' or '.join(supported)} in _meta, or open "
        f"with an initialize request for {', '.join(handshake)}; upgrading the client may be needed",
        {"supported": supported, "requested": requested},
    )


def missing_capability(required: dict[str, Any]) -> ProtocolError:
    """The client did not declare what this request needs; ``required`` is a ClientCapabilities object."""
    names = ", ".join(sorted(required))
    return ProtocolError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"Server requires the {names} capability for this request",
        {"requiredCapabilities": required},
    )


def invalid_state() -> ProtocolError:
    # The reason stays in the server log (mcpforms.protocol.state): telling the client why a token failed
    # would help whoever forged it.
    return invalid_params("Invalid or expired requestState", {"reason": "invalid_request_state"})
