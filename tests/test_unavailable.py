"""A database or cache out of reach mid-request: HTTP 503 with a JSON-RPC error and ``Retry-After``, never
-32603; the broken connection is dropped, so the next request works once the service is back.

The outage is simulated in-process: every new database cursor raises what Django raises when PostgreSQL
has gone away (``OperationalError``), and a session store raises redis-py's ``ConnectionError``, as
Django's ``RedisCache`` lets it through. ``tests/e2e/test_faults.py`` does it for real.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import pytest
import redis.exceptions
from django.db import InterfaceError, OperationalError, connection
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.test import RequestFactory

from mcpforms.api import serve
from mcpforms.models import Submission
from mcpforms.protocol import RequestContext, Server
from mcpforms.protocol.era2025.sessions import MemorySessions, Session
from tests import wire

LEGACY = "2025-11-25"


class UnreachableCache(MemorySessions):
    """A session store on a Redis that stopped answering."""

    def get(self, session_id: str) -> Session | None:
        raise redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    def create(self, session: Session) -> None:
        self.get(session.id)


server = Server(name="unavailable-test", version="1", allow_anonymous=True)
cache_server = Server(
    name="unavailable-cache", version="1", allow_anonymous=True, sessions=UnreachableCache()
)


@server.tool(description="Count the stored submissions.")
def count(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": str(Submission.objects.count())}]}


@server.tool(description="Fail the way a bug does.")
def broken(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    raise RuntimeError("a bug, not an outage")


@contextmanager
def database_gone(error: type[Exception] = OperationalError) -> Iterator[None]:
    """Every query fails as it does once PostgreSQL has gone away, until the block ends."""
    failure = error("server closed the connection unexpectedly")
    with mock.patch.object(connection, "create_cursor", side_effect=failure):
        yield


def call(tool: str, *, target: Server = server, request_id: int = 7) -> HttpResponseBase:
    payload = wire.message("tools/call", {"name": tool, "arguments": {}}, request_id=request_id)
    return serve(target, wire.http_request(payload))


def legacy(method: str, *, target: Server, session: str | None = None) -> HttpResponseBase:
    params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    body = json.dumps({"jsonrpc": "2.0", "id": 3, "method": method, "params": params})
    headers: dict[str, Any] = {"HTTP_MCP_SESSION_ID": session} if session else {}
    return serve(target, RequestFactory().post("/mcp", body, content_type="application/json", **headers))


def body_of(response: HttpResponseBase) -> Any:
    assert isinstance(response, HttpResponse)
    return json.loads(response.content)


def assert_retry_later(response: HttpResponseBase, *, service: str, request_id: int | None) -> None:
    assert isinstance(response, HttpResponse)
    assert response.status_code == 503, response
    assert response["Content-Type"] == "application/json"
    assert int(response["Retry-After"]) >= 1
    body = body_of(response)
    assert body["jsonrpc"] == "2.0"
    assert body["id"] == request_id
    assert body["error"]["code"] not in (-32603, -32600)
    assert body["error"]["message"] == f"The {service} is unavailable; retry shortly"
    assert "Traceback" not in response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("error", [OperationalError, InterfaceError])
def test_a_database_gone_mid_call_is_a_503_to_retry(error):
    with database_gone(error):
        response = call("count")
    assert_retry_later(response, service="database", request_id=7)


@pytest.mark.django_db
def test_the_next_request_works_once_the_database_is_back():
    with database_gone():
        assert call("count").status_code == 503
    response = call("count", request_id=8)
    assert response.status_code == 200
    assert body_of(response)["result"]["content"] == [{"type": "text", "text": "0"}]


@pytest.mark.django_db
def test_a_database_gone_while_authenticating_is_a_503_too():
    request = wire.http_request(wire.message("tools/list"), token="mcpf_unknown")
    with database_gone():
        response = serve(server, request)
    # Refused before the body is read: no id to echo (spec §1.3 allows an id-less error).
    assert_retry_later(response, service="database", request_id=None)


def test_a_cache_gone_is_a_503_for_a_2025_session():
    assert_retry_later(legacy("initialize", target=cache_server), service="cache", request_id=3)
    assert_retry_later(
        legacy("tools/list", target=cache_server, session="s-1"), service="cache", request_id=3
    )


@pytest.mark.django_db
def test_a_bug_is_still_an_internal_error():
    response = call("broken")
    assert response.status_code == 200
    assert body_of(response)["error"] == {"code": -32603, "message": "Internal error"}
