"""The 2025 era (2025-11-25, 2025-06-18, 2025-03-26) on the same endpoint and the same handlers (spec §9).

A 2025 client opens a session with ``initialize`` and names it in every later request (``Mcp-Session-Id``).
Results lose what only 2026-07-28 has (``resultType``, cache hints). Handlers stay as they are, written
once in the 2026 multi round-trip style: when one returns ``input_required``, each of its
``inputRequests`` becomes a real request from the server (``elicitation/create``…) on the call's SSE
stream, which the server then closes (SEP-1699) so that no worker waits while a person thinks. The client
POSTs each answer; the answer that completes the round runs the handler again, in whichever worker got it;
what that produces joins the stream, which the client reads back with ``GET`` and ``Last-Event-ID``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import replace
from typing import Any

from mcpforms.conf import conf
from mcpforms.protocol.budgets import address_scope, check_call_budget, check_session_budget
from mcpforms.protocol.capabilities import client_implementation, retained_capabilities
from mcpforms.protocol.context import EVERY_SCOPE, LOG_LEVELS, Access, Notify
from mcpforms.protocol.envelope import Envelope
from mcpforms.protocol.era2025.sessions import Event, PendingCall, Session, SessionStore, new_id
from mcpforms.protocol.errors import INTERNAL_ERROR, INVALID_REQUEST, ProtocolError, failure, invalid_params
from mcpforms.protocol.jsonrpc import Message, error_response, is_response, read_message, result_response
from mcpforms.protocol.methods import (
    METHODS,
    Call,
    asks_for_input,
    check_served,
    run_method,
    validate_params,
)
from mcpforms.protocol.offering import Offering
from mcpforms.protocol.reply import ACCEPTED, Reply, refusal, reply_to
from mcpforms.protocol.state import ANONYMOUS, principal_for
from mcpforms.protocol.tasks import TASK_METHODS
from mcpforms.protocol.versions import SESSION_HEADER, VERSIONS_2025

# The methods a 2025 session may call; server/discover and subscriptions/listen are 2026-07-28 only.
# The tasks extension is defined on 2026-07-28 only (SEP-2663); 2025-11-25's own tasks are another wire.
METHODS_2025 = frozenset(METHODS) - {"server/discover", *TASK_METHODS}
# What only 2026-07-28 results carry.
ONLY_2026 = ("resultType", "ttlMs", "cacheScope")
# Session errors, as the reference SDKs send them (2025-11-25 Streamable HTTP, Session Management).
NO_SESSION = -32000
UNKNOWN_SESSION = -32001


INTERNAL = ProtocolError(INTERNAL_ERROR, "Internal error")


class SessionError(ProtocolError):
    """A request without its session (400) or naming one that is unknown or ended (404)."""

    def __init__(self, code: int, message: str, *, status: int) -> None:
        super().__init__(code, message)
        self.status = status


def handle(
    server: Offering,
    payload: Any,
    *,
    headers: Mapping[str, str] | None,
    user: Any,
    notify: Notify | None,
    sessions: SessionStore,
    address: str | None = None,
    access: Access = EVERY_SCOPE,
) -> Reply:
    """Answer one decoded 2025-era message; never raises. ``address`` is the client's network address,
    from the transport (None over stdio), which anonymous sessions are budgeted by; ``access`` what it
    knows of the caller's credentials (``Server.handle``)."""
    return reply_to(
        payload, lambda: _reply(server, payload, headers or {}, user, notify, sessions, address, access)
    )


def _reply(
    server: Offering,
    payload: Any,
    headers: Mapping[str, str],
    user: Any,
    notify: Notify | None,
    sessions: SessionStore,
    address: str | None,
    access: Access,
) -> Reply:
    if is_response(payload):
        return _client_answer(server, payload, headers, user, sessions, access)
    message = read_message(payload)
    if message.method == "initialize":
        if message.is_notification:
            # The handshake needs an answer, which a notification never gets.
            raise ProtocolError(
                INVALID_REQUEST, "Invalid Request: initialize is a request; send it with an id"
            )
        return _initialize(server, message, user, sessions, address)
    session = _session(server, headers, user, sessions)
    if message.is_notification:
        return ACCEPTED  # notifications/initialized, cancelled…: nothing to answer
    assert message.id is not None
    if message.method == "ping":
        return Reply(200, result_response(message.id, {}))
    if message.method in ("resources/subscribe", "resources/unsubscribe"):
        # Accepted and forgotten: updates would travel on the standalone stream, which this server
        # does not offer (a worker per listening client), so it never advertises `subscribe`.
        validate_params(message, session.version)
        return Reply(200, result_response(message.id, {}))
    if message.method == "logging/setLevel":
        level = message.params.get("level")
        if level not in LOG_LEVELS:
            raise invalid_params(f"Invalid params: level must be one of {', '.join(LOG_LEVELS)}")
        sessions.set_log_level(session.id, level)
        return Reply(200, result_response(message.id, {}))
    return _request(server, message, session, user, notify, sessions, access)


def _initialize(
    server: Offering, message: Message, user: Any, sessions: SessionStore, address: str | None
) -> Reply:
    assert message.id is not None
    validate_params(message, VERSIONS_2025[0])
    requested = message.params.get("protocolVersion")
    # Spec §9.3: an unknown version (2026-07-28 included, which initialize never negotiates) gets a
    # counter-offer of the newest 2025 version, which the client accepts or not.
    version = requested if requested in VERSIONS_2025 else VERSIONS_2025[0]
    principal = principal_for(user)
    # Only an anonymous session keeps where it came from: the one thing its budget can count by.
    scope = address_scope(address) if principal == ANONYMOUS else None
    check_session_budget(sessions, principal=principal, address=scope)
    session = Session(
        id=new_id(),
        version=version,
        # Kept for SESSION_MAX_AGE and read on every request: what the server reads, and no more.
        capabilities=retained_capabilities(message.params.get("capabilities"), extensions=server.extensions),
        client_info=client_implementation(message.params.get("clientInfo")) or None,
        principal=principal,
        server=server.key,
        address=scope,
    )
    sessions.create(session)
    capabilities = server.capabilities() | {"logging": {}}
    if not capabilities["extensions"]:
        del capabilities["extensions"]
    result: dict[str, Any] = {
        "protocolVersion": version,
        "capabilities": capabilities,
        "serverInfo": server.info,
    }
    if server.instructions:
        result["instructions"] = server.instructions
    return Reply(200, result_response(message.id, result), headers={"Mcp-Session-Id": session.id})


def _session(server: Offering, headers: Mapping[str, str], user: Any, sessions: SessionStore) -> Session:
    session_id = headers.get(SESSION_HEADER)
    if not session_id:
        raise SessionError(NO_SESSION, "Bad Request: Mcp-Session-Id header is required", status=400)
    session = sessions.get(session_id.strip())
    principal = principal_for(user)
    # A session belongs to who opened it, on the server they opened it on (servers may share a store):
    # another user's request, or another server's, is told it does not exist. One exception: a session
    # opened anonymously becomes the first user's who names it (SessionStore.adopt says why that is
    # safe), for a client that met a 401, signed in and sends the same request again in it (the Python
    # SDK does not open a new session after a 404, so its sign-in would never complete).
    if session is not None and session.server == server.key and session.principal != principal:
        session = _adopted(session, principal, sessions)
    if session is None or session.principal != principal or session.server != server.key:
        raise SessionError(UNKNOWN_SESSION, "Session not found", status=404)
    return session


def _adopted(session: Session, principal: str, sessions: SessionStore) -> Session | None:
    """The session as ``principal``'s, when it was anonymous and they may keep one more; None when it
    is someone else's, or another user adopted it first."""
    if session.principal != ANONYMOUS or principal == ANONYMOUS:
        return None
    # Adopting makes the user keep one more session: within their budget, or the 429 initialize gives.
    check_session_budget(sessions, principal=principal, address=None)
    return sessions.adopt(session.id, principal)


def _request(
    server: Offering,
    message: Message,
    session: Session,
    user: Any,
    notify: Notify | None,
    sessions: SessionStore,
    access: Access,
) -> Reply:
    assert message.id is not None
    check_served(server, message.method, among=METHODS_2025)
    validate_params(message, session.version)
    # The handler gets only the arguments the call may have to keep: every later round runs on what the
    # call kept, and the requestState's digest of the arguments must match them (spec §6.4).
    message = replace(message, params=_known_arguments(server, message))
    result = _run(server, message, session, user, notify, access)
    assert message.id is not None
    if asks_for_input(message.method, result):
        check_call_budget(sessions, session.id)
        call = PendingCall(
            id=new_id(),
            session=session.id,
            request_id=message.id,
            method=message.method,
            params=_kept_params(message.params),
        )
        return Reply(200, events=_next_round(call, result, sessions, first=True))
    return Reply(200, result_response(message.id, _result_2025(result)))


def _run(
    server: Offering,
    message: Message,
    session: Session,
    user: Any,
    notify: Notify | None,
    access: Access,
) -> dict[str, Any]:
    """Run the method as a 2026 handler would see it: the session stands in for the envelope."""
    meta = message.params.get("_meta")
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    envelope = Envelope(
        protocol_version=session.version,
        client_capabilities=dict(session.capabilities),
        client_info=dict(session.client_info) if session.client_info else None,
        progress_token=token if isinstance(token, str | int) and not isinstance(token, bool) else None,
        # A 2025 session gets every message until logging/setLevel says otherwise.
        log_level=session.log_level or LOG_LEVELS[0],
    )
    params = {**message.params, "_meta": meta if isinstance(meta, dict) else {}}
    # No headers: a 2025 client mirrors no arguments into Mcp-Param-* headers (2026-07-28 §8.2), so the
    # check of them is not for its requests, over HTTP or stdio.
    call = Call(
        server,
        replace(message, params=params),
        envelope,
        user,
        session.principal,
        notify,
        access=access,
        # What the budgets count an anonymous session's tasks by: the scope it was opened from.
        address=session.address,
    )
    return run_method(call)


def _known_arguments(server: Offering, message: Message) -> dict[str, Any]:
    """The params with only the arguments the tool or prompt declares: a 2025 call may be kept for
    STATE_MAX_AGE, and a client must not make the server keep what no handler reads. A tool whose input
    schema lists no ``properties``, or admits others (``additionalProperties`` not false, or
    ``patternProperties``), declares it reads what comes, and gets it all."""
    params, arguments = message.params, message.params.get("arguments")
    if not isinstance(arguments, Mapping) or not isinstance(params.get("name"), str):
        return params
    known: Collection[str] | None = None
    if message.method == "tools/call":
        tool = server.tools.get(params["name"])
        if tool is None:
            return params  # the handler says it is unknown
        schema = tool.input_schema
        properties = schema.get("properties")
        if (
            not isinstance(properties, Mapping)
            or schema.get("additionalProperties", False) is not False
            or "patternProperties" in schema
        ):
            return params  # a schema that names no arguments, or admits others, reads what comes
        known = properties.keys()
    elif message.method == "prompts/get":
        prompt = server.prompts.get(params["name"])
        if prompt is None:
            return params
        known = {argument.name for argument in prompt.arguments}
    if known is None:
        return params
    return {**params, "arguments": {key: value for key, value in arguments.items() if key in known}}


# What a method reads of its params, and so all a pending call keeps of them; of `_meta`, only the
# progressToken is read (`_run`).
_KEPT_PARAMS = ("name", "arguments", "uri")


def _kept_params(params: Mapping[str, Any]) -> dict[str, Any]:
    kept = {key: params[key] for key in _KEPT_PARAMS if key in params}
    meta = params.get("_meta")
    if isinstance(meta, Mapping) and "progressToken" in meta:
        kept["_meta"] = {"progressToken": meta["progressToken"]}
    return kept


def _result_2025(result: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in result.items() if key not in ONLY_2026}


def _next_round(
    call: PendingCall,
    result: Mapping[str, Any],
    sessions: SessionStore,
    *,
    first: bool = False,
    before: tuple[dict[str, Any], ...] = (),
) -> tuple[Event, ...]:
    """Send the requests of an input_required ``result`` to the client, as the next events of the call's
    stream (after the messages ``before``); the first event of a stream tells the client how soon to
    reconnect. A URL-mode elicitation gets the ``elicitationId`` 2025-11-25 requires: its request id."""
    requests = result.get("inputRequests")
    if not isinstance(requests, Mapping) or not requests:
        return _finish(call, error_response(call.request_id, INTERNAL), sessions, before=before)
    events: list[Event] = []
    seq = call.events
    for message in before:
        seq += 1
        events.append(Event(id=f"{call.id}:{seq}", data=message))
    asked: dict[str, str] = {}
    pages: list[str] = []
    for key, request in requests.items():
        seq += 1
        server_request_id = f"{call.id}-{seq}"
        asked[server_request_id] = key
        params = dict(request.get("params", {}))
        if request.get("method") == "elicitation/create" and params.get("mode") == "url":
            params["elicitationId"] = server_request_id
            pages.append(server_request_id)
        body = {"jsonrpc": "2.0", "id": server_request_id, "method": request["method"], "params": params}
        retry = conf.RETRY_MS if first and not events else None
        events.append(Event(id=f"{call.id}:{seq}", data=body, retry_ms=retry))
    state = result.get("requestState")
    updated = replace(
        call,
        request_state=state if isinstance(state, str) else None,
        asked=asked,
        answers={},
        events=seq,
        pages=tuple(pages),
        waiting=False,
    )
    sessions.save_call(updated, tuple(events))
    return tuple(events)


def _finish(
    call: PendingCall,
    response: dict[str, Any],
    sessions: SessionStore,
    *,
    before: tuple[dict[str, Any], ...] = (),
) -> tuple[Event, ...]:
    """End the call's stream with ``response`` (after the messages ``before``)."""
    messages = (*before, response)
    events = tuple(
        Event(id=f"{call.id}:{call.events + n}", data=message) for n, message in enumerate(messages, 1)
    )
    sessions.save_call(replace(call, events=call.events + len(events), done=True, waiting=False), events)
    return events


def _client_answer(
    server: Offering,
    payload: dict[str, Any],
    headers: Mapping[str, str],
    user: Any,
    sessions: SessionStore,
    access: Access,
) -> Reply:
    """The client's answer to a request the server sent; the one that completes a round runs the next."""
    session = _session(server, headers, user, sessions)
    request_id = payload.get("id")
    if not isinstance(request_id, str):
        return ACCEPTED  # not an answer to anything we asked: nothing to do
    # An error answer, or one that is no object, is the user's cancel: the round goes on without them.
    answer = payload.get("result")
    call = sessions.answer(
        session.id, request_id, answer if isinstance(answer, dict) else {"action": "cancel"}
    )
    if call is None:
        return ACCEPTED  # the round still waits for other answers, or this one was already had
    if _opening_pages(call):
        # Accepting a URL-mode elicitation only means the user went to the page (2025-11-25): the call
        # now waits for the page, and the client's polls see when it is done.
        sessions.save_call(replace(call, waiting=True))
        return ACCEPTED
    _next_step(server, call, session, user, sessions, access=access)
    return ACCEPTED


def _opening_pages(call: PendingCall) -> bool:
    if not call.pages or set(call.pages) != set(call.asked):
        return False
    answers = [call.answers.get(call.asked[page]) for page in call.pages]
    return all(isinstance(answer, Mapping) and answer.get("action") == "accept" for answer in answers)


def _next_step(
    server: Offering,
    call: PendingCall,
    session: Session,
    user: Any,
    sessions: SessionStore,
    *,
    access: Access,
    before: tuple[dict[str, Any], ...] = (),
) -> tuple[Event, ...] | None:
    """Run the handler again with the round's answers; add what it returns to the stream. None when the
    call still waits on its pages (the handler asked for pages again)."""
    params = {**call.params, "inputResponses": dict(call.answers)}
    if call.request_state is not None:
        params["requestState"] = call.request_state
    message = Message(method=call.method, params=params, id=call.request_id)
    try:
        # The credentials of the request that brought this round on, as a 2026 round would be judged.
        result = _run(server, message, session, user, None, access)
    except ProtocolError as error:
        return _finish(call, error_response(call.request_id, error), sessions, before=before)
    except Exception as error:
        # The call's stream ends with the error: -32603 for a bug, a retryable -32010 when a service was
        # out of reach (the client calls again; nothing ran). Storing it may fail too: then the POST of
        # the answer gets the 503, from handle() above.
        failed = failure(error, call.request_id, stage=" on a later round")
        return _finish(call, error_response(call.request_id, failed), sessions, before=before)
    if result.get("resultType") == "input_required":
        if call.waiting and _only_pages(result):
            return None
        return _next_round(call, result, sessions, before=before)
    return _finish(call, result_response(call.request_id, _result_2025(result)), sessions, before=before)


def _only_pages(result: Mapping[str, Any]) -> bool:
    requests = result.get("inputRequests")
    return isinstance(requests, Mapping) and all(
        isinstance(request, Mapping)
        and request.get("method") == "elicitation/create"
        and isinstance(request.get("params"), Mapping)
        and request["params"].get("mode") == "url"
        for request in requests.values()
    )


def resume(
    server: Offering,
    headers: Mapping[str, str],
    last_event_id: str | None,
    user: Any,
    sessions: SessionStore,
    access: Access = EVERY_SCOPE,
) -> Reply:
    """A ``GET`` with ``Last-Event-ID``: what the call's stream holds after that event (SEP-1699).

    With nothing new yet, the client gets the event it last saw again, with no data, so it keeps the
    id and polls again after ``retry``; a ``GET`` without ``Last-Event-ID`` (the standalone stream) is
    not offered: the server never sends anything outside a call.
    """
    try:
        session = _session(server, headers, user, sessions)
        if not last_event_id:
            return Reply(405, error_response(None, ProtocolError(INVALID_REQUEST, _NO_STANDALONE)))
        position = _stream_position(last_event_id)
        found = None if position is None else sessions.events_after(position[0], session.id, position[1])
        if found is None:
            raise ProtocolError(INVALID_REQUEST, "Unknown Last-Event-ID: no such stream in this session")
        call, events = found
        if not events and call.waiting and not call.done:
            # A poll while the user is on the page: see whether the page is done now.
            done = tuple(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/elicitation/complete",
                    "params": {"elicitationId": page},
                }
                for page in call.pages
            )
            events = list(_next_step(server, call, session, user, sessions, access=access, before=done) or ())
        if not events:
            return Reply(200, events=(Event(id=last_event_id.strip(), retry_ms=conf.RETRY_MS),))
        return Reply(200, events=tuple(events))
    except ProtocolError as error:
        return refusal(error, None)


# The event ids the server sends are "<call id>:<n>", n an ASCII count. Anything else names no stream
# (the 400 of an unknown one): "²" is a digit to str.isdigit() but not to int(), and 18 digits keep n
# a 64-bit integer, which every store can compare with what it keeps.
_MAX_SEQ_DIGITS = 18


def _stream_position(last_event_id: str) -> tuple[str, int] | None:
    """The call id and the number of events seen that ``Last-Event-ID`` names, or None when it is no id
    the server sent."""
    call_id, colon, seen = last_event_id.strip().partition(":")
    if not (colon and seen.isascii() and seen.isdecimal() and len(seen) <= _MAX_SEQ_DIGITS):
        return None
    return call_id, int(seen)


def end(server: Offering, headers: Mapping[str, str], user: Any, sessions: SessionStore) -> Reply:
    """``DELETE``: end the session; later requests naming it get 404."""
    try:
        session = _session(server, headers, user, sessions)
    except ProtocolError as error:
        return refusal(error, None)
    sessions.end(session.id)
    return Reply(200)


_NO_STANDALONE = (
    "Method Not Allowed: this server sends nothing outside a call, so it offers no standalone stream"
)
