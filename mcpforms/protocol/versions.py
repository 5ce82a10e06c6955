"""Protocol revisions and eras (spec §9).

A request of the *2026* era carries its version and capabilities in ``params._meta`` (2026-07-28 and
later); one of the *2025* era belongs to the ``initialize`` handshake and the sessions of 2025-11-25 and
earlier (``mcpforms.protocol.era2025.shim`` serves those).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from mcpforms.protocol.jsonrpc import is_response

VERSION_2026 = "2026-07-28"
# What server/discover advertises and what -32022 names; the two lists must agree (spec §1.2).
SUPPORTED_VERSIONS: tuple[str, ...] = (VERSION_2026,)
# What initialize negotiates, newest first: the counter-offer to any other version is the first.
VERSIONS_2025: tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26")
SESSION_HEADER = "mcp-session-id"
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"

Era = Literal["2026", "2025"]


def era_of(payload: Any, headers: Mapping[str, str] | None) -> Era:
    """Classify a decoded message as spec §9.2 does, body first.

    2025: a client's answer to a server request, an ``initialize`` without a 2026 ``_meta`` claim, and,
    over HTTP, a request naming a session or carrying no 2026 marker at all (no ``_meta`` version, no
    2026 ``MCP-Protocol-Version``). Everything else is validated as 2026, so a malformed 2026 envelope
    is rejected, never downgraded. Without transport headers (the core called directly) only the first
    two are 2025.
    """
    if not isinstance(payload, Mapping):
        return "2026"  # a batch or garbage: the 2026 ladder rejects it with the right error
    if is_response(payload):
        return "2025"
    method = payload.get("method")
    params = payload.get("params")
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    if isinstance(meta, Mapping) and PROTOCOL_VERSION_KEY in meta:
        return "2026"
    header = (headers or {}).get("mcp-protocol-version")
    if method == "initialize" and (header is None or header.strip() not in SUPPORTED_VERSIONS):
        return "2025"
    if headers is None:
        return "2026"
    if headers.get(SESSION_HEADER):
        return "2025"
    return "2026" if header is not None and header.strip() in SUPPORTED_VERSIONS else "2025"
