"""The official Python client (``mcp`` 2.3) against a real server process, in both connect modes."""

from __future__ import annotations

import asyncio
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, MCPError

MODES = ["2026-07-28", "auto"]


async def answer(context: Any, params: Any) -> types.ElicitResult:
    names = params.requested_schema["properties"]
    return types.ElicitResult(action="accept", content={n: "Ada" if n == "name" else "blue" for n in names})


def client(url: str, mode: str) -> Client:
    # cache=None: the default cache honours ttlMs, and each test must see the server's own answer.
    return Client(url, mode=mode, elicitation_callback=answer, cache=None)


@pytest.mark.parametrize("mode", MODES)
def test_list_call_answer_complete(server_url, mode):
    async def scenario() -> None:
        async with client(server_url, mode) as session:
            # "auto" silently falls back to the 2025 handshake if server/discover misbehaves.
            assert session.protocol_version == "2026-07-28"
            listed = await session.list_tools()
            assert "test_input_required_result_elicitation" in [tool.name for tool in listed.tools]
            result = await session.call_tool("test_input_required_result_elicitation", {})
            assert result.content[0].text == "Hello, Ada!"  # type: ignore[union-attr]
            rounds = await session.call_tool("test_input_required_result_multi_round", {})
            assert rounds.content[0].text == "Ada likes blue."  # type: ignore[union-attr]

    asyncio.run(scenario())


def test_rounds_by_hand(server_url):
    async def scenario() -> None:
        async with client(server_url, "2026-07-28") as session:
            first = await session.session.call_tool(
                "test_input_required_result_request_state", {}, allow_input_required=True
            )
            assert isinstance(first, types.InputRequiredResult)
            assert first.input_requests is not None and first.request_state
            responses = {"confirm": {"action": "accept", "content": {"ok": True}}}
            done = await session.call_tool(
                "test_input_required_result_request_state",
                {},
                input_responses=responses,  # type: ignore[arg-type]
                request_state=first.request_state,
            )
            assert "state-ok" in done.content[0].text  # type: ignore[union-attr]
            with pytest.raises(MCPError) as raised:
                await session.call_tool(
                    "test_input_required_result_request_state",
                    {},
                    input_responses=responses,  # type: ignore[arg-type]
                    request_state=first.request_state + "-TAMPERED",
                )
            assert raised.value.error.code == -32602

    asyncio.run(scenario())


def test_progress_streams(server_url):
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    async def scenario() -> None:
        async with client(server_url, "2026-07-28") as session:
            result = await session.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
            assert not result.is_error

    asyncio.run(scenario())
    assert seen == [0, 50, 100]
