"""Fuzz the endpoint: whatever arrives, the answer is a JSON-RPC body (or 202), never a 500 or a traceback.

The conformance fixtures serve as the tools under attack, so their handlers are fuzzed too: a -32603
(a handler or core crash) fails the test just like a 500 would.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import pytest
from django.core.cache import cache
from django.http import HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.test import RequestFactory, override_settings
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from mcp_types.methods import validate_server_result

from mcpforms.api import serve
from mcpforms.conf import conf
from mcpforms.protocol.era2025.sessions import MemorySessions
from mcpforms.protocol.errors import INVALID_PARAMS, PARSE_ERROR, ProtocolError
from mcpforms.protocol.jsonrpc import decode
from mcpforms.protocol.server import Server
from mcpforms.registry import register
from mcpforms.session_stores import CacheSessions, DatabaseSessions
from tests import wire
from tests.conformance.fixtures import server
from tests.forms import EveryFieldForm, SignupForm
from tests.test_session_stores import MEMCACHED_KEYS
from tests.test_wizard_formsets import TeamWizard
from tests.test_wizards import TravelRequestWizard

VERSION = "2026-07-28"
METHODS = [
    "server/discover",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "completion/complete",
    "subscriptions/listen",
    "initialize",
    "ping",
    "notifications/cancelled",
]
# The progress tool sleeps between reports: fuzzing it would only make the run slow.
TOOLS = [tool.name for tool in server.tools.all() if tool.name != "test_tool_with_progress"]
NAMES = TOOLS + [prompt.name for prompt in server.prompts.all()] + ["", "nope"]
URIS = ["test://static-text", "test://static-binary", "test://template/1/data", "test://nope", ""]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=12,
)


def mostly(valid: st.SearchStrategy[Any], invalid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Valid four times in five: the deeper rungs are only reached past the shallow ones."""
    return st.sampled_from([True, True, True, True, False]).flatmap(lambda ok: valid if ok else invalid)


header_text = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=20)

capabilities = st.one_of(
    st.sampled_from([{}, {"elicitation": {}}, {"sampling": {}}, {"roots": {}}, {"elicitation": {"url": {}}}]),
    json_values,
)
meta = st.one_of(
    st.fixed_dictionaries(
        {
            "io.modelcontextprotocol/protocolVersion": st.sampled_from([VERSION, VERSION, "v999.0.0"])
            | json_values,
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        },
        optional={
            "io.modelcontextprotocol/clientInfo": json_values,
            "io.modelcontextprotocol/logLevel": json_values,
            "progressToken": st.none() | st.text(max_size=4) | st.integers(),
        },
    ),
    json_values,
)
input_responses = st.one_of(
    json_values,
    st.dictionaries(
        st.sampled_from(["user_name", "confirm", "step1", "step2", "capital_question", "client_roots", "x"]),
        st.one_of(
            json_values,
            st.fixed_dictionaries(
                {"action": st.sampled_from(["accept", "decline", "cancel", "maybe"])},
                optional={
                    "content": st.dictionaries(
                        st.sampled_from(["name", "ok", "color", "context"]), json_values
                    )
                },
            ),
        ),
        max_size=3,
    ),
)
params = st.fixed_dictionaries(
    {"_meta": meta},
    optional={
        "name": st.sampled_from(NAMES) | json_values,
        "uri": st.sampled_from(URIS) | json_values,
        "arguments": json_values,
        "inputResponses": input_responses,
        "requestState": st.text(max_size=30) | json_values,
        "cursor": st.text(max_size=8) | json_values,
        "ref": json_values,
        "argument": json_values,
    },
)
messages = st.fixed_dictionaries(
    {
        "jsonrpc": mostly(st.just("2.0"), json_values),
        "method": mostly(st.sampled_from(METHODS), json_values),
        "id": mostly(st.integers() | st.text(max_size=5), json_values),
        "params": mostly(params, json_values),
    },
).map(lambda message: {key: value for key, value in message.items() if value is not None})

# Hostile JSON text that json.dumps never writes, spliced into an otherwise valid message where a value
# (or, for a string, a key) goes. Each comes with the error code decode() answers it with, None for text
# that is JSON the endpoint must take in its stride.
MARKER = "__hostile__"
STRINGS: list[tuple[str, int | None]] = [
    ('"\\udfff"', PARSE_ERROR),
    ('"a\\ud800b"', PARSE_ERROR),
    ('"\\udc00\\ud800"', PARSE_ERROR),
    ('"\\u0000"', INVALID_PARAMS),
    ('"x\\u0000y"', INVALID_PARAMS),
]
NUMBERS: list[tuple[str, int | None]] = [
    ("1" * 400, None),
    ("-" + "9" * 400, None),
    ("1" + "0" * 300 + ".5e-3", None),
    ("0." + "1" * 400, None),
    ("9" * 309, None),
    ("9" * 4000, None),
    # Past a double, a float is infinity; past Python's 4,300 digits, int() refuses the text.
    ("1e400", PARSE_ERROR),
    ("1" + "0" * 399 + ".5e-3", PARSE_ERROR),
    ("-1e400", PARSE_ERROR),
    ("1E+400", PARSE_ERROR),
    ("9" * 5000, PARSE_ERROR),
    ("-" + "9" * 5000, PARSE_ERROR),
    ("NaN", PARSE_ERROR),
    ("Infinity", PARSE_ERROR),
    ("-Infinity", PARSE_ERROR),
]


def marker_depth(value: Any, depth: int = 1) -> int | None:
    """The level the marker sits at (the document is level 1), as decode() counts levels."""
    if value == MARKER:
        return depth
    items: Iterable[tuple[Any, Any]]
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        if key == MARKER:
            return depth + 1
        found = marker_depth(item, depth + 1)
        if found is not None:
            return found
    return None


def place(message: dict[str, Any], where: str, *, as_key: bool) -> dict[str, Any]:
    """Put the marker in ``message``: as its id, an argument, the progress token, or a top-level member."""
    params = message.get("params")
    if where == "id" and not as_key:
        return {**message, "id": MARKER}
    if where == "argument" and isinstance(params, dict):
        given = params.get("arguments")
        arguments: dict[str, Any] = given if isinstance(given, dict) else {}
        extra = {MARKER: 1} if as_key else {"x": MARKER}
        return {**message, "params": {**params, "arguments": {**arguments, **extra}}}
    if where == "meta" and isinstance(params, dict) and isinstance(params.get("_meta"), dict):
        meta = {**params["_meta"], **({MARKER: 1} if as_key else {"progressToken": MARKER})}
        return {**message, "params": {**params, "_meta": meta}}
    return {**message, **({MARKER: 1} if as_key else {"x": MARKER})}


@st.composite
def hostile_bodies(draw: st.DrawFn) -> tuple[bytes, frozenset[int], str]:
    """A message with one hostile text in it: the body, the codes decode() may answer it with (none: it
    must not refuse it), and what the text is."""
    as_key = draw(st.booleans())
    message = place(draw(messages), draw(st.sampled_from(["id", "argument", "meta", "top"])), as_key=as_key)
    depth = marker_depth(message)
    assert depth is not None
    kind = draw(
        st.sampled_from(["string", "number", "nesting", "length"] if not as_key else ["string", "length"])
    )
    if kind == "string":
        raw, code = draw(st.sampled_from(STRINGS))
    elif kind == "number":
        raw, code = draw(st.sampled_from(NUMBERS))
    elif kind == "nesting":
        # Lists whose innermost value sits just above, at, or just past MAX_JSON_DEPTH.
        over = draw(st.sampled_from([-1, 0, 1]))
        levels = conf.MAX_JSON_DEPTH - depth + over
        raw, code = "[" * levels + "0" + "]" * levels, PARSE_ERROR if over > 0 else None
    else:
        over = draw(st.sampled_from([0, 1]))
        raw, code = json.dumps("a" * (conf.MAX_STRING_LENGTH + over)), INVALID_PARAMS if over else None
    body = json.dumps(message).replace(json.dumps(MARKER), raw, 1)
    codes = {code} if code is not None else set()
    try:
        decode(json.dumps(message))
    except ProtocolError as error:
        codes.add(error.code)  # refused for something else too: either refusal may come first
    return body.encode(), frozenset(codes), f"{kind} {raw[:20]}"


bodies = mostly(
    messages.map(lambda message: json.dumps(message).encode()),
    json_values.map(lambda value: json.dumps(value).encode())
    | st.binary(max_size=40)
    | hostile_bodies().map(lambda case: case[0]),
)


@st.composite
def headers(draw: st.DrawFn, body: bytes) -> dict[str, str]:
    """Headers that mostly agree with the body, so the fuzzing reaches past the header rungs."""
    try:
        decoded = json.loads(body)
    except ValueError:
        decoded = None
    message: dict[str, Any] = decoded if isinstance(decoded, dict) else {}
    method = message.get("method")
    body_params: dict[str, Any] = message["params"] if isinstance(message.get("params"), dict) else {}
    name = body_params.get("name", body_params.get("uri"))
    agreeing = {
        "HTTP_MCP_PROTOCOL_VERSION": VERSION,
        "HTTP_MCP_METHOD": method if isinstance(method, str) else "",
        "HTTP_MCP_NAME": name if isinstance(name, str) else "",
    }
    chosen: dict[str, str] = {}
    for key, value in agreeing.items():
        kind = draw(st.sampled_from(["agree"] * 8 + ["random", "absent"]))
        if kind == "agree" and value.isascii() and value.isprintable():
            chosen[key] = value
        elif kind == "random":
            chosen[key] = draw(header_text)
    if draw(st.integers(0, 9)) == 0:
        chosen["HTTP_ORIGIN"] = draw(
            st.sampled_from(["http://testserver", "http://evil.example.com"]) | header_text
        )
    return chosen


def events_of(response: StreamingHttpResponse) -> list[Any]:
    text = b"".join(response.streaming_content).decode()  # type: ignore[arg-type]
    return [json.loads(frame.split("data: ", 1)[1]) for frame in text.split("\n\n") if frame]


def assert_json_rpc(response: HttpResponseBase, method: str | None = None) -> None:
    """Check the answer's shape; with ``method``, a result must also be schema-valid for the revision."""
    assert response.status_code in (200, 202, 400, 403, 404, 405, 415), response.status_code
    if response.status_code == 202:
        event("HTTP 202")
        assert isinstance(response, HttpResponse) and response.content == b""
        return
    if isinstance(response, StreamingHttpResponse):
        *notifications, final = events_of(response)
        assert all(event["method"] == "notifications/progress" for event in notifications)
    else:
        assert response["Content-Type"] == "application/json"
        final = json.loads(response.content)  # type: ignore[attr-defined]
    assert final["jsonrpc"] == "2.0" and "id" in final
    assert ("result" in final) != ("error" in final)
    event(
        f"HTTP {response.status_code}: "
        + (str(final["error"]["message"])[:60] if "error" in final else "result")
    )
    if "error" in final:
        error = final["error"]
        assert isinstance(error["code"], int) and isinstance(error["message"], str)
        assert error["code"] != -32603, final  # a crash in the core or in a fixture handler
        assert "Traceback" not in json.dumps(final)
    else:
        assert final["result"]["resultType"] in ("complete", "input_required")
        if method is not None:
            validate_server_result(method, VERSION, final["result"])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), body=bodies, verb=st.sampled_from(["POST"] * 9 + ["GET", "DELETE"]))
def test_the_endpoint_always_answers_json_rpc(data: st.DataObject, body: bytes, verb: str) -> None:
    extra: dict[str, Any] = data.draw(headers(body))
    request = RequestFactory().generic(verb, "/mcp", body, content_type="application/json", **extra)
    assert_json_rpc(serve(server, request))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), case=hostile_bodies())
def test_hostile_json_inside_valid_messages_gets_a_clear_answer(
    data: st.DataObject, case: tuple[bytes, frozenset[int], str]
) -> None:
    """Surrogates, NUL, NaN, huge numbers, deep nesting, long strings: refused by decode() with the right
    code when they are not JSON the server can keep, served like any other value when they are."""
    body, codes, what = case
    event(what.split(" ")[0])
    extra: dict[str, Any] = data.draw(headers(body))
    extra.pop("HTTP_ORIGIN", None)  # the body is under test: let it past the Origin check
    response = serve(server, RequestFactory().post("/mcp", body, content_type="application/json", **extra))
    assert_json_rpc(response)
    final = None
    if isinstance(response, HttpResponse) and response.get("Content-Type") == "application/json":
        final = json.loads(response.content)
    error = final.get("error") if isinstance(final, dict) else None
    if codes:
        assert error is not None and error["code"] in codes, (what, final)
        assert response.status_code == 400
    elif error is not None:
        # Whatever else is wrong with the message, it is not the text decode() had to let through.
        assert not error["message"].startswith(("Parse error", "Invalid params: a string")), (what, final)


# Answers shaped like the real ones (elicitation, sampling, roots) with arbitrary content inside.
answers = st.dictionaries(
    st.sampled_from(
        ["user_name", "confirm", "step1", "step2", "capital_question", "greeting", "client_roots"]
    ),
    st.one_of(
        st.fixed_dictionaries(
            {"action": st.sampled_from(["accept", "decline", "cancel"])},
            optional={
                "content": st.dictionaries(st.sampled_from(["name", "ok", "color", "context"]), json_values)
            },
        ),
        st.fixed_dictionaries({"role": st.just("assistant"), "content": json_values}),
        st.fixed_dictionaries({"roots": json_values}),
    ),
    max_size=3,
)
targets = st.one_of(
    st.sampled_from(TOOLS).map(lambda name: ("tools/call", {"name": name})),
    st.sampled_from([p.name for p in server.prompts.all()]).map(lambda name: ("prompts/get", {"name": name})),
    st.sampled_from(URIS).map(lambda uri: ("resources/read", {"uri": uri})),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    target=targets,
    capabilities=st.sampled_from(
        [
            {"elicitation": {}, "sampling": {}, "roots": {}},
            {"elicitation": {"form": {}}},
            {"sampling": {}},
            {},
        ]
    ),
    arguments=st.none()
    | st.dictionaries(st.sampled_from(["arg1", "arg2", "resourceUri", "x"]), st.text(max_size=5)),
    responses=st.none() | answers | input_responses,
    state=st.none() | st.text(max_size=30),
)
def test_handlers_survive_any_answer(
    target: tuple[str, dict[str, Any]], capabilities: Any, arguments: Any, responses: Any, state: Any
) -> None:
    """Well-formed requests carrying arbitrary answers: a result or a -32602, never a crash."""
    method, params = target
    params = {**params, "_meta": {"io.modelcontextprotocol/protocolVersion": VERSION}}
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = capabilities
    for key, value in (("arguments", arguments), ("inputResponses", responses), ("requestState", state)):
        if value is not None:
            params[key] = value
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    name = params.get("name", params.get("uri"))
    extra: dict[str, Any] = {
        "HTTP_MCP_PROTOCOL_VERSION": VERSION,
        "HTTP_MCP_METHOD": method,
        "HTTP_MCP_NAME": name,
    }
    response = serve(server, RequestFactory().post("/mcp", body, content_type="application/json", **extra))
    assert_json_rpc(response, method)


# ---- the form tools on both eras: numbers no double holds, stream and session ids never minted ------------

form_server = Server(key="fuzz-forms", name="fuzz-forms", sessions=MemorySessions())
register(SignupForm, server=form_server, message="Create your account")
register(EveryFieldForm, server=form_server, name="every")
# Multi-step forms: a conditional step, and a formset step (a list of rows) that no elicitation can ask.
register(TravelRequestWizard, server=form_server)
register(TeamWizard, server=form_server)
FORM_FIELDS = {
    "signup": [*SignupForm.base_fields, "zz"],
    "every": [*EveryFieldForm.base_fields, "zz"],
    "travel_request": ["destination", "international", "passport_number", "start", "budget", "zz"],
    "team": ["team", "members", "remarks", "zz"],
}
ELICITING: dict[str, Any] = {"elicitation": {"form": {}}}
LEGACY = "2025-11-25"


def raw_number(index: int) -> str:
    return f"__number{index}__"


# A value of a field: a number spliced in as raw text (huge, or no double at all) or a plain one.
field_values = st.one_of(
    st.integers(0, len(NUMBERS) - 1).map(raw_number),
    st.integers(0, len(NUMBERS) - 1).map(lambda index: [raw_number(index)]),
    st.sampled_from(["ada@example.com", "pro", "team", 30, True, "", "2026-01-02", "s"]),
    json_values,
)


def form_arguments(tool: str) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.sampled_from(FORM_FIELDS[tool]), field_values, max_size=5)


def spliced(message: dict[str, Any]) -> tuple[bytes, bool]:
    """``message`` as a body with each raw number in place; whether decode() must refuse it."""
    try:
        text, refused = json.dumps(message, allow_nan=False), False
    except ValueError:
        # A float the strategy drew as inf or nan is written Infinity or NaN, which is not JSON.
        text, refused = json.dumps(message), True
    for index, (raw, code) in enumerate(NUMBERS):
        marker = json.dumps(raw_number(index))
        if marker in text:
            text = text.replace(marker, raw)
            refused = refused or code is not None
    return text.encode(), refused


def assert_parse_error(response: HttpResponseBase) -> None:
    assert response.status_code == 400 and isinstance(response, HttpResponse), response
    assert json.loads(response.content)["error"]["code"] == PARSE_ERROR


def sse_events(response: HttpResponseBase) -> list[tuple[str, Any]]:
    """The (id, message or None) of each event of a 2025-era stream."""
    assert isinstance(response, HttpResponse) and response["Content-Type"] == "text/event-stream"
    found = []
    for frame in response.content.decode().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in frame.splitlines() if ": " in line)
        if "id" in fields:
            found.append((fields["id"], json.loads(fields["data"]) if fields.get("data") else None))
    return found


def assert_no_crash(message: Any) -> None:
    if isinstance(message, dict) and "error" in message:
        assert message["error"]["code"] != -32603, message
    assert "Traceback" not in json.dumps(message)


def http(target: Server, verb: str, body: bytes = b"", **headers: Any) -> HttpResponseBase:
    request = RequestFactory().generic(verb, "/mcp", body, content_type="application/json", **headers)
    return serve(target, request)


def modern_call(arguments: dict[str, Any], tool: str, **params: Any) -> tuple[HttpResponseBase, bool]:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    message["params"] = {"name": tool, "arguments": arguments, "_meta": wire.meta(ELICITING), **params}
    body, refused = spliced(message)
    headers = {"HTTP_MCP_PROTOCOL_VERSION": VERSION, "HTTP_MCP_METHOD": "tools/call", "HTTP_MCP_NAME": tool}
    return http(form_server, "POST", body, **headers), refused


# Every example opens a 2025-era session from the one address RequestFactory gives: lift that budget.
ONE_ADDRESS = override_settings(MCPFORMS={"ALLOW_ANONYMOUS": True, "ANONYMOUS_SESSIONS_PER_ADDRESS": None})
FORM_SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@ONE_ADDRESS
@pytest.mark.django_db
@FORM_SETTINGS
@given(data=st.data(), tool=st.sampled_from(list(FORM_FIELDS)))
def test_a_form_tool_answers_any_number_in_arguments_and_answers_clearly_on_2026(
    data: st.DataObject, tool: str
) -> None:
    """Numbers of 309 to 4,000 digits are a field's error, never a crash; 1e400 and 5,000 digits -32700."""
    response, refused = modern_call(data.draw(form_arguments(tool)), tool)
    if refused:
        assert_parse_error(response)
        return
    assert_json_rpc(response, "tools/call")
    result = json.loads(response.content).get("result")  # type: ignore[attr-defined]
    if result is None or result["resultType"] != "input_required" or "requestState" not in result:
        return  # an error (a -32602 for a NUL, say), or nothing more to answer
    answers = {
        key: {"action": "accept", "content": data.draw(form_arguments(tool))}
        for key in result["inputRequests"]
    }
    again, refused = modern_call({}, tool, inputResponses=answers, requestState=result["requestState"])
    if refused:
        assert_parse_error(again)
    else:
        assert_json_rpc(again, "tools/call")


@ONE_ADDRESS
@pytest.mark.django_db
@FORM_SETTINGS
@given(data=st.data(), tool=st.sampled_from(["travel_request", "team"]))
def test_a_wizards_app_submit_answers_any_state_and_values_clearly(data: st.DataObject, tool: str) -> None:
    """The App's Next and Back: a state that is no state, a foreign or tampered one, any values."""
    submit = f"{tool}_submit"
    opened = http(form_server, "POST", app_call(tool, {})[0], **app_headers(tool))
    shown = json.loads(opened.content)["result"]  # type: ignore[attr-defined]
    state = shown["structuredContent"]["_mcpforms_state"]
    arguments = data.draw(form_arguments(tool))
    arguments["_mcpforms_state"] = data.draw(
        st.one_of(st.just(state), st.just(state[:-2] + "xx"), json_values, st.text(max_size=40))
    )
    if data.draw(st.booleans()):
        arguments["_mcpforms_back"] = data.draw(json_values)
    body, refused = app_call(submit, arguments)
    response = http(form_server, "POST", body, **app_headers(submit))
    if refused:
        assert_parse_error(response)
    else:
        assert_json_rpc(response, "tools/call")


def app_call(tool: str, arguments: dict[str, Any]) -> tuple[bytes, bool]:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    message["params"] = {"name": tool, "arguments": arguments, "_meta": wire.meta(wire.APPS | ELICITING)}
    return spliced(message)


def app_headers(tool: str) -> dict[str, str]:
    return {"HTTP_MCP_PROTOCOL_VERSION": VERSION, "HTTP_MCP_METHOD": "tools/call", "HTTP_MCP_NAME": tool}


def open_legacy_session(target: Server) -> str:
    params = {
        "protocolVersion": LEGACY,
        "capabilities": ELICITING,
        "clientInfo": {"name": "fuzz", "version": "1"},
    }
    body = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}).encode()
    response = http(target, "POST", body)
    assert response.status_code == 200, response
    session: str = response["Mcp-Session-Id"]
    return session


def legacy_post(target: Server, session: str, message: dict[str, Any]) -> tuple[HttpResponseBase, bool]:
    body, refused = spliced(message)
    return http(target, "POST", body, HTTP_MCP_SESSION_ID=session, HTTP_MCP_PROTOCOL_VERSION=LEGACY), refused


# A 2025-era call runs on a worker thread (it may log to the stream), which sees committed rows only.
@ONE_ADDRESS
@pytest.mark.django_db(transaction=True)
@FORM_SETTINGS
@given(data=st.data(), tool=st.sampled_from(list(FORM_FIELDS)))
def test_a_form_tool_answers_any_number_in_arguments_and_answers_clearly_on_a_2025_session(
    data: st.DataObject, tool: str
) -> None:
    session = open_legacy_session(form_server)
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    call["params"] = {"name": tool, "arguments": data.draw(form_arguments(tool))}
    response, refused = legacy_post(form_server, session, call)
    if refused:
        assert_parse_error(response)
        return
    if response["Content-Type"] == "application/json":
        assert_json_rpc_2025(json.loads(response.content))  # type: ignore[attr-defined]
        return
    events = sse_events(response)
    for _, message in events:
        assert_no_crash(message)
    asking = [message for _, message in events if message and message.get("method") == "elicitation/create"]
    if not asking:
        return
    for request in asking:
        answer = {"jsonrpc": "2.0", "id": request["id"]}
        answer["result"] = {"action": "accept", "content": data.draw(form_arguments(tool))}
        posted, refused = legacy_post(form_server, session, answer)
        if refused:
            assert_parse_error(posted)
            return
        if posted.status_code == 400:
            # An answer the envelope refuses (a NUL in a key, say) is told so, and the call waits on.
            refusal = json.loads(posted.content)  # type: ignore[attr-defined]
            assert refusal["error"]["code"] == INVALID_PARAMS, refusal
            assert_json_rpc_2025(refusal)
            return
        assert posted.status_code == 202, posted
    resumed = http(form_server, "GET", HTTP_MCP_SESSION_ID=session, HTTP_LAST_EVENT_ID=events[-1][0])
    assert resumed.status_code == 200, resumed
    for _, message in sse_events(resumed):
        assert_no_crash(message)


def assert_json_rpc_2025(message: Any) -> None:
    assert message["jsonrpc"] == "2.0" and ("result" in message) != ("error" in message), message
    assert_no_crash(message)


UNKNOWN_STREAM = {"code": -32600, "message": "Unknown Last-Event-ID: no such stream in this session"}
# Event numbers the server never sends: digits Python calls digits, too many digits, signs, spaces.
odd_positions = st.one_of(
    st.sampled_from(["²", "٣", "１", "1" * 5000, "9" * 19, "-1", "+1", "", " ", "1 2", "1.0", "0x1", "1:1"]),
    st.text(st.characters(min_codepoint=1, max_codepoint=0xFF), max_size=25),
    st.integers(0, 10**18 - 1).map(str),
)
# What a header can carry (WSGI and ASGI read header bytes as Latin-1; no server passes a NUL on).
header_characters = st.characters(min_codepoint=1, max_codepoint=0xFF)
odd_ids = st.one_of(
    st.sampled_from(["a b", "x" * 300, "sessión", "\t", "\x7f", "\x01", " ", "", "ü" * 200]),
    st.text(header_characters, max_size=40),
    st.text(st.sampled_from("ab :\t"), min_size=230, max_size=320),
)


def ours(last_event_id: str, stream: str) -> bool:
    """Whether ``last_event_id`` names an event of ``stream`` as the server numbers them."""
    call_id, colon, seen = last_event_id.strip().partition(":")
    return bool(colon) and call_id == stream and seen.isascii() and seen.isdecimal() and len(seen) <= 18


@ONE_ADDRESS
@pytest.mark.django_db(transaction=True)
@FORM_SETTINGS
@given(
    position=odd_positions,
    stream_kind=st.sampled_from(["the call's", "odd", "none"]),
    odd=odd_ids,
)
def test_a_last_event_id_is_a_stream_of_the_session_or_unknown(
    position: str, stream_kind: str, odd: str
) -> None:
    session = open_legacy_session(form_server)
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "signup", "arguments": {}}}
    ((first, asking),) = sse_events(legacy_post(form_server, session, call)[0])
    stream = first.partition(":")[0]
    last_event_id = {"the call's": f"{stream}:{position}", "odd": f"{odd}:{position}", "none": position}[
        stream_kind
    ]
    response = http(form_server, "GET", HTTP_MCP_SESSION_ID=session, HTTP_LAST_EVENT_ID=last_event_id)
    event(f"Last-Event-ID: {response.status_code}")
    if not last_event_id:
        assert response.status_code == 405  # no standalone stream
    elif ours(last_event_id, stream):
        assert response.status_code == 200
        assert all(message is None or message["id"] == asking["id"] for _, message in sse_events(response))
    else:
        assert response.status_code == 400, (last_event_id, response)
        assert json.loads(response.content)["error"] == UNKNOWN_STREAM  # type: ignore[attr-defined]
    # An answer to a request the server never sent is nothing to act on.
    answer = {"jsonrpc": "2.0", "id": odd, "result": {"action": "accept", "content": {"email": "a@b.co"}}}
    assert legacy_post(form_server, session, answer)[0].status_code == 202
    # A 2026-07-28 request ignores both headers: it has no session and no stream.
    message = wire.message("tools/list", request_id=2)
    modern = http(
        form_server,
        "POST",
        json.dumps(message).encode(),
        HTTP_MCP_SESSION_ID=odd,
        HTTP_LAST_EVENT_ID=last_event_id,
        HTTP_MCP_PROTOCOL_VERSION=VERSION,
        HTTP_MCP_METHOD="tools/list",
    )
    assert_json_rpc(modern, "tools/list")
    assert modern.status_code == 200


NO_SESSION = {"code": -32000, "message": "Bad Request: Mcp-Session-Id header is required"}
NOT_FOUND = {"code": -32001, "message": "Session not found"}


@ONE_ADDRESS
@pytest.mark.django_db
@FORM_SETTINGS
@given(
    session_id=odd_ids,
    store=st.sampled_from(["database", "memcached"]),
    verb=st.sampled_from(["POST", "GET", "DELETE"]),
)
def test_a_session_id_the_server_never_minted_is_not_found_in_any_store(
    session_id: str, store: str, verb: str
) -> None:
    with override_settings(CACHES=MEMCACHED_KEYS):
        cache.clear()
        target = Server(
            name="fuzz-sessions", sessions=DatabaseSessions() if store == "database" else CacheSessions()
        )
        open_legacy_session(target)  # a session exists; it is not this one
        ping = json.dumps({"jsonrpc": "2.0", "id": 4, "method": "ping"}).encode()
        response = http(
            target,
            verb,
            ping if verb == "POST" else b"",
            HTTP_MCP_SESSION_ID=session_id,
            HTTP_LAST_EVENT_ID="c:1",
        )
    body = json.loads(response.content)  # type: ignore[attr-defined]
    event(f"{verb} {response.status_code}")
    if not session_id:
        # No session named: a POST is told to name one; GET and DELETE have nothing to resume or end.
        assert (response.status_code, body.get("error")) in ((400, NO_SESSION), (405, body.get("error")))
        assert response.status_code == (400 if verb == "POST" else 405)
    else:
        assert (response.status_code, body["error"]) == (404, NOT_FOUND), (session_id, body)
