"""The django-ninja edge: MCP 2026-07-28 over Streamable HTTP on one URL (spec §8).

Mount it with one line in the project's urls::

    path("mcp", mcpforms.api.urls)

This module owns what only HTTP knows: the Host and Origin checks, the verb, the body bytes, the status
code and the choice between a JSON body and an SSE stream. Everything else is ``mcpforms.protocol``'s.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Iterator
from typing import Any

from django.core.exceptions import DisallowedHost, RequestDataTooBig
from django.db import connections
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from ninja import NinjaAPI

from mcpforms.conf import conf
from mcpforms.protocol.dispatch import Reply
from mcpforms.protocol.errors import INTERNAL_ERROR, INVALID_REQUEST, ProtocolError
from mcpforms.protocol.jsonrpc import decode, encode, error_response
from mcpforms.protocol.methods import INPUT_REQUIRED_METHODS
from mcpforms.protocol.server import Server, default_server

logger = logging.getLogger("mcpforms.api")

JSON = "application/json"
# Every verb is routed here so that each refusal still carries a JSON-RPC body (spec §9.4).
VERBS = ["POST", "GET", "DELETE", "PUT", "PATCH"]


def _json(reply: Reply) -> HttpResponse:
    if reply.body is None:
        return HttpResponse(status=reply.status)
    return HttpResponse(encode(reply.body), status=reply.status, content_type=JSON)


def _refusal(status: int, message: str) -> HttpResponse:
    # No id: these refusals happen before the body is read (spec §1.3 allows an id-less error).
    return _json(Reply(status, error_response(None, ProtocolError(INVALID_REQUEST, message))))


def _origin_allowed(request: HttpRequest, host: str) -> bool:
    """Spec §8.6: a browser's Origin must be the endpoint's own or one the settings allow."""
    origin = request.META.get("HTTP_ORIGIN")
    if origin is None:
        return True  # not a browser: DNS rebinding needs one, and Host was already checked
    return origin == f"{request.scheme}://{host}" or origin in conf.ALLOWED_ORIGINS


def _mcp_headers(request: HttpRequest) -> dict[str, str]:
    """The ``MCP-*`` and ``Mcp-*`` headers, names lower-cased; read from META, the cheapest way in.

    WSGI spells a header's dashes as underscores, and servers drop headers whose names hold underscores,
    so reading the dashes back is exact for every name that can arrive.
    """
    return {
        key[5:].lower().replace("_", "-"): value
        for key, value in request.META.items()
        if key.startswith("HTTP_MCP_")
    }


def _wants_progress(payload: Any) -> bool:
    """A handler may stream progress only when the request carries a progressToken (spec §8.5)."""
    if not isinstance(payload, dict):
        return False
    method = payload.get("method")
    if not (isinstance(method, str) and method in INPUT_REQUIRED_METHODS):
        return False
    params = payload.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and meta.get("progressToken") is not None


def _sse(message: dict[str, Any]) -> bytes:
    return b"event: message\ndata: " + encode(message) + b"\n\n"


def _with_progress(server: Server, payload: Any, headers: dict[str, str], user: Any) -> HttpResponseBase:
    """Run the handler on a worker thread and stream what it reports.

    JSON when the handler finishes without reporting anything; otherwise SSE: the progress notifications
    as they come, then the response, which ends the stream (spec §8.3). Never a request on the stream.
    """
    events: queue.SimpleQueue[dict[str, Any] | Reply] = queue.SimpleQueue()

    def work() -> None:
        try:
            events.put(server.handle(payload, headers=headers, user=user, notify=events.put))
        finally:
            connections.close_all()  # this thread's own connections only

    threading.Thread(target=work, name="mcpforms-progress", daemon=True).start()
    first = events.get()
    if isinstance(first, Reply):
        return _json(first)

    def stream() -> Iterator[bytes]:
        event: dict[str, Any] | Reply = first
        while not isinstance(event, Reply):
            yield _sse(event)
            event = events.get()
        if event.body is not None:
            yield _sse(event.body)

    response = StreamingHttpResponse(stream(), content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # let nginx pass each event on at once
    return response


def serve(server: Server, request: HttpRequest) -> HttpResponseBase:
    """Answer one HTTP request to the MCP endpoint of ``server``; a bug here is -32603, never a 500."""
    try:
        return _serve(server, request)
    except Exception:
        logger.exception("The MCP endpoint failed")
        return _json(Reply(200, error_response(None, ProtocolError(INTERNAL_ERROR, "Internal error"))))


def _serve(server: Server, request: HttpRequest) -> HttpResponseBase:
    try:
        # get_host() is what enforces ALLOWED_HOSTS, the first defence against DNS rebinding (spec §8.6).
        host = request.get_host()
    except DisallowedHost:
        return _refusal(403, "Forbidden: this Host is not allowed")
    if not _origin_allowed(request, host):
        return _refusal(403, "Forbidden: this Origin is not allowed")
    if request.method != "POST":
        # 2026-07-28 has no GET stream and no sessions to DELETE (spec §8.1).
        response = _refusal(405, f"Method Not Allowed: {request.method}; this endpoint takes POST")
        response["Allow"] = "POST"
        return response
    try:
        payload = decode(request.body)
    except RequestDataTooBig:
        return _refusal(413, "Request body too large (DATA_UPLOAD_MAX_MEMORY_SIZE)")
    except ProtocolError as error:
        return _json(Reply(400, error_response(None, error)))
    headers = _mcp_headers(request)
    user = getattr(request, "user", None)
    if _wants_progress(payload):
        if user is not None:
            user.is_authenticated  # noqa: B018  (resolve the lazy user here, not on the worker thread)
        return _with_progress(server, payload, headers, user)
    return _json(server.handle(payload, headers=headers, user=user))


def build_api(server: Server | None = None, *, namespace: str = "mcpforms") -> NinjaAPI:
    """Return a NinjaAPI serving ``server`` (the default one if None) at the root of where it is mounted.

    A second endpoint (another server) needs its own ``namespace``.
    """
    api = NinjaAPI(
        title="MCP",
        urls_namespace=namespace,
        docs_url=None,
        openapi_url=None,
    )

    @api.api_operation(VERBS, "", include_in_schema=False)
    def mcp(request: HttpRequest) -> HttpResponseBase:
        return serve(server or default_server, request)

    return api


api = build_api()
urls = api.urls
"""``path("mcp", mcpforms.api.urls)`` serves the default server at /mcp."""
