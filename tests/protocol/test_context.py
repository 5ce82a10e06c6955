"""The handler's RequestContext: capability helpers, state minting bound to the call, progress."""

from __future__ import annotations

from typing import Any

import pytest

from mcpforms.fields import AutoFormField
from mcpforms.protocol import RequestContext
from mcpforms.protocol.state import InvalidState, load_state

FIELDS = (AutoFormField(name="name"),)


def context(**overrides: Any) -> RequestContext:
    values: dict[str, Any] = {
        "method": "tools/call",
        "binding": "tool:greet",
        "arguments": {"a": 1},
        "client_capabilities": {"elicitation": {}},
        "meta": {},
        "principal": "user:3",
    }
    return RequestContext(**(values | overrides))


def test_mint_state_binds_the_call():
    token = context().mint_state(answers={"name": "Ada"}, pending=["x"])
    state = load_state(token, server="default", tool="tool:greet", arguments={"a": 1}, principal="user:3")
    assert (state.answers, state.pending) == ({"name": "Ada"}, ("x",))
    others: list[dict[str, Any]] = [
        {"server": "billing"},
        {"tool": "prompt:greet"},
        {"arguments": {"a": 2}},
        {"principal": "anonymous"},
    ]
    for other in others:
        binding: dict[str, Any] = {
            "server": "default",
            "tool": "tool:greet",
            "arguments": {"a": 1},
            "principal": "user:3",
        } | other
        with pytest.raises(InvalidState):
            load_state(token, **binding)


def test_mint_state_uses_the_tool_version_unless_told_otherwise():
    ctx = context(state_version="v2")
    binding: dict[str, Any] = {
        "server": "default",
        "tool": "tool:greet",
        "arguments": {"a": 1},
        "principal": "user:3",
    }
    assert load_state(ctx.mint_state(answers={}), version="v2", **binding).version == "v2"
    assert load_state(ctx.mint_state(answers={}, version="v3"), version="v3", **binding)


def test_supports_elicitation():
    assert context().supports_elicitation()
    assert not context().supports_elicitation("url")


def test_progress_needs_a_token_and_a_listener():
    sent: list[dict[str, Any]] = []
    context(_notify=sent.append).report_progress(1)
    context(progress_token="t").report_progress(1)
    assert sent == []
    ctx = context(progress_token="t", _notify=sent.append)
    ctx.report_progress(1)
    ctx.report_progress(1)
    ctx.report_progress(2, message="half")
    assert [n["params"] for n in sent] == [
        {"progressToken": "t", "progress": 1},
        {"progressToken": "t", "progress": 2, "message": "half"},
    ]
