"""Which era a message belongs to (spec §9.2), body first, then the transport's headers."""

from __future__ import annotations

from typing import Any

import pytest

from mcpforms.protocol.versions import PROTOCOL_VERSION_KEY, VERSION_2026, era_of

CLAIM = {"_meta": {PROTOCOL_VERSION_KEY: VERSION_2026}}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
SESSION = {"mcp-session-id": "s1"}
MODERN = {"mcp-protocol-version": VERSION_2026}


@pytest.mark.parametrize(
    ("payload", "headers", "era"),
    [
        # A client's answer to a server request: only a 2025 session has those.
        ({"jsonrpc": "2.0", "id": "e-1", "result": {"action": "accept"}}, None, "2025"),
        ({"jsonrpc": "2.0", "id": "e-1", "error": {"code": 1, "message": "no"}}, {}, "2025"),
        # initialize is the 2025 handshake, unless it claims 2026 in its body or its header.
        (INITIALIZE, None, "2025"),
        (INITIALIZE, {}, "2025"),
        (INITIALIZE, MODERN, "2026"),
        ({**INITIALIZE, "params": CLAIM}, None, "2026"),
        # The core called directly (no headers): anything else is validated as 2026.
        (LIST, None, "2026"),
        # Over HTTP: a session, or no 2026 marker at all, is 2025.
        (LIST, SESSION, "2025"),
        (LIST, {}, "2025"),
        (LIST, MODERN, "2026"),
        ({**LIST, "params": CLAIM}, SESSION, "2026"),  # the body's claim comes first
        (LIST, {"mcp-protocol-version": "2025-11-25"}, "2025"),
        # Not one message: the 2026 ladder refuses it with the right error.
        ([LIST], SESSION, "2026"),
        ("junk", {}, "2026"),
        # A method that is no string is no answer: an invalid request of the era it would have had.
        ({"jsonrpc": "2.0", "id": 1, "method": None, "result": {}}, None, "2026"),
    ],
)
def test_era_of(payload: Any, headers: dict[str, str] | None, era: str):
    assert era_of(payload, headers) == era
