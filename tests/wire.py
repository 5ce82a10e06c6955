"""What a 2026-07-28 client puts on the wire, written once for the tests: the ``_meta`` envelope every
request carries (spec §2), the JSON-RPC request around it, the headers that mirror it over HTTP (§8.2),
and a Django request holding both. A test that is about one of these details spells it out instead."""

from __future__ import annotations

import copy
import json
from typing import Any

from django.http import HttpRequest
from django.test import RequestFactory

from mcpforms.protocol.context import RequestContext

VERSION = "2026-07-28"
ELICITATION: dict[str, Any] = {"elicitation": {"form": {}}}
# A host that renders MCP Apps: it alone is offered the app-only submit tools.
APPS: dict[str, Any] = {
    "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
}


def meta(
    capabilities: dict[str, Any] | None = None,
    *,
    version: str = VERSION,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``_meta`` of a request: its protocol version and the client's capabilities (none by default)."""
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        # A copy: a test that edits what it sent cannot change what another test sends.
        "io.modelcontextprotocol/clientCapabilities": copy.deepcopy(capabilities or {}),
        **(extra or {}),
    }


def message(
    method: str,
    params: dict[str, Any] | None = None,
    *,
    capabilities: dict[str, Any] | None = None,
    request_id: int = 1,
) -> dict[str, Any]:
    """A JSON-RPC request for ``method`` with ``params`` and the ``_meta`` envelope."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {**(params or {}), "_meta": meta(capabilities)},
    }


def initialize(
    capabilities: dict[str, Any] | None = None, *, client: str = "tests", version: str = "2025-11-25"
) -> dict[str, Any]:
    """The ``initialize`` request a 2025-era client opens its session with."""
    return {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": capabilities or {},
            "clientInfo": {"name": client, "version": "1"},
        },
    }


def headers(payload: dict[str, Any]) -> dict[str, str]:
    """The headers that mirror ``payload`` over HTTP: its version and method, and the name of the tool,
    prompt, resource or task it addresses (§8.2). Header names as Django's test ``Client(headers=...)``
    takes."""
    sent = {"MCP-Protocol-Version": VERSION, "Mcp-Method": payload["method"]}
    params = payload.get("params") or {}
    target = params.get("name", params.get("uri", params.get("taskId")))
    if isinstance(target, str):
        sent["Mcp-Name"] = target
    return sent


def http_request(payload: dict[str, Any], *, token: str | None = None, **extra: Any) -> HttpRequest:
    """``POST /mcp`` of ``payload`` as a 2026-07-28 client sends it, with ``token`` as its bearer token;
    ``extra`` are WSGI environ entries, as ``RequestFactory`` takes them."""
    sent = headers(payload)
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    return RequestFactory().post(
        "/mcp", json.dumps(payload), content_type="application/json", headers=sent, **extra
    )


def whoami(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """Say who is asking."""
    return {"content": [{"type": "text", "text": ctx.principal}]}
