"""JSON-RPC error codes, the exceptions that carry them, and the HTTP status each one earns (spec §1.2, §1.3).

Raise ``ProtocolError`` (or one of its factories) anywhere below the edge: the dispatcher turns it into an
error response echoing the request id. ``ToolError`` is different: it is a tool *execution* failure, which the
spec reports as a result with ``isError: true``, not as a JSON-RPC error.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

logger = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# The 2026-07-28 allocations (spec §1.2); nothing else in -32020..-32099 may ever be emitted.
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
# A service the server stands on (its database, its cache) is out of reach: retry later. JSON-RPC 2.0
# leaves -32000..-32099 to the implementation; this one is outside the range the spec allocates.
UNAVAILABLE = -32010

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
    UNAVAILABLE: 503,  # with Retry-After (RFC 9110 §15.6.4): nothing is wrong with the request
}


def http_status(code: int) -> int:
    """Return the HTTP status of a response carrying the error ``code``."""
    return _HTTP_STATUS.get(code, 200)


def status_of(error: ProtocolError) -> int:
    """Return the HTTP status of a response carrying ``error``: its own, else its code's."""
    return error.status if error.status is not None else http_status(error.code)


class ProtocolError(Exception):
    """A JSON-RPC error to send back instead of a result."""

    #: The HTTP status of a response carrying this error where it is not its code's (``http_status``).
    status: int | None = None

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    @property
    def headers(self) -> Mapping[str, str]:
        """What the transport sends along with the response carrying this error (a budget's Retry-After)."""
        return {}

    def as_error(self) -> dict[str, Any]:
        """Return the ``error`` member of the response."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class SignInRequired(ProtocolError):
    """An anonymous caller asked for something that exists but needs a signed-in user, on a transport
    that can ask them to sign in (``Access.sign_in``): 401, which the edge sends with its challenge.

    MCP hosts start sign-in only on a transport-level 401 (2025-11-25 and 2026-07-28 authorization,
    "lazy" authentication): an "Unknown tool" would leave the user no way in.
    """

    status = 401

    def __init__(self, what: str) -> None:
        super().__init__(
            INVALID_REQUEST,
            f"Unauthorized: {what} needs a signed-in user; sign in (the WWW-Authenticate header says how) "
            "and call again",
        )


class InsufficientScope(ProtocolError):
    """The caller's access token lacks some of the ``scopes`` what it called needs: 403, which the edge
    sends with an ``insufficient_scope`` challenge naming them all (RFC 6750 §3.1; MCP authorization,
    step-up: every scope the operation needs, in one challenge). ``data`` carries ``scopes`` for the
    edge, and for any client that reads the body."""

    status = 403

    def __init__(self, what: str, scopes: tuple[str, ...], *, missing: tuple[str, ...]) -> None:
        super().__init__(
            INVALID_REQUEST,
            f"Forbidden: {what} needs the scope {' '.join(scopes)} and the access token lacks "
            f"{' '.join(missing)}; ask the authorization server for it",
            {"scopes": list(scopes)},
        )
        self.scopes = scopes


class ToolError(Exception):
    """A tool execution failure: the client gets ``isError: true`` with this message as text (spec §5.2)."""


# What Django and redis-py raise when their server cannot be reached, named rather than imported: the core
# imports neither Django's database layer nor redis (which a project may not have installed). A
# subclass (psycopg's AdminShutdown arrives as Django's OperationalError) matches through its MRO.
_UNREACHABLE = {
    ("django.db.utils", "OperationalError"): "database",
    ("django.db.utils", "InterfaceError"): "database",
    ("redis.exceptions", "ConnectionError"): "cache",
    ("redis.exceptions", "TimeoutError"): "cache",
}


def unreachable_service(error: BaseException) -> str | None:
    """The service ``error`` says is out of reach (``"database"``, ``"cache"``), or None for any other
    error: such an error is no bug, and is answered with a 503 to retry (``failure`` in the core, the
    edge's own catch-all outside it)."""
    for cls in type(error).__mro__:
        service = _UNREACHABLE.get((cls.__module__, cls.__qualname__))
        if service is not None:
            return service
    return None


def unavailable(service: str) -> ProtocolError:
    return ProtocolError(UNAVAILABLE, f"The {service} is unavailable; retry shortly")


def failure(error: Exception, request_id: Any, *, stage: str = "") -> ProtocolError:
    """The error a client gets for ``error``, raised while answering ``request_id``: -32010 (503) to retry
    when a service was out of reach, which is no bug; -32603 otherwise, the traceback in the log only."""
    service = unreachable_service(error)
    if service is None:
        logger.error("MCP request %r failed%s", request_id, stage, exc_info=error)
        return ProtocolError(INTERNAL_ERROR, "Internal error")
    logger.warning("MCP request %r%s: the %s is out of reach: %s", request_id, stage, service, error)
    return unavailable(service)


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
