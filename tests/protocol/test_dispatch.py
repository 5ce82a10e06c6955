"""The core end to end, without HTTP: one message in, one Reply out, every result valid for 2026-07-28."""

from __future__ import annotations

import logging
import time
from types import SimpleNamespace
from typing import Any
from unittest import mock

import pytest
from django.test import override_settings
from mcp_types.methods import validate_server_result

from mcpforms.fields import AutoFormField
from mcpforms.protocol import (
    Prompt,
    PromptArgument,
    RequestContext,
    Resource,
    ResourceTemplate,
    Server,
    Tool,
    ToolError,
)
from mcpforms.protocol.reply import Reply
from mcpforms.schema import form_input_request
from tests import wire

VERSION = "2026-07-28"
NAME = (AutoFormField(name="name", required=True),)
FORM: dict[str, Any] = {"elicitation": {"form": {}}}


def build_server() -> Server:
    server = Server(name="test-server", version="9.9")

    @server.tool(description="Greet someone after asking their name.")
    def greet(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
        state = ctx.request_state
        if state is not None and "name" in state.answers:
            return {"content": [{"type": "text", "text": f"Hello again, {state.answers['name']}!"}]}
        response = (ctx.input_responses or {}).get("ask")
        if isinstance(response, dict) and response.get("action") == "accept":
            name = response["content"]["name"]
            if arguments.get("twice"):
                token = ctx.mint_state(answers={"name": name})
                return {"resultType": "input_required", "requestState": token}
            return {
                "content": [{"type": "text", "text": f"Hello, {name}!"}],
                "structuredContent": {"n": name},
            }
        return form_input_request(NAME, key="ask", message="Your name?")

    @server.tool(description="Ask the client's model.")
    def sample(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
        request = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}}
        return {"resultType": "input_required", "inputRequests": {"q": request}}

    @server.tool(description="Fail as a tool.")
    def fail(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
        raise ToolError("It went wrong.")

    @server.tool(description="Crash.")
    def crash(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("secret detail")

    @server.tool(description="Return structured content only.")
    def bare(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"structuredContent": {"ok": True}}

    @server.tool(description="Return an input_required with nothing in it.")
    def empty(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"resultType": "input_required"}

    @server.tool(description="Report progress.")
    def slow(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
        for step in (10, 5, 50):
            ctx.report_progress(step, 100, message=f"step {step}")
        return {"content": []}

    def prompt(ctx: RequestContext, arguments: dict[str, str]) -> dict[str, Any]:
        if ctx.input_responses is None:
            return form_input_request(NAME, key="ask", message="Context?")
        return {"messages": [{"role": "user", "content": {"type": "text", "text": arguments["topic"]}}]}

    def completer(ctx: RequestContext, name: str, value: str, filled: dict[str, str]) -> list[str]:
        return [f"{value}{index}" for index in range(150)]

    server.add_prompt(
        Prompt(
            "topic",
            "A prompt about a topic.",
            prompt,
            arguments=(PromptArgument("topic", required=True),),
            complete=completer,
        )
    )

    def read(ctx: RequestContext, uri: str) -> dict[str, Any]:
        return {"contents": [{"uri": uri, "text": "hi"}], "ttlMs": 5, "cacheScope": "public"}

    def read_item(ctx: RequestContext, uri: str, variables: dict[str, str]) -> dict[str, Any]:
        return {"contents": [{"uri": uri, "text": variables["id"]}]}

    server.add_resource(Resource("test://a", "a", read))
    server.add_resource_template(ResourceTemplate("test://items/{id}", "items", read_item))
    return server


@pytest.fixture
def server() -> Server:
    return build_server()


def meta(capabilities: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return wire.meta(FORM if capabilities is None else capabilities, extra=extra)


def headers_for(method: str, params: dict[str, Any]) -> dict[str, str]:
    headers = {"mcp-protocol-version": VERSION, "mcp-method": method}
    if method in ("tools/call", "prompts/get"):
        headers["mcp-name"] = params["name"]
    if method == "resources/read":
        headers["mcp-name"] = params["uri"]
    return headers


def send(
    server: Server,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    capabilities: dict[str, Any] | None = None,
    request_id: Any = 1,
    **kwargs: Any,
) -> Reply:
    params = {**(params or {}), "_meta": meta(capabilities)}
    payload = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return server.handle(payload, headers=headers_for(method, params), **kwargs)


def result_of(
    server: Server, method: str, params: dict[str, Any] | None = None, **kwargs: Any
) -> dict[str, Any]:
    reply = send(server, method, params, **kwargs)
    assert reply.status == 200, reply
    assert reply.body is not None and "result" in reply.body, reply.body
    result: dict[str, Any] = reply.body["result"]
    # Every result the core emits must be valid for the revision (checked here, never on the hot path).
    validate_server_result(method, VERSION, result)
    return result


def error_of(
    server: Server, method: str, params: dict[str, Any] | None = None, **kwargs: Any
) -> tuple[int, Any]:
    reply = send(server, method, params, **kwargs)
    assert reply.body is not None and "error" in reply.body, reply.body
    assert reply.body["id"] == kwargs.get("request_id", 1)
    return reply.status, reply.body["error"]


SERVER_INFO = {"name": "test-server", "version": "9.9"}


def test_discover(server):
    result = result_of(server, "server/discover")
    assert result["supportedVersions"] == [VERSION]
    assert result["capabilities"] == {
        "tools": {},
        "prompts": {},
        "resources": {},
        "completions": {},
        "extensions": {"io.modelcontextprotocol/tasks": {}},
    }
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == SERVER_INFO
    assert (result["resultType"], result["cacheScope"], result["ttlMs"]) == ("complete", "public", 60000)
    assert "instructions" not in result


@override_settings(
    MCPFORMS={"INSTRUCTIONS": "Be nice.", "SERVER_NAME": "S", "CACHE_TTL_MS": 0, "TASK_STORE": None}
)
def test_discover_reads_settings():
    server = Server()
    result = result_of(server, "server/discover")
    assert result["instructions"] == "Be nice."
    assert result["ttlMs"] == 0
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "S"
    # Nothing but tools is served (no task store either), so nothing else is advertised, and the gated
    # methods are -32601.
    assert result["capabilities"] == {"tools": {}, "extensions": {}}
    for method in (
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "completion/complete",
        "tasks/get",
    ):
        assert error_of(server, method)[0] == 404


def test_tools_list_is_sorted_and_complete(server):
    result = result_of(server, "tools/list")
    names = [tool["name"] for tool in result["tools"]]
    assert names == sorted(names)
    assert all(tool["description"] and tool["inputSchema"]["type"] == "object" for tool in result["tools"])
    assert "nextCursor" not in result


@override_settings(MCPFORMS={"PAGE_SIZE": 3})
def test_tools_list_pages(server):
    seen: list[str] = []
    cursor = None
    while True:
        result = result_of(server, "tools/list", {"cursor": cursor} if cursor else {})
        seen += [tool["name"] for tool in result["tools"]]
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert seen == sorted(tool.name for tool in server.tools.all())


def test_invalid_cursor(server):
    status, error = error_of(server, "tools/list", {"cursor": "!!not base64!!"})
    assert (status, error["code"]) == (400, -32602)


def test_lists_are_private_for_a_user(server):
    user = SimpleNamespace(is_authenticated=True, pk=7)
    assert result_of(server, "tools/list", user=user)["cacheScope"] == "private"
    assert result_of(server, "server/discover", user=user)["cacheScope"] == "public"


def test_call_rounds(server):
    first = result_of(server, "tools/call", {"name": "greet"})
    assert first["resultType"] == "input_required"
    assert first["inputRequests"]["ask"]["method"] == "elicitation/create"
    assert "ttlMs" not in first and "cacheScope" not in first
    answer = {"ask": {"action": "accept", "content": {"name": "Ada"}}}
    second = result_of(server, "tools/call", {"name": "greet", "inputResponses": answer})
    assert second["resultType"] == "complete"
    assert second["content"] == [{"type": "text", "text": "Hello, Ada!"}]
    assert second["_meta"] == {"io.modelcontextprotocol/serverInfo": SERVER_INFO}


def test_request_state_round_trip_and_binding(server):
    answer = {"ask": {"action": "accept", "content": {"name": "Ada"}}}
    params = {"name": "greet", "arguments": {"twice": True}, "inputResponses": answer}
    token = result_of(server, "tools/call", params)["requestState"]
    third = result_of(
        server, "tools/call", {"name": "greet", "arguments": {"twice": True}, "requestState": token}
    )
    assert third["content"][0]["text"] == "Hello again, Ada!"
    # The state is bound to the tool, its arguments and the principal.
    for changed in (
        {"name": "greet", "arguments": {"twice": False}},
        {"name": "greet", "arguments": {"twice": True}, "user": SimpleNamespace(is_authenticated=True, pk=1)},
    ):
        user = changed.pop("user", None)
        status, error = error_of(server, "tools/call", {**changed, "requestState": token}, user=user)
        assert error == {
            "code": -32602,
            "message": "Invalid or expired requestState",
            "data": {"reason": "invalid_request_state"},
        }


def test_state_of_a_prompt_cannot_be_replayed_on_a_tool(server):
    reply = send(server, "prompts/get", {"name": "topic", "arguments": {"topic": "x"}})
    assert reply.status == 200
    from mcpforms.protocol.state import dump_state

    token = dump_state(
        server=server.key, tool="prompt:topic", arguments={}, principal="anonymous", answers={}
    )
    assert error_of(server, "tools/call", {"name": "greet", "requestState": token})[1]["code"] == -32602


@pytest.mark.parametrize("tampered", ["garbage", "", "a:b:c"])
def test_tampered_state(server, tampered):
    status, error = error_of(server, "tools/call", {"name": "greet", "requestState": tampered})
    assert error["message"] == "Invalid or expired requestState"


def test_expired_state(server):
    answer = {"ask": {"action": "accept", "content": {"name": "Ada"}}}
    params = {"name": "greet", "arguments": {"twice": True}, "inputResponses": answer}
    token = result_of(server, "tools/call", params)["requestState"]
    with mock.patch("time.time", return_value=time.time() + 7200):
        status, error = error_of(server, "tools/call", {**params, "requestState": token})
    assert error["code"] == -32602


@pytest.mark.parametrize(
    "responses",
    [None, [], "x", 12, {"ask": 12345}, {"ask": None}, {"other": "x", "ask": {"action": "accept"}}],
)
def test_malformed_input_responses_never_complete(server, responses):
    reply = send(server, "tools/call", {"name": "greet", "inputResponses": responses})
    assert reply.body is not None
    assert reply.body.get("error", {}).get("code") == -32602 or (
        reply.body["result"]["resultType"] == "input_required"
    )


def test_unknown_response_keys_are_ignored(server):
    answer = {"ask": {"action": "accept", "content": {"name": "Ada"}}, "extra": {"foo": 1}, "more": {}}
    assert (
        result_of(server, "tools/call", {"name": "greet", "inputResponses": answer})["resultType"]
        == "complete"
    )


@pytest.mark.parametrize(
    ("capabilities", "required"),
    [
        ({}, {"elicitation": {"form": {}}}),
        ({"elicitation": {"url": {}}}, {"elicitation": {"form": {}}}),
        ({"sampling": {}}, {"elicitation": {"form": {}}}),
    ],
)
def test_input_request_the_client_cannot_answer(server, capabilities, required):
    status, error = error_of(server, "tools/call", {"name": "greet"}, capabilities=capabilities)
    assert (status, error["code"], error["data"]) == (400, -32021, {"requiredCapabilities": required})


def test_bare_elicitation_means_form(server):
    result = result_of(server, "tools/call", {"name": "greet"}, capabilities={"elicitation": {}})
    assert result["resultType"] == "input_required"


def test_sampling_needs_sampling(server):
    status, error = error_of(server, "tools/call", {"name": "sample"})
    assert error["data"] == {"requiredCapabilities": {"sampling": {}}}
    assert result_of(server, "tools/call", {"name": "sample"}, capabilities={"sampling": {}})["inputRequests"]


def test_tool_error_is_a_result(server):
    result = result_of(server, "tools/call", {"name": "fail"})
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": "It went wrong."}]


def test_a_crash_is_an_internal_error_without_details(server, caplog):
    with caplog.at_level(logging.ERROR, logger="mcpforms.protocol"):
        status, error = error_of(server, "tools/call", {"name": "crash"})
    assert (status, error) == (200, {"code": -32603, "message": "Internal error"})
    assert "secret detail" in caplog.text


def test_malformed_input_required_is_an_internal_error(server):
    assert error_of(server, "tools/call", {"name": "empty"})[1]["code"] == -32603


def test_content_defaults_to_empty(server):
    assert result_of(server, "tools/call", {"name": "bare"})["content"] == []


def test_unknown_tool(server):
    assert error_of(server, "tools/call", {"name": "nope"})[1] == {
        "code": -32602,
        "message": "Unknown tool: nope",
    }


def test_progress_is_reported_only_with_a_token(server):
    sent: list[dict[str, Any]] = []
    send(server, "tools/call", {"name": "slow"}, notify=sent.append)
    assert sent == []
    params = {"name": "slow", "_meta": meta(progressToken="p")}
    payload = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    server.handle(payload, headers=headers_for("tools/call", params), notify=sent.append)
    # 5 after 10 is dropped: progress must increase (spec §8.5).
    assert [n["params"]["progress"] for n in sent] == [10, 50]
    assert sent[0] == {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": "p", "progress": 10, "total": 100, "message": "step 10"},
    }


def test_prompts(server):
    listed = result_of(server, "prompts/list")
    assert listed["prompts"] == [
        {
            "name": "topic",
            "description": "A prompt about a topic.",
            "arguments": [{"name": "topic", "required": True}],
        }
    ]
    first = result_of(server, "prompts/get", {"name": "topic", "arguments": {"topic": "x"}})
    assert first["resultType"] == "input_required"
    answer = {"ask": {"action": "accept", "content": {"name": "Ada"}}}
    second = result_of(
        server, "prompts/get", {"name": "topic", "arguments": {"topic": "x"}, "inputResponses": answer}
    )
    assert second["messages"][0]["content"]["text"] == "x"
    assert error_of(server, "prompts/get", {"name": "topic"})[1]["code"] == -32602
    assert error_of(server, "prompts/get", {"name": "nope"})[1]["code"] == -32602


def test_resources(server):
    assert [r["uri"] for r in result_of(server, "resources/list")["resources"]] == ["test://a"]
    templates = result_of(server, "resources/templates/list")["resourceTemplates"]
    assert templates == [{"uriTemplate": "test://items/{id}", "name": "items"}]
    read = result_of(server, "resources/read", {"uri": "test://a"})
    assert (read["ttlMs"], read["cacheScope"]) == (5, "public")  # the handler's own hints win
    assert result_of(server, "resources/read", {"uri": "test://items/4%202"})["contents"][0]["text"] == "4 2"
    status, error = error_of(server, "resources/read", {"uri": "test://missing"})
    assert error == {"code": -32602, "message": "Resource not found", "data": {"uri": "test://missing"}}


def test_completion(server):
    params = {"ref": {"type": "ref/prompt", "name": "topic"}, "argument": {"name": "topic", "value": "a"}}
    completion = result_of(server, "completion/complete", params)["completion"]
    assert len(completion["values"]) == 100
    assert (completion["total"], completion["hasMore"]) == (150, True)
    params["ref"] = {"type": "ref/resource", "uri": "test://items/{id}"}
    assert result_of(server, "completion/complete", params)["completion"]["values"] == []
    params["ref"] = {"type": "ref/prompt", "name": "nope"}
    assert error_of(server, "completion/complete", params)[1]["code"] == -32602


@pytest.mark.parametrize(
    "method",
    [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "subscriptions/listen",
        "unknown/method",
    ],
)
def test_removed_and_unknown_methods(server, method):
    status, error = error_of(server, method)
    assert (status, error["code"]) == (404, -32601)


def test_invalid_params(server):
    status, error = error_of(server, "tools/call", {"name": 5})
    assert (status, error["code"]) == (400, -32602)
    assert error["message"].startswith("Invalid params")


def test_notification_is_accepted(server):
    reply = server.handle({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}})
    assert reply == Reply(202)


def test_an_initialize_carrying_the_2026_envelope_is_an_unknown_method(server):
    # Spec §9.2: initialize with a modern _meta claim takes the modern path, where it does not exist.
    payload = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"_meta": meta()}}
    reply = server.handle(payload)
    assert reply.status == 404
    assert reply.body is not None and reply.body["error"]["code"] == -32601


def test_no_headers_means_no_header_rungs(server):
    params = {"_meta": meta()}
    reply = server.handle(
        {"jsonrpc": "2.0", "id": "x", "method": "tools/list", "params": params}, headers=None
    )
    assert reply.status == 200 and reply.body is not None and reply.body["id"] == "x"


def test_a_handler_returning_a_constant_is_not_mutated(server):
    constant = {"content": [{"type": "text", "text": "same"}]}
    server.add_tool(Tool("constant", "Constant.", {"type": "object"}, lambda ctx, arguments: constant))
    result_of(server, "tools/call", {"name": "constant"})
    assert constant == {"content": [{"type": "text", "text": "same"}]}


def test_a_handler_returning_something_else_is_an_internal_error(server):
    server.add_tool(Tool("odd", "Odd.", {"type": "object"}, lambda ctx, arguments: ["not", "a", "dict"]))  # type: ignore[arg-type,return-value]
    assert error_of(server, "tools/call", {"name": "odd"})[1]["code"] == -32603


def test_initialize_with_a_modern_claim_is_a_removed_method(server):
    params = {"protocolVersion": VERSION}
    payload = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    reply = server.handle(payload, headers={"mcp-protocol-version": VERSION, "mcp-method": "initialize"})
    assert reply.body is not None
    # The version header claims the modern era, so the missing envelope is reported (spec §9.2 step 6).
    assert (reply.status, reply.body["error"]["code"]) == (400, -32602)


def test_a_state_for_an_older_version_is_stale_not_invalid():
    server = Server()
    version = ["v1"]
    seen: list[tuple[bool, Any]] = []

    def form(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
        seen.append((ctx.stale_state, ctx.request_state))
        return {"resultType": "input_required", "requestState": ctx.mint_state(answers={})}

    server.add_tool(Tool("form", "A form.", {"type": "object"}, form, state_version=lambda: version[0]))
    token = result_of(server, "tools/call", {"name": "form"})["requestState"]
    version[0] = "v2"  # an admin edited the form meanwhile
    assert (
        result_of(server, "tools/call", {"name": "form", "requestState": token})["resultType"]
        == "input_required"
    )
    assert seen[-1] == (True, None)


def test_a_prompt_the_caller_may_not_see_is_no_prompt_at_all():
    server = Server()
    server.add_prompt(
        Prompt(
            name="secret",
            description="Only for user 7.",
            handler=lambda ctx, arguments: {"messages": []},
            complete=lambda ctx, name, value, filled: ["ada", "root"],
            visible=lambda ctx: ctx.principal == "user:7",
        )
    )
    assert result_of(server, "prompts/list")["prompts"] == []
    unknown = {"code": -32602, "message": "Unknown prompt: secret"}
    assert error_of(server, "prompts/get", {"name": "secret"})[1] == unknown
    params = {"ref": {"type": "ref/prompt", "name": "secret"}, "argument": {"name": "x", "value": ""}}
    assert error_of(server, "completion/complete", params)[1] == unknown
    seven = SimpleNamespace(pk=7, is_authenticated=True)
    assert [p["name"] for p in result_of(server, "prompts/list", user=seven)["prompts"]] == ["secret"]
    assert result_of(server, "completion/complete", params, user=seven)["completion"]["values"] == [
        "ada",
        "root",
    ]
