"""JSON-RPC errors: their codes, the HTTP status each earns, and the one rule that makes a service out of
reach a 503 to retry rather than a -32603."""

from __future__ import annotations

import logging

import pytest
from django.db import OperationalError

from mcpforms.protocol.errors import (
    INTERNAL_ERROR,
    UNAVAILABLE,
    ProtocolError,
    SignInRequired,
    failure,
    http_status,
    missing_capability,
    status_of,
    unsupported_version,
)


def test_missing_capability_error():
    error = missing_capability({"sampling": {}})
    assert isinstance(error, ProtocolError)
    assert error.as_error() == {
        "code": -32021,
        "message": "Server requires the sampling capability for this request",
        "data": {"requiredCapabilities": {"sampling": {}}},
    }
    assert http_status(error.code) == 400


@pytest.mark.parametrize(
    ("code", "status"),
    [(-32700, 400), (-32600, 400), (-32601, 404), (-32602, 400), (-32020, 400), (-32022, 400), (-32603, 200)],
)
def test_http_status(code, status):
    assert http_status(code) == status


def test_an_error_with_a_status_of_its_own_keeps_it():
    error = SignInRequired("the tool 'secret'")
    assert (error.code, http_status(error.code), status_of(error)) == (-32600, 400, 401)
    assert status_of(ProtocolError(-32601, "Method not found: x")) == 404
    assert ProtocolError(-32601, "Method not found: x").headers == {}


def test_an_unsupported_version_says_what_would_work():
    error = unsupported_version("2024-01-01", ["2026-07-28"], handshake=["2025-11-25", "2025-06-18"])
    assert error.as_error() == {
        "code": -32022,
        "message": "Unsupported protocol version '2024-01-01': send 2026-07-28 in _meta, or open with an "
        "initialize request for 2025-11-25, 2025-06-18; upgrading the client may be needed",
        "data": {"supported": ["2026-07-28"], "requested": "2024-01-01"},
    }


class AdminShutdown(OperationalError):
    """What psycopg raises when PostgreSQL is shut down, as Django's OperationalError."""


@pytest.mark.parametrize("outage", [OperationalError("server closed the connection"), AdminShutdown("bye")])
def test_a_database_out_of_reach_is_no_bug_but_a_503_to_retry(outage, caplog):
    with caplog.at_level(logging.WARNING, logger="mcpforms.protocol.errors"):
        error = failure(outage, 7)
    assert (error.code, error.message, http_status(error.code)) == (
        UNAVAILABLE,
        "The database is unavailable; retry shortly",
        503,
    )
    (record,) = caplog.records
    assert record.levelno == logging.WARNING and record.exc_info is None


def test_a_bug_is_an_internal_error_whose_detail_stays_in_the_log(caplog):
    error = failure(RuntimeError("secret detail"), 7, stage=" on a later round")
    assert error.as_error() == {"code": INTERNAL_ERROR, "message": "Internal error"}
    (record,) = caplog.records
    assert record.getMessage() == "MCP request 7 failed on a later round"
    assert record.levelno == logging.ERROR and record.exc_info is not None
