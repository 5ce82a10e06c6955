"""Tools, prompts, resources and templates: what each accepts, its wire entry, how a template matches."""

from __future__ import annotations

from typing import Any

import pytest

from mcpforms.protocol.primitives import Prompt, PromptArgument, Resource, ResourceTemplate, Tool


def handler(ctx: Any, arguments: Any) -> dict[str, Any]:
    return {"content": []}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "bad name"}, "must be 1-64"),
        ({"name": "x" * 65}, "must be 1-64"),
        ({"description": ""}, "needs a description"),
        ({"input_schema": {"type": "array"}}, "root of input_schema"),
    ],
)
def test_tool_validation(kwargs, message):
    values: dict[str, Any] = {"name": "ok", "description": "d", "input_schema": {"type": "object"}} | kwargs
    with pytest.raises(ValueError, match=message):
        Tool(handler=handler, **values)


def test_entries_carry_only_what_is_set():
    full = Tool(
        "t",
        "d",
        {"type": "object"},
        handler,
        title="T",
        annotations={"readOnlyHint": True},
        output_schema={"type": "object"},
        meta={"ui": {}},
    )
    assert full.entry == {
        "name": "t",
        "title": "T",
        "description": "d",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": True},
        "_meta": {"ui": {}},
    }
    prompt = Prompt("p", "d", handler, arguments=(PromptArgument("a", "A"),))
    assert prompt.entry == {
        "name": "p",
        "description": "d",
        "arguments": [{"name": "a", "description": "A", "required": False}],
    }
    assert Resource("test://r", "r", handler, mime_type="text/plain").entry == {
        "uri": "test://r",
        "name": "r",
        "mimeType": "text/plain",
    }


@pytest.mark.parametrize(
    ("uri", "variables"),
    [
        ("test://t/1/data", {"id": "1"}),
        ("test://t/a%2Fb/data", {"id": "a/b"}),
        ("test://t/1/2/data", None),
        ("test://t//data", None),
        ("test://t/1/data/x", None),
        ("test://t.1.data", None),
    ],
)
def test_template_match(uri, variables):
    template = ResourceTemplate("test://t/{id}/data", "t", lambda ctx, uri, variables: {})
    assert template.match(uri) == variables
