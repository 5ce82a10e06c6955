"""Protocol revisions and eras (spec §9).

A *modern* request carries its version and capabilities in ``params._meta`` (2026-07-28 and later); a
*legacy* one belongs to the ``initialize`` handshake and the sessions of 2025-11-25 and earlier
(``mcpforms.protocol.legacy`` serves those).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

MODERN = "2026-07-28"
# What server/discover advertises and what -32022 names; the two lists must agree (spec §1.2).
SUPPORTED_VERSIONS: tuple[str, ...] = (MODERN,)
# What initialize negotiates, newest first: the counter-offer to any other version is the first.
LEGACY_VERSIONS: tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26")
SESSION_HEADER = "mcp-session-id"
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"

Era = Literal["modern", "legacy"]


def era_of(payload: Any, headers: Mapping[str, str] | None) -> Era:
    """Classify a decoded message as spec §9.2 does, body first.

    Legacy: a client's answer to a server request, an ``initialize`` without a modern ``_meta`` claim, and,
    over HTTP, a request naming a session or carrying no 2026 marker at all (no ``_meta`` version, no
    2026 ``MCP-Protocol-Version``). Everything else is validated as modern, so a malformed 2026 envelope
    is rejected, never downgraded. Without transport headers (the core called directly) only the first
    two are legacy.
    """
    if not isinstance(payload, Mapping):
        return "modern"  # a batch or garbage: the modern ladder rejects it with the right error
    method = payload.get("method")
    if method is None and ("result" in payload or "error" in payload):
        return "legacy"
    params = payload.get("params")
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    if isinstance(meta, Mapping) and PROTOCOL_VERSION_KEY in meta:
        return "modern"
    header = (headers or {}).get("mcp-protocol-version")
    if method == "initialize" and (header is None or header.strip() not in SUPPORTED_VERSIONS):
        return "legacy"
    if headers is None:
        return "modern"
    if headers.get(SESSION_HEADER):
        return "legacy"
    return "modern" if header is not None and header.strip() in SUPPORTED_VERSIONS else "legacy"
