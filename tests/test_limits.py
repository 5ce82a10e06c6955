"""The configurable limits on the wire: each one just under (served) and just over (a clear refusal).

Every refusal is a JSON-RPC error with the right code, or an ``isError`` result that names the problem;
never a 500 or a -32603.
"""

from __future__ import annotations

import io
import json
import random
import string
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django import forms
from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.test import Client, RequestFactory, override_settings
from django.urls import reverse

from mcpforms.api import serve
from mcpforms.models import Era2025Call, Era2025Session, FieldDefinition, FormDefinition, StreamEvent
from mcpforms.protocol import RequestContext, state, tokens
from mcpforms.protocol.era2025.sessions import MemorySessions
from mcpforms.protocol.server import Server, default_server
from mcpforms.registry import register, register_prompt, registry_for
from mcpforms.tools import RegistrationError
from tests import wire
from tests.core_client import CoreClient, accept, asked, text
from tests.forms import SignupForm
from tests.test_admin import definition_post
from tests.wire import VERSION

pytestmark = pytest.mark.django_db

META = wire.meta(wire.ELICITATION)


def limits(**values: Any) -> override_settings:
    """Set some limits, keeping the rest of the test settings' ``MCPFORMS``."""
    return override_settings(MCPFORMS={**getattr(settings, "MCPFORMS", {}), **values})


@pytest.fixture
def server() -> Server:
    server = Server(name="limits", sessions=MemorySessions())
    register(SignupForm, server=server)

    @server.tool(description="Say how many characters the text argument has.")
    def measure(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": str(len(arguments.get("text", "")))}]}

    return server


def message(tool: str = "measure", **params: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": {}, **params, "_meta": META},
    }


def wire_headers(payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "HTTP_MCP_PROTOCOL_VERSION": VERSION,
        "HTTP_MCP_METHOD": payload["method"],
        "HTTP_MCP_NAME": payload["params"]["name"],
    }


def post(server: Server, payload: dict[str, Any], *, body: bytes | str | None = None) -> HttpResponseBase:
    raw = json.dumps(payload) if body is None else body
    request = RequestFactory().post("/mcp", raw, content_type="application/json", **wire_headers(payload))
    request.user = AnonymousUser()
    return serve(server, request)


def body_of(response: HttpResponseBase) -> dict[str, Any]:
    assert isinstance(response, HttpResponse), response
    answer: dict[str, Any] = json.loads(response.content)
    return answer


def result_text(response: HttpResponseBase) -> str:
    answer = body_of(response)
    assert response.status_code == 200 and "result" in answer, answer
    return text(answer["result"])


def error_of(response: HttpResponseBase) -> dict[str, Any]:
    answer = body_of(response)
    assert "error" in answer, answer
    assert answer["error"]["code"] != -32603, answer
    error: dict[str, Any] = answer["error"]
    return error


# ---- MAX_BODY_BYTES ----------------------------------------------------------------------------------------

BODY_LIMIT = 2_000


def padded(payload: dict[str, Any], size: int) -> bytes:
    """``payload`` as JSON of exactly ``size`` bytes: JSON allows whitespace after the value."""
    raw = json.dumps(payload).encode()
    assert len(raw) <= size
    return raw + b" " * (size - len(raw))


@pytest.mark.parametrize("size", [BODY_LIMIT, BODY_LIMIT + 1])
def test_a_body_just_under_the_limit_is_served_and_one_byte_more_is_413(server, size):
    payload = message(arguments={"text": "hello"})
    with limits(MAX_BODY_BYTES=BODY_LIMIT):
        response = post(server, payload, body=padded(payload, size))
    if size <= BODY_LIMIT:
        assert result_text(response) == "5"
    else:
        assert response.status_code == 413
        assert error_of(response) == {
            "code": -32600,
            "message": f"Request body too large: more than {BODY_LIMIT} bytes (MCPFORMS['MAX_BODY_BYTES'])",
        }


class Unread(io.BytesIO):
    """A request stream that fails the test if anything reads it."""

    def read(self, *args: Any) -> bytes:
        raise AssertionError("the body was read")


def test_a_declared_length_over_the_limit_is_refused_before_the_body_is_read(server):
    payload = message(arguments={"text": "hello"})
    request = RequestFactory().post(
        "/mcp", padded(payload, BODY_LIMIT + 1), content_type="application/json", **wire_headers(payload)
    )
    request._stream = Unread()
    request.user = AnonymousUser()
    with limits(MAX_BODY_BYTES=BODY_LIMIT):
        response = serve(server, request)
    assert response.status_code == 413


def chunked(payload: dict[str, Any], body: bytes) -> ASGIRequest:
    """An ASGI request with no Content-Length, as a chunked upload arrives."""
    headers = [(b"content-type", b"application/json"), (b"host", b"testserver")]
    headers += [
        (name[5:].lower().replace("_", "-").encode(), value.encode())
        for name, value in wire_headers(payload).items()
    ]
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers, "query_string": b""}
    request = ASGIRequest(scope, io.BytesIO(body))
    request.user = AnonymousUser()
    return request


@pytest.mark.parametrize("size", [BODY_LIMIT, BODY_LIMIT + 1])
def test_a_chunked_body_is_measured_as_it_is_read(server, size):
    payload = message(arguments={"text": "hello"})
    request = chunked(payload, padded(payload, size))
    assert "CONTENT_LENGTH" not in request.META
    with limits(MAX_BODY_BYTES=BODY_LIMIT):
        response = serve(server, request)
    if size <= BODY_LIMIT:
        assert result_text(response) == "5"
    else:
        assert response.status_code == 413
        assert "MAX_BODY_BYTES" in error_of(response)["message"]


# ---- MAX_JSON_DEPTH ----------------------------------------------------------------------------------------


def depth(value: Any) -> int:
    """How deep the deepest value of a JSON document sits, the document itself being level 1."""
    if isinstance(value, dict):
        return 1 + max((depth(item) for item in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(item) for item in value), default=0)
    return 1


def nested(levels: int) -> dict[str, Any]:
    """A call whose argument is nested so that the whole document is ``levels`` deep."""
    inner: Any = 0
    payload = message(arguments={"deep": inner})
    while depth(payload) < levels:
        inner = [inner]
        payload = message(arguments={"deep": inner})
    return payload


@pytest.mark.parametrize("configured", [None, 20])
def test_nesting_to_the_limit_is_served_and_one_level_more_is_a_parse_error(server, configured):
    limit = configured or 64  # the default
    with limits(**({"MAX_JSON_DEPTH": configured} if configured else {})):
        at_limit = nested(limit)
        assert depth(at_limit) == limit
        assert result_text(post(server, at_limit)) == "0"

        too_deep = nested(limit + 1)
        assert depth(too_deep) == limit + 1
        response = post(server, too_deep)
    assert response.status_code == 400
    assert error_of(response) == {
        "code": -32700,
        "message": f"Parse error: the body nests deeper than {limit} levels",
    }


# ---- MAX_STRING_LENGTH -------------------------------------------------------------------------------------

STRING_LIMIT = 3_000


def test_a_string_of_the_limit_is_served_and_one_character_more_is_invalid_params(server):
    with limits(MAX_STRING_LENGTH=STRING_LIMIT, MAX_STATE_BYTES=STRING_LIMIT):
        assert result_text(post(server, message(arguments={"text": "é" * STRING_LIMIT}))) == str(STRING_LIMIT)
        response = post(server, message(arguments={"text": "é" * (STRING_LIMIT + 1)}))
    assert response.status_code == 400
    assert error_of(response) == {
        "code": -32602,
        "message": f"Invalid params: a string is longer than {STRING_LIMIT} characters "
        "(MCPFORMS['MAX_STRING_LENGTH'])",
    }


@pytest.mark.parametrize("length", [STRING_LIMIT, STRING_LIMIT + 1])
def test_keys_count_as_strings(server, length):
    with limits(MAX_STRING_LENGTH=STRING_LIMIT, MAX_STATE_BYTES=STRING_LIMIT):
        response = post(server, message(arguments={"k" * length: 1}))
    if length <= STRING_LIMIT:
        assert result_text(response) == "0"
    else:
        assert error_of(response)["code"] == -32602


# ---- MAX_STATE_BYTES ---------------------------------------------------------------------------------------

STATE_LIMIT = 2_000


def test_an_echoed_state_over_the_limit_is_refused_before_any_signature_check(server, monkeypatch):
    checked: list[str] = []
    unsign = tokens.unsign

    def spy(token: str, **kwargs: Any) -> Any:
        checked.append(token)
        return unsign(token, **kwargs)

    monkeypatch.setattr(state, "unsign", spy)
    with limits(MAX_STATE_BYTES=STATE_LIMIT):
        at_limit = post(server, message("signup", requestState="A" * STATE_LIMIT))
        over = post(server, message("signup", requestState="A" * (STATE_LIMIT + 1)))
    # Just under: the size is fine, so the signature is checked, and this one is forged.
    assert error_of(at_limit) == {
        "code": -32602,
        "message": "Invalid or expired requestState",
        "data": {"reason": "invalid_request_state"},
    }
    assert checked == ["A" * STATE_LIMIT]
    assert over.status_code == 400
    assert error_of(over) == {
        "code": -32602,
        "message": f"Invalid params: requestState is longer than {STATE_LIMIT} bytes "
        "(MCPFORMS['MAX_STATE_BYTES'])",
    }


@pytest.fixture
def frozen(monkeypatch) -> None:
    """The same clock and flow id for every token, so that a token's length is reproducible."""
    monkeypatch.setattr(time, "time", lambda: 1_900_000_000.0)
    monkeypatch.setattr("mcpforms.protocol.state.secrets.token_urlsafe", lambda size: "f" * 16)


def test_answers_too_large_for_a_state_end_the_call_instead_of_minting_one(server, frozen):
    # Letters at random barely compress, so the state grows with the answer.
    long_email = "".join(random.Random(12).choices(string.ascii_letters, k=1500)) + "@example.invalid"
    client = CoreClient(server, over_http=True)
    arguments = {"email": long_email, "plan": "pro"}
    asking = client.call("signup", arguments)
    size = len(asking["requestState"])
    assert size > 1500

    with limits(MAX_STATE_BYTES=size):
        assert len(client.call("signup", arguments)["requestState"]) == size
    with limits(MAX_STATE_BYTES=size - 1):
        refused = client.call("signup", arguments)
    assert refused["isError"] is True
    assert text(refused) == (
        "The answers are too large to carry to the next round: their requestState would be "
        f"{size} bytes, more than {size - 1} (MCPFORMS['MAX_STATE_BYTES']). Nothing was submitted; "
        "call again with shorter values."
    )


def test_a_prompt_whose_state_would_be_too_large_is_invalid_params(frozen):
    server = Server(name="limits-prompt")
    register_prompt(SignupForm, name="welcome", template="Welcome {email}.", server=server)
    client = CoreClient(server, over_http=True)
    with limits(MAX_STATE_BYTES=100):
        body = client.send("prompts/get", {"name": "welcome", "arguments": {}})
    assert body["error"]["code"] == -32602
    assert "MCPFORMS['MAX_STATE_BYTES']" in body["error"]["message"]


# ---- MAX_ROUNDS --------------------------------------------------------------------------------------------

INVALID = accept(email="ada@example.invalid", plan="pro")


@pytest.mark.parametrize("rounds", [1, 2])
def test_a_flow_completes_in_its_last_allowed_round(server, rounds):
    client = CoreClient(server, over_http=True)
    with limits(MAX_ROUNDS=rounds):
        result = client.call("signup", {})
        for _ in range(rounds - 1):
            result = client.answer(result, "signup", signup=INVALID)
            asked(result, "signup")
        done = client.answer(result, "signup", signup=accept(email="ada@example.com", plan="pro"))
    assert not done.get("isError"), done
    assert done["structuredContent"]["email"] == "ada@example.com"


def test_a_flow_that_would_ask_once_more_than_the_limit_ends_and_can_start_over(server):
    client = CoreClient(server, over_http=True)
    with limits(MAX_ROUNDS=2):
        first = client.call("signup", {})
        second = client.answer(first, "signup", signup=INVALID)
        asked(second, "signup")
        third = client.answer(second, "signup", signup=INVALID)
        again = client.call("signup", {})
    assert third["isError"] is True
    assert text(third) == (
        "The user was asked 2 times without completing this, the most one flow may take "
        "(MCPFORMS['MAX_ROUNDS']); nothing was submitted. Start over: call again without requestState."
    )
    asked(again, "signup")  # a new flow asks again


def test_a_page_the_user_is_still_on_is_asked_again_without_using_up_a_round(server):
    register(SignupForm, name="signup_page", path="url", server=server)
    client = CoreClient(server, capabilities={"elicitation": {"form": {}, "url": {}}}, over_http=True)
    opened = {"inputResponses": {"signup_page": {"action": "accept"}}}
    with limits(MAX_ROUNDS=1, BASE_URL="http://testserver"):
        result = client.call("signup_page", {})
        for _ in range(3):  # the client polls while the user has not submitted the page
            result = client.call("signup_page", {}, requestState=result["requestState"], **opened)
            assert result["inputRequests"]["signup_page"]["params"]["mode"] == "url", result


class LegacyWire:
    """A 2025-11-25 client over HTTP: a session, server requests on SSE, answers POSTed, GET to resume."""

    def __init__(self, server: Server) -> None:
        self.server = server
        response = self.post(wire.initialize({"elicitation": {"form": {}}}, client="limits"))
        self.session = response["Mcp-Session-Id"]

    def _headers(self) -> dict[str, Any]:
        headers: dict[str, Any] = {"HTTP_MCP_PROTOCOL_VERSION": "2025-11-25"}
        if hasattr(self, "session"):
            headers["HTTP_MCP_SESSION_ID"] = self.session
        return headers

    def post(self, payload: dict[str, Any]) -> HttpResponseBase:
        request = RequestFactory().post(
            "/mcp", json.dumps(payload), content_type="application/json", **self._headers()
        )
        request.user = AnonymousUser()
        response = serve(self.server, request)
        assert response.status_code in (200, 202), response
        return response

    def resume(self, last_event_id: str) -> list[tuple[str, dict[str, Any]]]:
        request = RequestFactory().get("/mcp", HTTP_LAST_EVENT_ID=last_event_id, **self._headers())
        request.user = AnonymousUser()
        return events(serve(self.server, request))


def events(response: HttpResponseBase) -> list[tuple[str, dict[str, Any]]]:
    """The (id, message) of each SSE event that carries one."""
    assert isinstance(response, HttpResponse)
    found = []
    for frame in response.content.decode().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in frame.splitlines() if ": " in line)
        if fields.get("data"):
            found.append((fields["id"], json.loads(fields["data"])))
    return found


def rounds_on_a_2025_session(client: LegacyWire, answers: int) -> Iterator[dict[str, Any]]:
    """Call signup, answer each elicitation with an invalid email ``answers`` times; yield each message."""
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "signup", "arguments": {}}}
    ((last, request),) = events(client.post(call))
    yield request
    for _ in range(answers):
        client.post({"jsonrpc": "2.0", "id": request["id"], "result": INVALID})
        ((last, request),) = client.resume(last)
        yield request


def test_a_2025_session_counts_the_same_rounds(server):
    with limits(MAX_ROUNDS=2):
        messages = list(rounds_on_a_2025_session(LegacyWire(server), answers=2))
    assert [message.get("method") for message in messages] == ["elicitation/create"] * 2 + [None]
    final = messages[-1]["result"]
    assert final["isError"] is True
    assert "asked 2 times" in final["content"][0]["text"]


def test_a_2025_session_asks_up_to_the_limit(server):
    with limits(MAX_ROUNDS=3):
        messages = list(rounds_on_a_2025_session(LegacyWire(server), answers=2))
    assert [message.get("method") for message in messages] == ["elicitation/create"] * 3


# ---- MAX_FORM_FIELDS ---------------------------------------------------------------------------------------


def form_with(count: int) -> type[forms.Form]:
    return type("WideForm", (forms.Form,), {f"field_{n}": forms.CharField() for n in range(count)})


def test_a_code_form_may_have_as_many_fields_as_the_limit_and_no_more():
    server = Server(name="limits-fields")
    with limits(MAX_FORM_FIELDS=5):
        register(form_with(5), name="five", server=server)
        register(form_with(6), name="six", server=server)
        (raised,) = registry_for(server).check()
        with pytest.raises(RegistrationError):
            register_prompt(form_with(6), name="six", template="{field_0}", server=server)
        # Checked while the limit holds, as manage.py check and the server read the one setting.
        names = [tool["name"] for tool in CoreClient(server).result("tools/list")["tools"]]
    assert raised.id == "mcpforms.E406"
    assert raised.msg == (
        "WideForm has 6 fields, more than the 5 a form may have (MCPFORMS['MAX_FORM_FIELDS']); "
        "split the form or raise the limit."
    )
    assert "five" in names and "six" not in names


def definition_with(name: str, count: int) -> FormDefinition:
    definition = FormDefinition.objects.create(name=name, title=name.title())
    for order in range(count):
        FieldDefinition.objects.create(definition=definition, order=order, name=f"field_{order}", type="text")
    return definition


def test_an_admin_defined_form_over_the_limit_is_not_offered():
    with limits(MAX_FORM_FIELDS=3):
        definition_with("wide", 4)
        definition_with("narrow", 3)
        names = [tool["name"] for tool in CoreClient(default_server).result("tools/list")["tools"]]
    assert "narrow" in names
    assert "wide" not in names


@pytest.mark.parametrize("count", [3, 4])
def test_the_admin_refuses_to_save_a_form_over_the_limit(count):
    staff = Client()
    staff.force_login(User.objects.create_superuser("staff", "staff@example.com", "pw"))
    fields = [{"name": f"field_{n}"} for n in range(count)]
    with limits(MAX_FORM_FIELDS=3):
        response = staff.post(reverse("admin:mcpforms_formdefinition_add"), definition_post(fields))
    if count <= 3:
        assert response.status_code == 302
        assert FormDefinition.objects.get().fields.count() == 3
    else:
        assert response.status_code == 200
        assert not FormDefinition.objects.exists()
        (inline,) = response.context["inline_admin_formsets"]
        assert inline.formset.non_form_errors() == [
            "A form may have at most 3 fields (MCPFORMS['MAX_FORM_FIELDS']); "
            "assistants are never offered a larger one."
        ]


# ---- what the 2025 era stores ------------------------------------------------------------------------------

# About 1 MB each of capabilities and clientInfo, in strings each under MAX_STRING_LENGTH.
MEGABYTE_OF_STRINGS = ["x" * 90_000] * 11


def initialize_over_http(server: Server, *, address: str, **params: Any) -> HttpResponseBase:
    payload = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
            **params,
        },
    }
    request = RequestFactory().post(
        "/mcp", json.dumps(payload), content_type="application/json", REMOTE_ADDR=address
    )
    request.user = AnonymousUser()
    return serve(server, request)


def stored_bytes(row: Era2025Session) -> int:
    return len(json.dumps(row.capabilities)) + len(json.dumps(row.client_info))


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=4 * 1024 * 1024)
def test_twenty_anonymous_sessions_with_megabyte_declarations_store_a_few_kilobytes():
    server = Server(key="stored", name="stored")  # the configured store: DatabaseSessions
    register(SignupForm, server=server)
    capabilities = {
        "elicitation": {"form": {"padding": MEGABYTE_OF_STRINGS}},
        "experimental": {"padding": {"strings": MEGABYTE_OF_STRINGS}},
    }
    client_info = {"name": "big", "version": "1", "padding": MEGABYTE_OF_STRINGS}
    with limits(MAX_BODY_BYTES=3 * 1024 * 1024):
        for _ in range(20):
            response = initialize_over_http(
                server, address="192.0.2.7", capabilities=capabilities, clientInfo=client_info
            )
            assert response.status_code == 200, body_of(response)
    rows = list(Era2025Session.objects.all())
    assert len(rows) == 20
    assert max(stored_bytes(row) for row in rows) < 200
    assert sum(stored_bytes(row) for row in rows) < 4_000


@pytest.mark.django_db(transaction=True)  # a 2025-era call runs on a thread of its own, with its connection
def test_calls_with_unknown_keys_store_none_of_them():
    server = Server(key="stored-calls", name="stored")
    register(SignupForm, server=server)
    client = LegacyWire(server)
    unknown = {f"unknown_{n}": "x" * 90_000 for n in range(5)}
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "signup", "arguments": {"plan": "pro", **unknown}, **unknown},
    }
    for _ in range(5):
        ((_, request),) = events(client.post(call))
        assert request["method"] == "elicitation/create"
    stored = list(Era2025Call.objects.values_list("params", flat=True))
    assert stored == [{"name": "signup", "arguments": {"plan": "pro"}}] * 5
    assert "unknown_0" not in json.dumps(list(StreamEvent.objects.values_list("data", flat=True)))


def test_an_initialize_over_budget_is_429_with_retry_after_naming_the_setting():
    server = Server(key="budget", name="budget")
    with limits(ANONYMOUS_SESSIONS_PER_ADDRESS=3):
        for _ in range(3):
            assert initialize_over_http(server, address="198.51.100.4").status_code == 200
        refused = initialize_over_http(server, address="198.51.100.4")
        assert refused.status_code == 429
        assert 0 < int(refused["Retry-After"]) <= 86400
        error = error_of(refused)
        assert error["code"] == -32000
        assert "MCPFORMS['ANONYMOUS_SESSIONS_PER_ADDRESS']" in error["message"]
        assert "Mcp-Session-Id" not in refused
        assert initialize_over_http(server, address="198.51.100.5").status_code == 200
    assert Era2025Session.objects.count() == 4
