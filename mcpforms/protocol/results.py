"""What every result leaving the core carries (spec §4): ``resultType``, serverInfo, and cache hints.

Handlers return plain dicts and may omit all of this. Results are copied shallowly, never mutated, so a
handler can return a module-level constant; nothing here re-validates what our own code built.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from mcpforms.protocol.capabilities import missing_for
from mcpforms.protocol.errors import INTERNAL_ERROR, ProtocolError, missing_capability
from mcpforms.protocol.tasks import opted_in

logger = logging.getLogger(__name__)

SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
# Spec §4.2: these methods' complete results MUST carry ttlMs and cacheScope.
CACHEABLE_METHODS: frozenset[str] = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)


def stamp(result: Mapping[str, Any], *, server_info: Mapping[str, str]) -> dict[str, Any]:
    """Copy ``result`` with serverInfo added to its ``_meta``."""
    stamped = dict(result)
    meta = result.get("_meta")
    stamped["_meta"] = (
        {**meta, SERVER_INFO_KEY: server_info}
        if isinstance(meta, Mapping)
        else {SERVER_INFO_KEY: server_info}
    )
    return stamped


def finish_complete(
    result: Mapping[str, Any],
    *,
    method: str,
    server_info: Mapping[str, str],
    ttl_ms: int,
    cache_scope: str,
) -> dict[str, Any]:
    """Finish a complete result: ``resultType``, serverInfo, and cache hints when ``method`` needs them."""
    finished = stamp(result, server_info=server_info)
    finished["resultType"] = "complete"
    if method in CACHEABLE_METHODS:
        finished.setdefault("ttlMs", ttl_ms)
        finished.setdefault("cacheScope", cache_scope)
    return finished


def finish_input_required(
    result: Mapping[str, Any], *, capabilities: Mapping[str, Any], server_info: Mapping[str, str]
) -> dict[str, Any]:
    """Check an input_required result against the client, then finish it.

    An input request the client did not declare a capability for never reaches the wire: -32021 names
    what is missing (spec §6.2). Such results carry no cache hints (spec §4.2).
    """
    requests, state = result.get("inputRequests"), result.get("requestState")
    well_formed = (requests is None or isinstance(requests, Mapping)) and (
        state is None or isinstance(state, str)
    )
    if not well_formed or (not requests and state is None):
        logger.error("A handler returned a malformed input_required result: %r", result)
        raise ProtocolError(INTERNAL_ERROR, "Internal error")
    if requests and (missing := missing_for(requests, capabilities)):
        raise missing_capability(missing)
    finished = stamp(result, server_info=server_info)
    finished.pop("ttlMs", None)
    finished.pop("cacheScope", None)
    return finished


def is_task(method: str, result: Mapping[str, Any]) -> bool:
    """Whether ``result`` is a CreateTaskResult, which only ``tools/call`` may answer with."""
    return result.get("resultType") == "task" and method == "tools/call"


def finish_task(
    result: Mapping[str, Any], *, capabilities: Mapping[str, Any], server_info: Mapping[str, str]
) -> dict[str, Any]:
    """Finish a CreateTaskResult: serverInfo, and nothing of a complete result (no cache hints: its
    ``ttlMs`` is the task's). It goes only to a client that opted in to tasks in this request; a handler
    that made a task for another is a bug, answered with -32603."""
    if not opted_in(capabilities) or not isinstance(result.get("taskId"), str):
        logger.error("A handler returned a task to a request that did not opt in to tasks: %r", result)
        raise ProtocolError(INTERNAL_ERROR, "Internal error")
    return stamp(result, server_info=server_info)
