"""Client capabilities of this request, and what an input_required result needs (spec §6.2)."""

from __future__ import annotations

import pytest

from mcpforms.protocol.capabilities import missing_for, supports_elicitation

FORM = {"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {}}}
URL = {"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": "https://x"}}
SAMPLING = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}}
SAMPLING_TOOLS = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1, "tools": []}}
ROOTS = {"method": "roots/list"}


@pytest.mark.parametrize(
    ("capabilities", "form", "url"),
    [
        ({}, False, False),
        ({"elicitation": {}}, True, False),
        ({"elicitation": {"form": {}}}, True, False),
        ({"elicitation": {"url": {}}}, False, True),
        ({"elicitation": {"form": {}, "url": {}}}, True, True),
        ({"elicitation": True}, False, False),
    ],
)
def test_supports_elicitation(capabilities, form, url):
    assert supports_elicitation(capabilities, "form") is form
    assert supports_elicitation(capabilities, "url") is url


@pytest.mark.parametrize(
    ("requests", "capabilities", "missing"),
    [
        ({"a": FORM}, {"elicitation": {}}, {}),
        ({"a": FORM}, {}, {"elicitation": {"form": {}}}),
        ({"a": URL}, {"elicitation": {}}, {"elicitation": {"url": {}}}),
        ({"a": FORM, "b": URL}, {}, {"elicitation": {"form": {}, "url": {}}}),
        ({"a": SAMPLING}, {"sampling": {}}, {}),
        ({"a": SAMPLING_TOOLS}, {"sampling": {}}, {"sampling": {"tools": {}}}),
        ({"a": SAMPLING_TOOLS}, {"sampling": {"tools": {}}}, {}),
        ({"a": ROOTS}, {"roots": {"listChanged": True}}, {}),
        ({"a": ROOTS, "b": SAMPLING}, {}, {"roots": {}, "sampling": {}}),
        ({"a": "junk", "b": {"method": "other"}}, {}, {}),
    ],
)
def test_missing_for(requests, capabilities, missing):
    assert missing_for(requests, capabilities) == missing
