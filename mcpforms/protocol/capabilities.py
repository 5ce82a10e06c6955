"""What the client declared in *this* request, and what an input_required result needs of it (spec §6.2).

Capabilities are never remembered from an earlier request (spec §2). An input request the client cannot
answer never reaches the wire: the dispatcher turns it into -32021 naming what is missing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal

ElicitationMode = Literal["form", "url"]


def supports_elicitation(capabilities: Mapping[str, Any], mode: ElicitationMode = "form") -> bool:
    """Tell whether the client accepts elicitations in ``mode``; a bare ``elicitation: {}`` means form."""
    elicitation = capabilities.get("elicitation")
    if not isinstance(elicitation, Mapping):
        return False
    if mode == "form" and "form" not in elicitation and "url" not in elicitation:
        return True
    return isinstance(elicitation.get(mode), Mapping)


def _needs(request: Any) -> dict[str, Any]:
    """Return the ClientCapabilities one embedded input request needs."""
    if not isinstance(request, Mapping):
        return {}
    method, params = request.get("method"), request.get("params")
    params = params if isinstance(params, Mapping) else {}
    if method == "elicitation/create":
        mode = "url" if params.get("mode") == "url" else "form"
        return {"elicitation": {mode: {}}}
    if method == "sampling/createMessage":
        uses_tools = "tools" in params or "toolChoice" in params
        return {"sampling": {"tools": {}}} if uses_tools else {"sampling": {}}
    if method == "roots/list":
        return {"roots": {}}
    return {}


def _declared(capabilities: Mapping[str, Any], need: dict[str, Any]) -> bool:
    ((name, detail),) = need.items()
    if name == "elicitation":
        mode: ElicitationMode = "url" if "url" in detail else "form"
        return supports_elicitation(capabilities, mode)
    declared = capabilities.get(name)
    if not isinstance(declared, Mapping):
        return False
    return all(isinstance(declared.get(sub), Mapping) for sub in detail)


def missing_for(input_requests: Mapping[str, Any], capabilities: Mapping[str, Any]) -> dict[str, Any]:
    """Return the capabilities ``input_requests`` need that the client did not declare ({} when none)."""
    missing: dict[str, Any] = {}
    for request in input_requests.values():
        need = _needs(request)
        if need and not _declared(capabilities, need):
            ((name, detail),) = need.items()
            missing.setdefault(name, {}).update(detail)
    return missing


# What a 2025-era session keeps of its client's declarations (mcpforms.protocol.era2025.shim). The session
# stands in for the envelope of every later request, so it must keep what the server reads, and it is
# stored for SESSION_MAX_AGE: it must keep nothing else, or one client's megabyte of capabilities is a
# megabyte a row.

# Every ClientCapabilities member the core reads, and the sub-members it reads of each (see _needs and
# supports_elicitation: only their presence matters, so each is kept as an empty object).
_READ_CAPABILITIES: dict[str, tuple[str, ...]] = {
    "elicitation": ("form", "url"),
    "sampling": ("tools",),
    "roots": (),
}
# An extension's settings are the extension's business (MCP Apps reads a list of MIME types); this much
# JSON fits any of them, and a client sending more for one loses that extension, not the session.
MAX_EXTENSION_BYTES = 2048
CLIENT_INFO_FIELDS = ("name", "title", "version")
CLIENT_INFO_LENGTH = 200


def retained_capabilities(capabilities: Any, *, extensions: Iterable[str]) -> dict[str, Any]:
    """What the server reads of ``capabilities``: the members the core checks, and the client's settings
    of the ``extensions`` this server offers, each within ``MAX_EXTENSION_BYTES``."""
    if not isinstance(capabilities, Mapping):
        return {}
    kept: dict[str, Any] = {}
    for name, members in _READ_CAPABILITIES.items():
        declared = capabilities.get(name)
        if isinstance(declared, Mapping):
            kept[name] = {member: {} for member in members if isinstance(declared.get(member), Mapping)}
    declared_extensions = capabilities.get("extensions")
    if isinstance(declared_extensions, Mapping):
        offered = {
            name: declared_extensions[name]
            for name in extensions
            if isinstance(declared_extensions.get(name), Mapping)
            and len(json.dumps(declared_extensions[name], default=str)) <= MAX_EXTENSION_BYTES
        }
        if offered:
            kept["extensions"] = offered
    return kept


def client_implementation(sent: Any) -> dict[str, str]:
    """What is kept of a client's ``clientInfo`` (a session, a submission): its Implementation strings,
    each cut to ``CLIENT_INFO_LENGTH``, so that no client makes a stored row megabytes long."""
    if not isinstance(sent, Mapping):
        return {}
    return {
        name: sent[name][:CLIENT_INFO_LENGTH]
        for name in CLIENT_INFO_FIELDS
        if isinstance(sent.get(name), str)
    }
