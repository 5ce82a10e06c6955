"""The clients people run today, on the 2025-11-25 protocol, complete the demo's signup against a real
server: the user is asked through a server-sent elicitation on a stream the server closes, answers in a
separate POST, and the result arrives on the resumed stream."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from tests.e2e.demo_server import DEMO_TOOLS, DemoServer, demo_server
from tests.e2e.node import node_report

ANSWERS = {"email": "grace@example.com", "plan": "pro", "newsletter": False}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoServer]:
    with demo_server(tmp_path_factory.mktemp("legacy")) as server:
        yield server


def python_legacy_signup(demo: DemoServer, action: str) -> tuple[str | None, types.CallToolResult, list[str]]:
    asked: list[str] = []

    async def answer(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        names = [name for name in params.requested_schema["properties"] if name in ANSWERS]
        content = {name: ANSWERS[name] for name in names} if action == "accept" else None
        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    async def scenario() -> tuple[str | None, types.CallToolResult]:
        async with Client(demo.url, mode="legacy", elicitation_callback=answer, cache=None) as client:
            return client.protocol_version, await client.call_tool("signup", {})

    version, result = asyncio.run(scenario())
    return version, result, asked


def test_the_python_client_in_legacy_mode_completes_signup(demo):
    version, result, asked = python_legacy_signup(demo, "accept")
    assert version == "2025-11-25"
    assert asked == ["Create your account"]
    assert not result.is_error
    assert result.structured_content == {"created": True, "email": "grace@example.com", "plan": "pro"}


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_a_python_legacy_user_who_declines_or_cancels_submits_nothing(demo, action):
    _, result, _ = python_legacy_signup(demo, action)
    assert result.is_error
    assert f"{action}" in result.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("sdk", ["v1", "v2"])
def test_the_typescript_clients_on_their_default_options_complete_signup(demo, sdk):
    report = node_report("ts_era2025_client.mjs", sdk, demo.url, "accept")
    assert report["protocolVersion"] == "2025-11-25"
    assert report["asked"] == ["Create your account"]
    assert report["isError"] is False
    assert report["structuredContent"] == {"created": True, "email": "grace@example.com", "plan": "pro"}


@pytest.mark.parametrize(("sdk", "action"), [("v1", "decline"), ("v2", "cancel")])
def test_a_typescript_user_who_declines_or_cancels_submits_nothing(demo, sdk, action):
    report = node_report("ts_era2025_client.mjs", sdk, demo.url, action)
    assert report["isError"] is True
    assert action in report["text"]


def test_a_legacy_completion_is_stored_once_and_the_session_ends_when_the_client_closes(demo):
    completed = demo.rows("select count(*) from mcpforms_completedflow")[0][0]
    sessions = demo.rows("select count(*) from mcpforms_era2025session")[0][0]
    python_legacy_signup(demo, "accept")
    assert demo.rows("select count(*) from mcpforms_completedflow")[0][0] == completed + 1
    # The Python client DELETEs its session on close; the TypeScript ones leave theirs to expire.
    assert demo.rows("select count(*) from mcpforms_era2025session")[0][0] == sessions


def test_a_legacy_client_with_a_token_acts_for_its_user_and_one_without_sees_what_signing_in_opens(demo):
    answers: dict[str, Any] = {"body": "The lift is stuck on floor 3.", "priority": "high"}

    async def answer(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content=answers)

    async def scenario() -> tuple[list[str], list[str], types.CallToolResult]:
        async with Client(demo.url, mode="legacy", cache=None) as anonymous:
            seen_anonymously = [tool.name for tool in (await anonymous.list_tools()).tools]
        async with demo.client(mode="legacy", elicitation_callback=answer, cache=None) as staff:
            assert staff.protocol_version == "2025-11-25"
            seen_by_staff = [tool.name for tool in (await staff.list_tools()).tools]
            ticket = await staff.call_tool("create_ticket", {"subject": "Lift stuck"})
        return seen_anonymously, seen_by_staff, ticket

    seen_anonymously, seen_by_staff, ticket = asyncio.run(scenario())
    # The demo signs in with OAuth: an anonymous caller is shown the tools signing in opens (calling one
    # answers 401 and starts sign-in); no MCP Apps declared, so no app-only submit tool either.
    assert seen_anonymously == sorted(DEMO_TOOLS)
    assert "create_ticket" in seen_by_staff
    assert not ticket.is_error and ticket.structured_content is not None
    pk = ticket.structured_content["pk"]
    assert demo.rows("select subject, priority from demo_ticket where id = ?", pk) == [("Lift stuck", "high")]
    # The token did the work: its last use is recorded.
    assert demo.rows("select count(*) from mcpforms_accesstoken where last_used_at is not null") == [(1,)]
