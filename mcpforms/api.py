"""The django-ninja edge: MCP over Streamable HTTP on one URL, for 2026-07-28 and 2025-era clients (spec §8).

Mount it with one line in the project's urls::

    path("mcp", mcpforms.api.urls)

This module owns what only HTTP knows: the Host and Origin checks, the verb, the body bytes, the status
code and the choice between a JSON body and an SSE stream. Everything else is ``mcpforms.protocol``'s.
"""

from __future__ import annotations

import contextvars
import logging
import math
import os
import queue
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import DisallowedHost, RequestDataTooBig
from django.core.handlers.asgi import ASGIRequest
from django.db import close_old_connections, connections, reset_queries
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.urls import re_path
from ninja import NinjaAPI
from ninja.errors import HttpError

from mcpforms.auth import (
    Auth,
    Challenge,
    access,
    authenticate,
    challenge,
    configured_auth,
    step_up,
)
from mcpforms.conf import conf
from mcpforms.protocol.context import Access
from mcpforms.protocol.envelope import LOG_LEVEL_KEY
from mcpforms.protocol.era2025 import shim as era2025
from mcpforms.protocol.era2025.sessions import Event
from mcpforms.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    UNAVAILABLE,
    InsufficientScope,
    ProtocolError,
    SignInRequired,
    http_status,
    unavailable,
    unreachable_service,
)
from mcpforms.protocol.jsonrpc import decode, encode, error_response
from mcpforms.protocol.methods import INPUT_REQUIRED_METHODS
from mcpforms.protocol.reply import Reply
from mcpforms.protocol.server import Server, default_server
from mcpforms.protocol.versions import SESSION_HEADER, era_of
from mcpforms.readiness import unmigrated_message

logger = logging.getLogger(__name__)

JSON = "application/json"
SSE = "text/event-stream"
# Every verb is routed here so that each refusal still carries a JSON-RPC body (spec §9.4).
VERBS = ["POST", "GET", "DELETE", "PUT", "PATCH"]
# The name of the route every endpoint adds for its trailing slash: it also tells an MCP endpoint from
# any other django-ninja API mounted in a project (mcpforms.oauth.validator looks for it).
SLASH_ROUTE = "endpoint-slash"


def _json(reply: Reply) -> HttpResponse:
    if reply.events is not None:
        response = HttpResponse(b"".join(_event(event) for event in reply.events), content_type=SSE)
        response["Cache-Control"] = "no-cache"
    elif reply.body is None:
        response = HttpResponse(status=reply.status)
    else:
        response = HttpResponse(encode(reply.body), status=reply.status, content_type=JSON)
    for name, value in reply.headers.items():
        response[name] = value
    if reply.status == http_status(UNAVAILABLE):
        # A database or cache out of reach (RFC 9110 §10.2.3): come back after the delay a 2025-era
        # client is told to reconnect after, at least a second.
        response["Retry-After"] = str(max(1, math.ceil(conf.RETRY_MS / 1000)))
    return response


def _event(event: Event) -> bytes:
    """One SSE event with its id, so the client can resume after it (2025-11-25, SEP-1699)."""
    lines = [f"id: {event.id}"]
    if event.retry_ms is not None:
        lines.append(f"retry: {event.retry_ms}")
    data = encode(event.data).decode() if event.data is not None else ""
    lines.append(f"data: {data}")
    return ("\n".join(lines) + "\n\n").encode()


def _challenged(request: HttpRequest, auth: Sequence[Auth], reply: Reply) -> HttpResponse:
    """The response of ``reply``, with the challenge the core asked for: a 401 (``SignInRequired``)
    says how to sign in, a 403 (``InsufficientScope``) which scopes to ask for (RFC 6750 §3, RFC 9728
    §5.1). MCP hosts start sign-in, or step up, on exactly these."""
    response = _json(reply)
    if reply.status == SignInRequired.status:
        response["WWW-Authenticate"] = challenge(request, auth)
    elif reply.status == InsufficientScope.status:
        error = reply.body.get("error") if isinstance(reply.body, dict) else None
        data = error.get("data") if isinstance(error, dict) else None
        scopes = data.get("scopes") if isinstance(data, dict) else None
        value = step_up(request, auth, scopes) if isinstance(scopes, list) else None
        if value is not None:
            response["WWW-Authenticate"] = value
    return response


def _refusal(status: int, message: str) -> HttpResponse:
    # No id: these refusals happen before the body is read (spec §1.3 allows an id-less error).
    return _json(Reply(status, error_response(None, ProtocolError(INVALID_REQUEST, message))))


def _unauthorized(request: HttpRequest) -> str:
    if "HTTP_AUTHORIZATION" in request.META:
        return "Unauthorized: the credentials are unknown, expired or revoked"
    return "Unauthorized: send an access token as 'Authorization: Bearer <token>'"


def _quoted(header: str) -> str:
    """A header's value as a refusal may quote it: cut short, since anyone may send anything."""
    return repr(header if len(header) <= 200 else header[:200] + "…")


def _host_refused(request: HttpRequest) -> str:
    sent = request.META.get("HTTP_X_FORWARDED_HOST") or request.META.get("HTTP_HOST", "")
    return (
        f"Forbidden: the Host {_quoted(sent)} is not allowed; add it to ALLOWED_HOSTS in the Django settings "
        "if this site is served under that name"
    )


def _origin_refused(request: HttpRequest, host: str) -> str:
    # Behind a proxy that ends TLS, Django sees http unless SECURE_PROXY_SSL_HEADER says otherwise: a
    # browser's https Origin then differs from the endpoint's own by its scheme alone.
    expected = f"{request.scheme}://{host}"
    return (
        f"Forbidden: the Origin {_quoted(request.META.get('HTTP_ORIGIN', ''))} is not allowed; this endpoint "
        f"accepts its own, {expected!r}, and those in MCPFORMS['ALLOWED_ORIGINS']. Behind a proxy that "
        "serves https, set SECURE_PROXY_SSL_HEADER so that Django sees the scheme the browser used; to let "
        "another site's pages call the endpoint, add their origin to MCPFORMS['ALLOWED_ORIGINS']"
    )


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


def _may_notify(payload: Any, headers: dict[str, str]) -> bool:
    """Whether the handler may send notifications before its result, so the answer may be a stream:
    progress for a request with a progressToken, log messages for a 2026 request with a logLevel and for
    any 2025-era request (spec §8.5; 2025-11-25 logging)."""
    if not isinstance(payload, dict):
        return False
    method = payload.get("method")
    if not (isinstance(method, str) and method in INPUT_REQUIRED_METHODS):
        return False
    if era_of(payload, headers) == "2025":
        return True
    params = payload.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and (meta.get("progressToken") is not None or LOG_LEVEL_KEY in meta)


def _sse(message: dict[str, Any]) -> bytes:
    return b"event: message\ndata: " + encode(message) + b"\n\n"


def _frames(item: dict[str, Any] | Reply) -> Iterator[bytes]:
    """The SSE bytes of one thing the handler's thread produced: a notification, or the final reply."""
    if not isinstance(item, Reply):
        yield _sse(item)
    elif item.events is not None:  # a 2025-era call that now waits on the client
        yield from (_event(event) for event in item.events)
    elif item.body is not None:
        yield _sse(item.body)


class _Helpers:
    """The threads that run the handlers of streamed calls, kept from one call to the next.

    A thread per call opened a database connection for each call and closed it after: on a deployment
    with persistent connections (``CONN_MAX_AGE``) the dearest part of every 2025-era ``tools/call``. A
    helper's connections live through its jobs as a request thread's live through requests: before and
    after each job it runs what Django's ``request_started`` and ``request_finished`` run for them
    (``reset_queries``, ``close_old_connections``), so ``CONN_MAX_AGE``, ``CONN_HEALTH_CHECKS`` and a
    connection an error broke are handled as on the request's own thread. Each job runs in a context of
    its own, as on a new thread: what one handler activates (a language, a time zone) never reaches the
    next.

    A helper starts whenever none is idle, so a slow handler never holds up another call; at most
    ``KEEP`` idle ones stay, and one idle for ``IDLE_SECONDS`` leaves, closing its connections.
    """

    KEEP = 4
    IDLE_SECONDS = 300.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[queue.SimpleQueue[Callable[[], None] | threading.Event]] = []
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._forked)

    def _forked(self) -> None:
        # A forked worker (gunicorn --preload) has only the thread that forked: the helpers, and whatever
        # held the lock, stayed behind in the parent.
        self._lock = threading.Lock()
        self._idle = []

    def run(self, job: Callable[[], None]) -> None:
        """Run ``job`` on an idle helper, or on a new one when every helper is busy."""
        with self._lock:
            inbox = self._idle.pop() if self._idle else None
        if inbox is None:
            inbox = queue.SimpleQueue()
            threading.Thread(target=self._serve, args=(inbox,), name="mcpforms-progress", daemon=True).start()
        inbox.put(job)

    def retire(self) -> None:
        """Send the idle helpers away, once each has closed its connections (a test's database is dropped
        at the end of the run, which no open connection may be left on)."""
        with self._lock:
            leaving, self._idle = self._idle, []
        for inbox in leaving:
            gone = threading.Event()
            inbox.put(gone)
            gone.wait()

    def _serve(self, inbox: queue.SimpleQueue[Callable[[], None] | threading.Event]) -> None:
        gone = None
        try:
            while True:
                try:
                    job = inbox.get(timeout=self.IDLE_SECONDS)
                except queue.Empty:
                    with self._lock:
                        if inbox not in self._idle:
                            continue  # handed a job at this very moment: it is on its way
                        self._idle.remove(inbox)
                    return
                if isinstance(job, threading.Event):
                    gone = job
                    return
                # The job runs whatever the checks of its connections meet: its own queries then fail
                # as a request's would, and answer so. A helper whose connections cannot be checked
                # leaves (with them) rather than serve another call.
                checked = self._housekeeping(queries=True)
                contextvars.Context().run(job)
                checked = self._housekeeping() and checked
                with self._lock:
                    if not checked or len(self._idle) >= self.KEEP:
                        return
                    self._idle.append(inbox)
        finally:
            try:
                connections.close_all()  # this thread's own connections only
            finally:
                if gone is not None:
                    gone.set()

    @staticmethod
    def _housekeeping(*, queries: bool = False) -> bool:
        """What ``request_started`` (``queries``) or ``request_finished`` does to this thread's
        connections; False when it failed."""
        try:
            if queries:
                reset_queries()
            close_old_connections()
        except Exception:
            logger.warning("A streamed call's thread could not check its database connections", exc_info=True)
            return False
        return True


_helpers = _Helpers()


def _streamed(
    server: Server,
    payload: Any,
    headers: dict[str, str],
    user: Any,
    granted: Access,
    *,
    address: str | None,
    asgi: bool,
) -> HttpResponseBase | Reply:
    """Run the handler on a helper thread and stream what it sends before its result.

    The reply itself when the handler finishes without reporting anything (sent as JSON); otherwise
    SSE: the progress notifications as they come, then the response, which ends the stream (spec §8.3).
    Never a request on the stream.
    """
    events: queue.SimpleQueue[dict[str, Any] | Reply] = queue.SimpleQueue()

    def work() -> None:
        try:
            reply = server.handle(
                payload, headers=headers, user=user, notify=events.put, address=address, access=granted
            )
        except Exception:  # handle() answers every failure itself; this only keeps the request from waiting
            logger.exception("The MCP endpoint failed")
            reply = Reply(200, error_response(None, _internal_error()))
        events.put(reply)

    _helpers.run(work)
    first = events.get()
    if isinstance(first, Reply):
        return first

    def stream() -> Iterator[bytes]:
        item: dict[str, Any] | Reply = first
        yield from _frames(item)
        while not isinstance(item, Reply):
            item = events.get()
            yield from _frames(item)

    async def astream() -> AsyncIterator[bytes]:
        # Under ASGI, Django drains a sync iterator whole before sending its first byte (with a
        # warning): progress would arrive all at once with the result. Each wait runs off the event
        # loop instead, on the thread Django keeps for this request (thread-sensitive sync_to_async),
        # so no other request waits behind it.
        wait = sync_to_async(events.get)
        item: dict[str, Any] | Reply = first
        for frame in _frames(item):
            yield frame
        while not isinstance(item, Reply):
            item = await wait()
            for frame in _frames(item):
                yield frame

    response = StreamingHttpResponse(astream() if asgi else stream(), content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # let nginx pass each event on at once
    return response


def serve(server: Server, request: HttpRequest, auth: Sequence[Auth] | None = None) -> HttpResponseBase:
    """Answer one HTTP request to the MCP endpoint of ``server``; a bug here is -32603, never a 500.

    ``auth`` lists the callables that tell who is calling (``mcpforms.auth``); None means the ones
    ``MCPFORMS['AUTHENTICATION']`` names.
    """
    try:
        return _serve(server, request, configured_auth() if auth is None else auth)
    except Exception as error:
        # What fails outside the core's own catch-all: authentication, the 2025 era's GET and DELETE.
        service = unreachable_service(error)
        if service is None:
            logger.exception("The MCP endpoint failed")
            return _json(Reply(200, error_response(None, _internal_error())))
        logger.warning("The MCP endpoint could not reach its %s: %s", service, error)
        return _json(_explained(Reply(http_status(UNAVAILABLE), error_response(None, unavailable(service)))))


def _unmigrated() -> str | None:
    try:
        return unmigrated_message()
    except Exception:  # the database itself is unreachable: the log has the first failure
        return None


def _internal_error() -> ProtocolError:
    return ProtocolError(INTERNAL_ERROR, _unmigrated() or "Internal error")


def _explained(reply: Reply) -> Reply:
    """A -32603 the handler could not avoid because mcpforms' tables are missing says so. So does a
    database "out of reach" that answers after all: SQLite reports a missing table as the same
    OperationalError as a lost connection, and retrying would not create the table."""
    body = reply.body
    error = body.get("error") if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    if code == INTERNAL_ERROR:
        explained = _internal_error()
    elif code == UNAVAILABLE and (unmigrated := _unmigrated()) is not None:
        explained = ProtocolError(INTERNAL_ERROR, unmigrated)
    else:
        return reply
    assert body is not None
    return replace(reply, status=http_status(explained.code), body={**body, "error": explained.as_error()})


def _serve(server: Server, request: HttpRequest, auth: Sequence[Auth]) -> HttpResponseBase:
    try:
        # get_host() is what enforces ALLOWED_HOSTS, the first defence against DNS rebinding (spec §8.6).
        host = request.get_host()
    except DisallowedHost:
        return _refusal(403, _host_refused(request))
    if not _origin_allowed(request, host):
        return _refusal(403, _origin_refused(request, host))
    try:
        user = authenticate(request, auth, anonymous=server.admits_anonymous)
    except HttpError as refusal:
        refused = _refusal(refusal.status_code, str(refusal))
        if isinstance(refusal, Challenge):  # e.g. 403 insufficient_scope: what the client should ask for
            refused["WWW-Authenticate"] = refusal.www_authenticate
        return refused
    if user is None:
        response = _refusal(401, _unauthorized(request))
        response["WWW-Authenticate"] = challenge(request, auth)
        return response
    headers = _mcp_headers(request)
    granted = access(request, auth)
    if request.method in ("GET", "DELETE") and headers.get(SESSION_HEADER):
        # The 2025 era's session operations: resume a call's stream, end the session.
        if request.method == "GET":
            last_event_id = request.META.get("HTTP_LAST_EVENT_ID")
            resumed = era2025.resume(server, headers, last_event_id, user, server.sessions, granted)
            return _json(resumed)
        return _json(era2025.end(server, headers, user, server.sessions))
    if request.method != "POST":
        # 2026-07-28 has no GET stream and no sessions to DELETE (spec §8.1); a 2025 client without a
        # session has nothing to resume or end.
        response = _refusal(405, f"Method Not Allowed: {request.method}; this endpoint takes POST")
        response["Allow"] = "POST"
        return response
    if request.content_type != JSON:
        # A cross-site HTML form can POST text/plain or form-encoded bodies without a preflight; an MCP
        # client always sends JSON (2025-11-25 and 2026-07-28 Streamable HTTP).
        return _refusal(415, f"Unsupported Media Type: the body must be {JSON}")
    limit = conf.MAX_BODY_BYTES
    too_large = f"Request body too large: more than {limit} bytes (MCPFORMS['MAX_BODY_BYTES'])"
    declared = str(request.META.get("CONTENT_LENGTH") or "")
    if declared.isdecimal() and int(declared) > limit:
        return _refusal(413, too_large)  # refused before a byte of it is read
    try:
        body = request.body
    except RequestDataTooBig:
        return _refusal(413, "Request body too large (DATA_UPLOAD_MAX_MEMORY_SIZE)")
    if len(body) > limit:
        return _refusal(413, too_large)  # a chunked body, which declares no length
    try:
        payload = decode(body)
    except ProtocolError as error:
        return _json(Reply(400, error_response(None, error)))
    # REMOTE_ADDR, never X-Forwarded-For: a client can write that header (behind a proxy, have the server
    # set REMOTE_ADDR from it). The budgets of anonymous callers count by it: a 2025-era initialize's
    # sessions, a call's tasks.
    address = request.META.get("REMOTE_ADDR")
    if _may_notify(payload, headers):
        if user is not None:
            user.is_authenticated  # noqa: B018  (resolve the lazy user here, not on the worker thread)
        asgi = isinstance(request, ASGIRequest)
        streamed = _streamed(server, payload, headers, user, granted, address=address, asgi=asgi)
        return _challenged(request, auth, streamed) if isinstance(streamed, Reply) else streamed
    reply = server.handle(payload, headers=headers, user=user, address=address, access=granted)
    return _challenged(request, auth, _explained(reply))


_UNREAD = HttpResponse()


class _Endpoint(NinjaAPI):
    """The API of one endpoint, which also answers with a trailing slash: ``/mcp/`` for ``/mcp`` is a
    common slip in a client's configuration, and Django's 404 page would tell it nothing."""

    @property
    def urls(self) -> tuple[list[Any], str, str]:
        patterns, app_name, namespace = super().urls
        view = patterns[0].callback  # the endpoint's one operation
        assert view is not None
        # MCP clients authenticate with tokens (or are asked to, with a 401), never with a redirect to a
        # login page: the endpoint is open to LoginRequiredMiddleware (Django 5.1+), and judges callers.
        login_not_required(view)
        # Written as a character class: a route starting with "/" is what Django's urls.W002 warns about.
        return [*patterns, re_path(r"^[/]\Z", view, name=SLASH_ROUTE)], app_name, namespace

    def create_temporal_response(self, request: HttpRequest) -> HttpResponse:
        # django-ninja makes a response per request for a view to set headers or cookies on, and reads it
        # only when the view returns something else than a response. The endpoint's view takes none and
        # always returns its own, so one response, never handed out nor read, stands in for them all.
        return _UNREAD


def build_api(
    server: Server | None = None, *, namespace: str = "mcpforms", auth: Sequence[Auth] | None = None
) -> NinjaAPI:
    """Return a NinjaAPI serving ``server`` (the default one if None) at the root of where it is mounted.

    A second endpoint (another server) needs its own ``namespace``. ``auth`` replaces the callables
    ``MCPFORMS['AUTHENTICATION']`` names, for this endpoint only; they run inside the endpoint, after the
    Host and Origin checks, so that every refusal is a JSON-RPC body.
    """
    api = _Endpoint(
        title="MCP",
        urls_namespace=namespace,
        docs_url=None,
        openapi_url=None,
    )

    @api.api_operation(VERBS, "", include_in_schema=False)
    def mcp(request: HttpRequest) -> HttpResponseBase:
        return serve(server or default_server, request, auth)

    return api


api = build_api()
urls = api.urls
"""``path("mcp", mcpforms.api.urls)`` serves the default server at /mcp."""
