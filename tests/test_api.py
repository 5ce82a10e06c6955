"""The HTTP edge: Host and Origin, verbs, bodies, status codes, JSON or SSE (spec §8)."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from django.http import HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.test import Client, RequestFactory, override_settings

from mcpforms.api import build_api, serve
from mcpforms.protocol import RequestContext, Server
from tests import wire
from tests.wire import VERSION

HEADERS: dict[str, Any] = {"HTTP_MCP_PROTOCOL_VERSION": VERSION, "HTTP_MCP_METHOD": "tools/list"}
META = wire.meta()

server = Server(key="api-test", name="api-test", version="1")


@server.tool(description="Report progress when asked, then answer.")
def count(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    if arguments.get("report", True):
        for step in (1, 2):
            ctx.report_progress(step, 2)
    return {"content": [{"type": "text", "text": "counted"}]}


server.tool()(wire.whoami)


def post(
    method: str,
    params: dict[str, Any] | None = None,
    *,
    body: Any = None,
    user: Any = None,
    **extra: str,
) -> HttpResponseBase:
    params = {**(params or {}), "_meta": {**META, **(params or {}).get("_meta", {})}}
    headers: dict[str, Any] = {"HTTP_MCP_PROTOCOL_VERSION": VERSION, "HTTP_MCP_METHOD": method}
    if "name" in params:
        headers["HTTP_MCP_NAME"] = params["name"]
    payload = (
        body
        if body is not None
        else json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    )
    request = RequestFactory().post("/mcp", payload, content_type="application/json", **(headers | extra))
    if user is not None:
        request.user = user  # a signed-in session, from a page that passed Django's CSRF check
        request._dont_enforce_csrf_checks = True  # type: ignore[attr-defined]
    return serve(server, request)


def body_of(response: HttpResponseBase) -> Any:
    assert isinstance(response, HttpResponse)
    return json.loads(response.content)


def test_discover_as_json():
    response = post("server/discover")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert body_of(response)["result"]["supportedVersions"] == [VERSION]


@pytest.mark.parametrize("verb", ["get", "delete", "put", "patch"])
def test_only_post(verb):
    response = getattr(Client(), verb)("/mcp")
    assert response.status_code == 405
    assert response["Allow"] == "POST"
    assert body_of(response)["error"]["code"] == -32600


def test_mounted_with_one_line_and_csrf_exempt():
    client = Client(enforce_csrf_checks=True)
    payload = {"jsonrpc": "2.0", "id": "d", "method": "server/discover", "params": {"_meta": META}}
    response = client.post(
        "/mcp",
        payload,
        content_type="application/json",
        headers={"MCP-Protocol-Version": VERSION, "Mcp-Method": "server/discover"},
    )
    assert response.status_code == 200
    assert body_of(response)["id"] == "d"


def test_disallowed_host_is_forbidden():
    response = post("server/discover", HTTP_HOST="evil.example.com", HTTP_ORIGIN="http://evil.example.com")
    assert response.status_code == 403
    assert body_of(response) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32600,
            "message": "Forbidden: the Host 'evil.example.com' is not allowed; add it to ALLOWED_HOSTS in "
            "the Django settings if this site is served under that name",
        },
    }


def test_an_origin_refused_behind_a_tls_proxy_names_what_was_sent_what_is_expected_and_both_fixes():
    # A proxy ends TLS: the browser's Origin is https, Django sees http without SECURE_PROXY_SSL_HEADER.
    response = post("server/discover", HTTP_ORIGIN="https://testserver")
    assert response.status_code == 403
    message = body_of(response)["error"]["message"]
    assert message.startswith("Forbidden: the Origin 'https://testserver' is not allowed;")
    assert "accepts its own, 'http://testserver', and those in MCPFORMS['ALLOWED_ORIGINS']" in message
    assert "SECURE_PROXY_SSL_HEADER" in message
    with override_settings(SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https")):
        fixed = post(
            "server/discover",
            HTTP_HOST="testserver",
            HTTP_ORIGIN="https://testserver",
            HTTP_X_FORWARDED_PROTO="https",
        )
    assert fixed.status_code == 200


def test_a_refusal_quotes_a_long_origin_cut_short():
    message = body_of(post("server/discover", HTTP_ORIGIN="http://" + "a" * 5000))["error"]["message"]
    assert len(message) < 1000


@pytest.mark.parametrize(
    ("origin", "status"),
    [
        ("http://testserver", 200),
        ("http://evil.example.com", 403),
        ("https://testserver", 403),
        ("null", 403),
        ("https://app.example.com", 200),
    ],
)
@override_settings(MCPFORMS={"ALLOWED_ORIGINS": ["https://app.example.com"], "ALLOW_ANONYMOUS": True})
def test_origin_allow_list(origin, status):
    assert post("server/discover", HTTP_ORIGIN=origin).status_code == status


def test_parse_error():
    response = post("server/discover", body="{not json")
    assert response.status_code == 400
    assert body_of(response) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error: the body is not JSON"},
    }


def test_batch_is_invalid():
    response = post("tools/list", body=json.dumps([{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]))
    assert (response.status_code, body_of(response)["error"]["code"]) == (400, -32600)


def test_notification_is_accepted_without_a_body():
    response = post(
        "notifications/cancelled", body=json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled"})
    )
    assert response.status_code == 202
    assert isinstance(response, HttpResponse) and response.content == b""


def test_unknown_method_is_404():
    response = post("ping")
    assert (response.status_code, body_of(response)["error"]["code"], body_of(response)["id"]) == (
        404,
        -32601,
        1,
    )


def test_header_mismatch_is_400():
    response = post("tools/list", HTTP_MCP_METHOD="tools/call")
    assert (response.status_code, body_of(response)["error"]["code"]) == (400, -32020)


def test_the_user_reaches_the_handler():
    user = SimpleNamespace(is_authenticated=True, pk=42)
    result = body_of(post("tools/call", {"name": "whoami"}, user=user))["result"]
    assert result["content"][0]["text"] == "user:42"


def test_without_a_progress_token_the_answer_is_json():
    response = post("tools/call", {"name": "count"})
    assert response["Content-Type"] == "application/json"
    assert body_of(response)["result"]["content"][0]["text"] == "counted"


def test_a_token_without_progress_is_still_json():
    response = post(
        "tools/call", {"name": "count", "arguments": {"report": False}, "_meta": {"progressToken": "p"}}
    )
    assert response["Content-Type"] == "application/json"


def read_events(response: HttpResponseBase) -> list[dict[str, Any]]:
    assert isinstance(response, StreamingHttpResponse)
    text = b"".join(response.streaming_content).decode()  # type: ignore[arg-type]
    frames = [frame for frame in text.split("\n\n") if frame]
    assert all(frame.startswith("event: message\ndata: ") for frame in frames)
    return [json.loads(frame.split("data: ", 1)[1]) for frame in frames]


def test_reported_progress_streams_as_sse():
    user = SimpleNamespace(is_authenticated=False, pk=None)
    response = post("tools/call", {"name": "count", "_meta": {"progressToken": "p"}}, user=user)
    assert response["Content-Type"] == "text/event-stream"
    assert response["X-Accel-Buffering"] == "no"
    events = read_events(response)
    assert [event.get("method") for event in events] == [
        "notifications/progress",
        "notifications/progress",
        None,
    ]
    assert events[0]["params"] == {"progressToken": "p", "progress": 1, "total": 2}
    assert events[-1]["id"] == 1 and events[-1]["result"]["content"][0]["text"] == "counted"


def test_an_error_with_a_token_is_json():
    response = post("tools/call", {"name": "missing", "_meta": {"progressToken": "p"}})
    assert (response.status_code, body_of(response)["error"]["code"]) == (400, -32602)


def test_build_api_namespaces():
    assert build_api(server, namespace="another").urls[2] == "another"


def test_a_bug_in_the_edge_is_an_internal_error_not_a_500(monkeypatch, caplog):
    monkeypatch.setattr("mcpforms.api.decode", lambda body: 1 / 0)
    response = post("tools/list")
    assert response.status_code == 200
    assert body_of(response)["error"] == {"code": -32603, "message": "Internal error"}
    assert "ZeroDivisionError" in caplog.text


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=100)
def test_a_body_too_large_is_413():
    response = post("tools/list", body=json.dumps({"padding": "x" * 200}))
    assert response.status_code == 413
    assert body_of(response)["error"]["code"] == -32600


@pytest.mark.parametrize(
    ("body", "code", "why"),
    [
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"x": NaN}}', -32700, "not JSON"),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"x": -Infinity}}',
            -32700,
            "not JSON",
        ),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"x": "\\udfff"}}',
            -32700,
            "surrogate",
        ),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"\\ud800": 1}}',
            -32700,
            "surrogate",
        ),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"x": "a\\u0000b"}}', -32602, "NUL"),
        (b'{"a":' * 65 + b"1" + b"}" * 65, -32700, "deeper than 64"),
    ],
)
def test_text_nothing_can_store_or_echo_is_refused_at_the_edge(body, code, why):
    request = RequestFactory().post("/mcp", body, content_type="application/json", **HEADERS)
    response = serve(Server(), request)
    assert isinstance(response, HttpResponse) and response.status_code == 400
    error = json.loads(response.content)["error"]
    assert error["code"] == code and why in error["message"]


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", ""])
def test_a_body_that_is_not_declared_json_is_415(content_type):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    request = RequestFactory().generic("POST", "/mcp", body, content_type=content_type, **HEADERS)
    response = serve(Server(), request)
    assert isinstance(response, HttpResponse) and response.status_code == 415
    assert json.loads(response.content)["error"]["code"] == -32600


@pytest.mark.django_db
@override_settings(MCPFORMS={"ALLOW_ANONYMOUS": True})
def test_a_trailing_slash_reaches_the_same_endpoint():
    from django.test import Client

    payload = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}})
    headers = {"MCP-Protocol-Version": VERSION, "Mcp-Method": "server/discover"}
    for url in ("/mcp", "/mcp/"):
        response = Client().post(url, payload, content_type="application/json", headers=headers)
        assert response.status_code == 200, url
        assert response.json()["result"]["supportedVersions"] == [VERSION]


def test_the_endpoint_urls_pass_djangos_url_checks():
    # The trailing-slash route once drew urls.W002 in every project that mounts the endpoint.
    from django.core.checks import Tags, run_checks

    assert run_checks(tags=[Tags.urls]) == []
