"""What the client declared in *this* request, and what an input_required result needs of it (spec §6.2).

Capabilities are never remembered from an earlier request (spec §2). An input request the client cannot
answer never reaches the wire: the dispatcher turns it into -32021 naming what is missing.
"""

from __future__ import annotations

from collections.abc import Mapping
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
