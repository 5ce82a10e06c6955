"""Serving a FormTool: which way a request asks, and a call that costs no SQL before its handler."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext

import mcpforms
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.server import Server
from mcpforms.registry import register
from mcpforms.serving import choose_way
from mcpforms.tools import tool_class
from tests.core_client import APPS, CoreClient, asked
from tests.forms import SignupForm


def context(capabilities: dict[str, Any]) -> RequestContext:
    return RequestContext(
        method="tools/call", binding="t", arguments={}, client_capabilities=capabilities, meta={}
    )


@pytest.mark.parametrize(
    ("capabilities", "way", "way_without_ui"),
    [
        (APPS, "app", None),
        (APPS | {"elicitation": {}}, "app", "form"),
        ({"elicitation": {}}, "form", "form"),
        ({}, None, None),
        ({"extensions": 1}, None, None),
    ],
)
def test_the_client_capabilities_choose_the_way(capabilities, way, way_without_ui):
    with_ui = tool_class(SignupForm)()
    without_ui = tool_class(SignupForm, path="form")()
    assert choose_way(context(capabilities), with_ui) == way
    assert choose_way(context(capabilities), without_ui) == way_without_ui


# Transactional, as a served request is: a test transaction would add a SAVEPOINT no request makes.
@pytest.mark.django_db(transaction=True)
def test_a_call_to_a_code_registered_tool_runs_no_sql_before_its_handler():
    server = Server()
    seen_by_the_handler: list[list[str]] = []

    @mcpforms.tool(SignupForm, server=server)
    def signup(request, form):
        seen_by_the_handler.append([query["sql"] for query in captured.captured_queries])
        return "done"

    client = CoreClient(server)
    with CaptureQueriesContext(connection) as captured:
        first = client.call("signup", {})  # nothing known: the user is asked
        assert asked(first, "signup")["mode"] == "form"
        assert captured.captured_queries == []
        client.call("signup", {"email": "ada@example.com", "plan": "pro", "age": 30})
    # The handler runs in a transaction (its writes commit or roll back together): SQLite's BEGIN is the
    # only statement before it, and PostgreSQL sends none. No catalog version, no lookup.
    assert seen_by_the_handler in ([[]], [["BEGIN"]])


@pytest.mark.django_db
def test_the_app_only_submit_tool_exists_only_for_hosts_that_render_the_ui():
    server = Server()
    register(SignupForm, server=server)
    plain = CoreClient(server)  # elicitation, no MCP Apps
    assert [tool["name"] for tool in plain.result("tools/list")["tools"]] == ["signup"]
    unknown = plain.send("tools/call", {"name": "signup_submit", "arguments": {"email": "a@b.co"}})["error"]
    assert unknown == {"code": -32602, "message": "Unknown tool: signup_submit"}
    host = CoreClient(server, capabilities=APPS)
    assert [tool["name"] for tool in host.result("tools/list")["tools"]] == ["signup", "signup_submit"]
    done = host.call("signup_submit", {"email": "ada@example.com", "plan": "pro"})
    assert done["structuredContent"]["email"] == "ada@example.com"


@pytest.mark.django_db(transaction=True)
def test_a_final_round_replayed_while_the_first_is_still_running_does_not_run_it_again():
    """Exactly once under concurrency: the replay waits on the first submission's record, then gets its
    outcome. PostgreSQL only: SQLite's in-memory test database refuses a second writer outright."""
    if connection.vendor != "postgresql":
        pytest.skip("needs a database where a second writer waits: PostgreSQL")
    server = Server()
    inside, release = threading.Event(), threading.Event()
    runs: list[str] = []

    @mcpforms.tool(SignupForm, server=server)
    def signup(request, form):
        runs.append(form.cleaned_data["email"])
        inside.set()
        release.wait(10)  # hold the transaction open while the replay arrives
        return f"Signed up {form.cleaned_data['email']}"

    client = CoreClient(server)
    first = client.call("signup", {})
    answer = {"signup": {"action": "accept", "content": {"email": "ada@example.com", "plan": "pro"}}}
    outcomes: dict[str, dict[str, Any]] = {}

    def submit(label: str) -> None:
        try:
            outcomes[label] = client.answer(first, "signup", **answer)
        finally:
            connections.close_all()

    running = threading.Thread(target=submit, args=("first",))
    running.start()
    assert inside.wait(10)
    replay = threading.Thread(target=submit, args=("replay",))
    replay.start()
    replay.join(0.5)
    assert replay.is_alive()  # waiting on the first submission's uncommitted record
    release.set()
    running.join(10)
    replay.join(10)
    assert runs == ["ada@example.com"]
    assert outcomes["replay"] == outcomes["first"]
    assert outcomes["first"]["content"][0]["text"] == "Signed up ada@example.com"
