"""The tasks extension on the wire, through ``Server.handle`` with the database store: who may reach
``tasks/*``, what a task result looks like, and what never travels on it.

Turns run on Django's DummyBackend: ``work()`` runs what was enqueued as a worker does.
"""

from __future__ import annotations

import importlib.util
import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import TestCase, override_settings
from django.utils.module_loading import import_string

import mcpforms.task_store as task_store
from mcpforms.models import ToolTask
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.era2025.sessions import MemorySessions
from mcpforms.protocol.reply import Reply
from mcpforms.protocol.server import Server
from mcpforms.protocol.tasks import EXTENSION
from mcpforms.task_store import start_task
from tests import wire

BACKENDS = "django.tasks.backends" if importlib.util.find_spec("django.tasks") else "django_tasks.backends"
TASKS: dict[str, Any] = {"elicitation": {"form": {}}, "extensions": {EXTENSION: {}}}
NO_TASKS: dict[str, Any] = {"elicitation": {"form": {}}}
REQUIRED: dict[str, Any] = {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("dummy_backend")]

KEY = "tasks-wire-tests"
server = Server(key=KEY, name="tasks-wire", version="1", sessions=MemorySessions())


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def name_request(message: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    return {"method": "elicitation/create", "params": {"message": message, "requestedSchema": schema}}


def named(ctx: RequestContext, key: str) -> str | None:
    answer = (ctx.input_responses or {}).get(key)
    content = answer.get("content") if isinstance(answer, dict) else None
    name = content.get("name") if isinstance(content, dict) else None
    return name if isinstance(name, str) else None


def _computed(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    return text("computed")


@server.tool(description="A task for a client that takes them, else at once.", task_turn=_computed)
def compute(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    if ctx.accepts_tasks:
        return start_task(ctx, tool="compute", arguments=arguments).created_result()
    return _computed(ctx, arguments)


@server.tool(description="A buggy tool: a task whether or not the client takes them.", task_turn=_computed)
def leaky(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    return start_task(ctx, tool="leaky", arguments=arguments).created_result()


def _confirmed_greeting(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    nickname = named(ctx, "nickname")
    if nickname is None:
        return {"resultType": "input_required", "inputRequests": {"nickname": name_request("Nickname?")}}
    return text(f"Hello, {arguments['name']} ({nickname})!")


@server.tool(
    description="Ask a name across rounds (with requestState), then greet from a task that asks more.",
    task_turn=_confirmed_greeting,
)
def gather(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    name = named(ctx, "name")
    if name is None or ctx.request_state is None:
        state = ctx.mint_state(answers={})
        return {
            "resultType": "input_required",
            "inputRequests": {"name": name_request("Your name?")},
            "requestState": state,
        }
    return start_task(ctx, tool="gather", arguments={"name": name}).created_result()


@pytest.fixture
def dummy_backend() -> Iterator[None]:
    with override_settings(TASKS={"default": {"BACKEND": f"{BACKENDS}.dummy.DummyBackend"}}):
        yield


def work() -> None:
    backend = task_store.turn_job.get_backend()
    jobs = list(backend.results)
    backend.clear()
    for job in jobs:
        import_string(job.task.module_path).call(*job.args, **job.kwargs)


_ids = itertools.count(1)


def send(
    method: str,
    params: dict[str, Any] | None = None,
    *,
    capabilities: dict[str, Any] = TASKS,
    headers: dict[str, str] | None = None,
) -> Reply:
    """A 2026-07-28 request as the tasks extension's clients send it: Mcp-Name is the task's id on
    ``tasks/*``. The handler's commit hooks (a task's first turn) run as they would outside a test."""
    payload = wire.message(method, params, capabilities=capabilities, request_id=next(_ids))
    if headers is None:
        headers = {"mcp-protocol-version": wire.VERSION, "mcp-method": method}
        target = (params or {}).get("taskId" if method.startswith("tasks/") else "name")
        if isinstance(target, str):
            headers["mcp-name"] = target
    with TestCase.captureOnCommitCallbacks(execute=True):
        return server.handle(payload, headers=headers)


def result(method: str, params: dict[str, Any] | None = None, **kwargs: Any) -> dict[str, Any]:
    reply = send(method, params, **kwargs)
    assert reply.status == 200 and reply.body is not None and "result" in reply.body, reply
    answer: dict[str, Any] = reply.body["result"]
    return answer


def error(method: str, params: dict[str, Any] | None = None, **kwargs: Any) -> tuple[int, dict[str, Any]]:
    reply = send(method, params, **kwargs)
    assert reply.body is not None and "error" in reply.body, reply
    return reply.status, reply.body["error"]


def call(
    name: str, arguments: dict[str, Any] | None = None, *, capabilities: dict[str, Any] = TASKS, **params: Any
) -> dict[str, Any]:
    return result(
        "tools/call", {"name": name, "arguments": arguments or {}, **params}, capabilities=capabilities
    )


def get(task: dict[str, Any]) -> dict[str, Any]:
    return result("tasks/get", {"taskId": task["taskId"]})


def test_discover_advertises_the_extension_as_exactly_an_empty_object():
    capabilities = result("server/discover", capabilities={})["capabilities"]
    assert capabilities["extensions"][EXTENSION] == {}
    assert "tasks" not in capabilities  # 2025-11-25's core tasks are another wire


def test_a_task_is_created_flat_then_polled_to_its_result():
    created = call("compute")
    assert created["resultType"] == "task" and created["status"] == "working"
    assert not {"task", "result", "error", "inputRequests", "requestState"} & set(created)
    assert get(created)["status"] == "working"  # durable before the client heard of it
    work()
    done = get(created)
    assert (done["resultType"], done["status"]) == ("complete", "completed")
    assert done["result"]["content"] == text("computed")["content"]


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tasks/get", {}),
        ("tasks/update", {"inputResponses": {}}),
        ("tasks/cancel", {}),
    ],
)
def test_tasks_methods_without_the_extension_are_refused_before_any_lookup(method, params):
    task = call("compute")
    answers = [
        error(method, {"taskId": task_id, **params}, capabilities=NO_TASKS)
        for task_id in (task["taskId"], "no-such-task")
    ]
    # A real id and an unknown one get the same -32021: the refusal tells nothing about the id.
    assert answers[0] == answers[1]
    status, refusal = answers[0]
    assert refusal["code"] == -32021 and refusal["data"] == REQUIRED
    assert ToolTask.objects.get().status == "working"  # the cancel was not taken either


@pytest.mark.parametrize("method", ["tasks/result", "tasks/list"])
def test_the_removed_methods_are_not_found(method):
    # Sent as the extension's clients send them: without Mcp-Name.
    headers = {"mcp-protocol-version": wire.VERSION, "mcp-method": method}
    status, refusal = error(method, {"taskId": "x"}, headers=headers)
    assert (status, refusal["code"]) == (404, -32601)


def test_an_unknown_task_is_invalid_params():
    status, refusal = error("tasks/get", {"taskId": "no-such-task"})
    assert refusal["code"] == -32602


@pytest.mark.parametrize("sent", [{"mcp-name": "another-task"}, {}])
def test_tasks_get_whose_mcp_name_is_not_its_task_is_a_header_mismatch(sent):
    task = call("compute")
    headers = {"mcp-protocol-version": wire.VERSION, "mcp-method": "tasks/get", **sent}
    status, refusal = error("tasks/get", {"taskId": task["taskId"]}, headers=headers)
    assert (status, refusal["code"]) == (400, -32020)


def test_a_request_that_did_not_opt_in_never_gets_a_task():
    # A task tool answers such a request itself...
    answered = call("compute", capabilities=NO_TASKS)
    assert (answered["resultType"], answered["content"]) == ("complete", text("computed")["content"])
    assert "taskId" not in answered and not ToolTask.objects.exists()
    # ...and a tool that makes a task anyway is answered with an internal error, not with the task.
    status, refusal = error("tools/call", {"name": "leaky", "arguments": {}}, capabilities=NO_TASKS)
    assert refusal["code"] == -32603 and "taskId" not in str(refusal)


def test_no_request_state_travels_on_the_task_wire():
    first = call("gather")
    assert first["resultType"] == "input_required" and "requestState" in first
    answered = {"name": {"action": "accept", "content": {"name": "Ada"}}}
    created = call("gather", inputResponses=answered, requestState=first["requestState"])
    assert created["resultType"] == "task" and "requestState" not in created
    work()
    asking = get(created)
    assert asking["status"] == "input_required" and "requestState" not in asking
    [key] = asking["inputRequests"]
    nickname = {key: {"action": "accept", "content": {"name": "Countess"}}}
    ack = result("tasks/update", {"taskId": created["taskId"], "inputResponses": nickname})
    assert set(ack) <= {"resultType", "_meta"} and ack["resultType"] == "complete"
    work()
    done = get(created)
    assert done["result"]["content"] == text("Hello, Ada (Countess)!")["content"]
    assert "requestState" not in done and "requestState" not in done["result"]


def test_a_2025_session_has_no_tasks_methods():
    def request(method: str, params: dict[str, Any], session: str | None = None) -> Reply:
        payload = {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params}
        return server.handle(payload, headers={"mcp-session-id": session} if session else {})

    opened = request(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {"extensions": {EXTENSION: {}}},
            "clientInfo": {"name": "legacy", "version": "1"},
        },
    )
    session = opened.headers["Mcp-Session-Id"]
    server.handle(
        {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers={"mcp-session-id": session}
    )
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        reply = request(method, {"taskId": "x", "inputResponses": {}}, session)
        assert reply.body is not None and reply.body["error"]["code"] == -32601, reply
