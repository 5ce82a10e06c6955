"""How many SQL queries each request of a 2025-11-25 form flow costs through the real endpoint, on the
default store (``DatabaseSessions``): a count is deterministic where a timing is not, and each query is
a round trip to the database that every request of the flow pays."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db.backends.utils import CursorWrapper
from django.http.response import HttpResponseBase
from django.test import RequestFactory, override_settings

from mcpforms.api import serve
from mcpforms.protocol.server import Server
from mcpforms.registry import register
from mcpforms.session_stores import DatabaseSessions
from tests.forms import SignupForm

# The call runs on a worker thread (it may stream progress), which sees committed rows only.
pytestmark = pytest.mark.django_db(transaction=True)
# Where every statement of every connection passes (Django's own, not in its stubs).
WRAPPER: Any = CursorWrapper


class QueryCount:
    """The SQL statements every connection runs, on every thread: a streamed call's helper thread keeps
    its connection between calls, so no hook on a connection made during the count would see them all.
    Each statement still runs; it is only written down on its way."""

    def __init__(self) -> None:
        self.statements: list[str] = []

    def __enter__(self) -> QueryCount:
        self.original = original = WRAPPER._execute_with_wrappers
        statements = self.statements

        def counted(cursor: CursorWrapper, sql: str, params: Any, many: bool, executor: Any) -> Any:
            statements.append(sql)
            return original(cursor, sql, params, many, executor)

        WRAPPER._execute_with_wrappers = counted
        return self

    def __exit__(self, *exc: object) -> None:
        WRAPPER._execute_with_wrappers = self.original


def send(server: Server, method: str, body: Any = None, **headers: str) -> HttpResponseBase:
    named = {name.replace("_", "-"): value for name, value in headers.items()}
    factory = RequestFactory()
    if method == "POST":
        request = factory.post("/mcp", json.dumps(body), content_type="application/json", headers=named)
    else:
        request = factory.generic(method, "/mcp", headers=named)
    request.user = AnonymousUser()
    return serve(server, request)


def content(response: HttpResponseBase) -> bytes:
    if response.streaming:
        return b"".join(response.streaming_content)  # type: ignore[attr-defined]
    body: bytes = response.content  # type: ignore[attr-defined]
    return body


def last_event(body: bytes) -> tuple[str, Any]:
    blocks = [block for block in body.decode().split("\n\n") if "id: " in block]
    fields = dict(line.split(": ", 1) for line in blocks[-1].splitlines() if ": " in line)
    return fields["id"], json.loads(fields["data"])


def flow_queries(server: Server) -> Iterator[tuple[str, int, list[str]]]:
    """Each request of the flow bench/legacy_flow.py sends: its name, its status and its statements."""
    hello = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "counting", "version": "1"},
        },
    }
    with QueryCount() as counted:
        opened = send(server, "POST", hello)
    yield "initialize", opened.status_code, counted.statements
    session = {"mcp_session_id": opened["Mcp-Session-Id"], "mcp_protocol_version": "2025-11-25"}
    with QueryCount() as counted:
        response = send(server, "POST", {"jsonrpc": "2.0", "method": "notifications/initialized"}, **session)
    yield "initialized", response.status_code, counted.statements
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    call["params"] = {"name": "signup", "arguments": {"email": "ada@example.com"}}
    with QueryCount() as counted:
        response = send(server, "POST", call, **session)
        question_id, question = last_event(content(response))
    yield "tools/call", response.status_code, counted.statements
    assert question["method"] == "elicitation/create", question
    answer = {"action": "accept", "content": {"plan": "pro"}}
    with QueryCount() as counted:
        response = send(server, "POST", {"jsonrpc": "2.0", "id": question["id"], "result": answer}, **session)
    yield "answer", response.status_code, counted.statements
    with QueryCount() as counted:
        response = send(server, "GET", last_event_id=question_id, **session)
        _, result = last_event(content(response))
    yield "GET", response.status_code, counted.statements
    assert result["id"] == 1 and "result" in result, result
    with QueryCount() as counted:
        response = send(server, "DELETE", **session)
    yield "DELETE", response.status_code, counted.statements


# What each request of the flow may cost, in statements sent to the database (BEGIN left out: SQLite
# sends it, PostgreSQL's driver opens a transaction without one). The answer POST runs the form's second
# round (its exactly-once record) and writes the call's last events.
EXPECTED = {"initialize": 3, "initialized": 1, "tools/call": 4, "answer": 7, "GET": 2, "DELETE": 4}


@override_settings(MCPFORMS={"ALLOW_ANONYMOUS": True, "SWEEP_EXPIRED": False})  # a sweep runs by chance
def test_each_request_of_a_2025_flow_sends_the_fewest_queries_it_needs():
    server = Server(name="counting", sessions=DatabaseSessions())
    register(SignupForm, server=server)
    counted = {}
    for name, status, statements in flow_queries(server):
        assert status in (200, 202), (name, status)
        counted[name] = [sql for sql in statements if sql.strip().upper() != "BEGIN"]
    assert {name: len(statements) for name, statements in counted.items()} == EXPECTED, counted
