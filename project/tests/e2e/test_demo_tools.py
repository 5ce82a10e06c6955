"""The demo's tools, code-registered and admin-defined, completed by real clients against a real server."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.docs_examples import example
from tests.e2e.demo_server import DemoServer, demo_server
from tests.e2e.node import node_report
from tests.e2e.terminal import matches

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoServer]:
    with demo_server(tmp_path_factory.mktemp("demo")) as server:
        yield server


class User:
    """Answers each elicitation from a script of answers, one per round, and remembers what it was asked."""

    def __init__(self, *answers: dict[str, Any]) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, dict[str, Any]]] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        self.asked.append((params.message, params.requested_schema))
        return types.ElicitResult(action="accept", content=self.answers.pop(0))


def call(demo: DemoServer, user: User, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
    async def scenario() -> types.CallToolResult:
        async with demo.client(mode="auto", elicitation_callback=user, cache=None) as client:
            assert client.protocol_version == "2026-07-28"
            return await client.call_tool(tool, arguments)

    return asyncio.run(scenario())


def test_signup_asks_re_asks_with_djangos_message_and_completes(demo):
    user = User(
        {"email": "not-an-email", "plan": "team", "age": 30},
        {"email": "ada@example.com"},
    )
    result = call(demo, user, "signup", {})
    assert not result.is_error
    assert result.structured_content == {"created": True, "email": "ada@example.com", "plan": "team"}
    (first_message, first_schema), (second_message, second_schema) = user.asked
    assert first_message.startswith("Create your account")
    assert list(first_schema["properties"]) == ["email", "plan", "age", "newsletter"]
    assert "Email (email): Enter a valid email address." in second_message
    assert list(second_schema["properties"]) == ["email"]
    assert second_schema["properties"]["email"]["default"] == "not-an-email"


def test_create_ticket_saves_exactly_one_ticket(demo):
    before = demo.rows("select count(*) from demo_ticket")[0][0]
    user = User({"body": "The lift is stuck on floor 3.", "priority": "high"})
    result = call(demo, user, "create_ticket", {"subject": "Lift stuck"})
    assert not result.is_error
    assert result.structured_content is not None
    pk = result.structured_content["pk"]
    assert demo.rows("select subject, body, priority from demo_ticket where id = ?", pk) == [
        ("Lift stuck", "The lift is stuck on floor 3.", "high")
    ]
    assert demo.rows("select count(*) from demo_ticket")[0][0] == before + 1


def test_an_admin_defined_form_stores_one_submission(demo):
    user = User({"email": "ada@example.com", "attending": "yes", "guests": 1, "diet": ["vegan"]})
    result = call(demo, user, "event_rsvp", {"name": "Ada"})
    assert not result.is_error
    assert result.structured_content is not None
    pk = result.structured_content["submission"]
    ((tool, data),) = demo.rows("select tool_name, data from mcpforms_submission where id = ?", pk)
    assert tool == "event_rsvp"
    assert json.loads(str(data)) == {
        "name": "Ada",
        "email": "ada@example.com",
        "attending": "yes",
        "guests": 1,
        "diet": ["vegan"],
    }


def test_the_typescript_client_completes_both_demo_tools(demo):
    report = node_report(HERE / "ts_demo_client.mjs", demo.url, demo.token)
    assert report["protocolVersion"] == "2026-07-28"
    assert report["signup"] == {"created": True, "email": "grace@example.com", "plan": "pro"}
    ticket = report["ticket"]
    assert demo.rows("select subject, priority from demo_ticket where id = ?", ticket["pk"]) == [
        ("Printer out of toner", "low")
    ]
    assert report["asked"][0].startswith("Create your account")
    assert report["asked"][1].startswith("Open a support ticket")


# ---- docs/tutorials/demo.md, run as written ----------------------------------------------------------------

DOCS_URL = "http://127.0.0.1:8000/mcp"


def pointed_at(demo: DemoServer, code: str) -> str:
    """The tutorial's example pointed at the test's demo server instead of `make run`'s."""
    assert DOCS_URL in code, f"the tutorial's example no longer calls the demo at {DOCS_URL}"
    return code.replace(DOCS_URL, demo.url)


def test_the_tutorials_token_line_makes_a_token_the_endpoint_takes(demo):
    # Run in the clone as the tutorial says, with this run's interpreter for the clone's .venv.
    line = example("demo-token")
    assert ".venv/bin/python manage.py" in line
    line = line.replace(".venv/bin/python", sys.executable)
    run = subprocess.run(
        ["bash", "-e", "-c", line + '\nprintf %s "$MCPFORMS_TOKEN"'],
        cwd=ROOT,
        env=demo.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("mcpf_") and run.stdout != demo.token

    async def file_a_ticket() -> types.CallToolResult:
        headers = {"Authorization": f"Bearer {run.stdout}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            Client(streamable_http_client(demo.url, http_client=http), cache=None) as client,
        ):
            arguments = {"subject": "With the tutorial's token", "body": "Filed.", "priority": "low"}
            return await client.call_tool("create_ticket", arguments)

    # create_ticket acts for a user: an anonymous call would be answered 401.
    result = asyncio.run(file_a_ticket())
    assert not result.is_error and result.structured_content is not None
    (row,) = demo.rows("select subject from demo_ticket where id = ?", result.structured_content["pk"])
    assert row == ("With the tutorial's token",)


def test_the_tutorials_python_walkthrough_prints_what_the_tutorial_shows(demo, tmp_path):
    script = tmp_path / "walkthrough.py"
    script.write_text(pointed_at(demo, example("demo-walkthrough")))
    env = {**os.environ, "MCPFORMS_TOKEN": demo.token}  # what the tutorial's export line sets
    run = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=False, env=env
    )
    assert run.returncode == 0, run.stderr
    assert matches(run.stdout, example("demo-walkthrough-output")), run.stdout


def test_the_tutorials_fastmcp_call_prints_what_the_tutorial_shows(demo):
    command = pointed_at(demo, example("demo-fastmcp-signup"))
    run = subprocess.run(
        ["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert run.returncode == 0, run.stderr
    assert matches(run.stdout, example("demo-fastmcp-signup-output")), run.stdout


def test_an_edit_made_by_another_process_shows_in_tools_list_at_once(demo):
    async def listed() -> dict[str, str]:
        async with demo.client(mode="2026-07-28", cache=None) as client:
            return {tool.name: tool.description or "" for tool in (await client.list_tools()).tools}

    def edit(code: str) -> None:
        # Another process, as an admin user's request would be: the server was not told anything.
        demo.manage("shell", "-c", "from mcpforms.models import FormDefinition as F\n" + code)

    assert "feedback" in asyncio.run(listed())
    edit("f = F.objects.get(name='feedback'); f.enabled = False; f.save()")
    assert "feedback" not in asyncio.run(listed())
    edit("f = F.objects.get(name='feedback'); f.enabled = True; f.description = 'Rate us.'; f.save()")
    assert asyncio.run(listed())["feedback"].startswith("Rate us.")
