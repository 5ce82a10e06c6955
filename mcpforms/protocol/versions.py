"""Protocol revisions and eras (spec §9).

A *modern* request carries its version and capabilities in ``params._meta`` (2026-07-28 and later); a
*legacy* one belongs to the ``initialize`` handshake of 2025-11-25 and earlier. This module only decides
which is which: the legacy era is not served yet, so a legacy handshake is told which versions are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

MODERN = "2026-07-28"
# What server/discover advertises and what -32022 names; the two lists must agree (spec §1.2).
SUPPORTED_VERSIONS: tuple[str, ...] = (MODERN,)
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"

Era = Literal["modern", "legacy"]


def era_of(method: str, params: Mapping[str, Any], headers: Mapping[str, str] | None) -> Era:
    """Classify a request as spec §9.2 does, body first.

    Only ``initialize`` without a modern ``_meta`` claim and without a modern version header is legacy:
    everything else is validated as modern, so a malformed envelope is rejected, never downgraded.
    """
    if method != "initialize":
        return "modern"
    meta = params.get("_meta")
    if isinstance(meta, Mapping) and PROTOCOL_VERSION_KEY in meta:
        return "modern"
    header = (headers or {}).get("mcp-protocol-version")
    if header is not None and header.strip() in SUPPORTED_VERSIONS:
        return "modern"
    return "legacy"
