"""A form tool's call as a task: what the final round of an ``approval`` tool answers, on each kind of
client, and the amendment round an approver can ask for."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.test import override_settings

import mcpforms.form_tasks as form_tasks
from mcpforms.api import serve
from mcpforms.models import AccessToken, ToolTask
from mcpforms.protocol.server import Server
from mcpforms.protocol.tasks import EXTENSION
from mcpforms.registry import register
from mcpforms.task_store import run_turn
from mcpforms.tools import FormTool
from tests import wire
from tests.core_client import ELICITATION, CoreClient, accept, asked, text
from tests.forms import SignupForm

TASKS = ELICITATION | {"extensions": {EXTENSION: {}}}
VALID = {"email": "ada@example.com", "plan": "pro", "age": 30}

ran: list[dict[str, Any]] = []


class SignupApproval(FormTool):
    form_class = SignupForm
    name = "signup"
    approval = "auth.change_user"

    def handle(self, request: Any, form: Any) -> str:
        ran.append(dict(form.cleaned_data))
        return f"Signed up {form.cleaned_data['email']}"


@pytest.fixture
def served(db):
    ran.clear()
    server = Server()
    register(SignupApproval, server=server)
    return server


@pytest.fixture
def requester(db):
    return User.objects.create_user("requester")


def test_a_client_that_follows_tasks_gets_a_task_waiting_for_approval(served, requester):
    client = CoreClient(served, capabilities=TASKS, user=requester)
    task = client.call("signup", VALID)
    assert task["resultType"] == "task"
    assert task["status"] == "working"
    assert task["statusMessage"] == "Waiting for approval"
    assert task["pollIntervalMs"] == 5000
    assert task["ttlMs"] == 7 * 86400 * 1000
    assert not {"requestState", "result", "inputRequests", "content"} & set(task)
    assert ran == []  # nothing runs before staff decide
    row = ToolTask.objects.get()
    assert (row.tool, row.runner, row.user) == ("signup", "staff", requester)
    assert row.arguments["values"] == VALID
    got = client.result("tasks/get", {"taskId": task["taskId"]})
    assert (got["taskId"], got["status"], got["resultType"]) == (task["taskId"], "working", "complete")


def test_the_form_is_gathered_first_then_the_final_round_becomes_one_task(served, requester):
    client = CoreClient(served, capabilities=TASKS, user=requester)
    first = client.call("signup", {"email": "ada@example.com"})
    assert asked(first, "signup")["mode"] == "form"  # plan is missing: asked by elicitation, as ever
    final = client.answer(first, "signup", {"email": "ada@example.com"}, signup=accept(plan="team"))
    again = client.answer(first, "signup", {"email": "ada@example.com"}, signup=accept(plan="team"))
    assert final["resultType"] == again["resultType"] == "task"
    assert final["taskId"] == again["taskId"]  # a replayed final round finds the task it made
    assert ToolTask.objects.count() == 1
    assert ToolTask.objects.get().arguments["values"]["plan"] == "team"


def test_a_client_without_the_extension_is_told_the_request_was_queued(served, requester):
    client = CoreClient(served, user=requester)  # elicitation, no tasks
    done = client.call("signup", VALID)
    row = ToolTask.objects.get()
    assert "resultType" not in done or done["resultType"] == "complete"
    assert text(done) == (
        f"Sent for approval as request #{row.pk}; nothing has run yet. The user will be told when it is "
        "decided."
    )
    assert ran == []


def test_a_tool_may_require_the_extension_instead(db, requester):
    server = Server()
    register(SignupForm, server=server, approval="auth.change_user", approval_requires_tasks=True)
    error = CoreClient(server, user=requester).send("tools/call", {"name": "signup", "arguments": VALID})
    assert error["error"]["code"] == -32021
    assert error["error"]["data"] == {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}
    assert ToolTask.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_a_2025_session_gets_the_queued_answer(served):
    # The client declares the extension too: it is not defined on 2025-11-25, so it is read as nothing.
    declared: dict[str, Any] = {"elicitation": {}, "extensions": {EXTENSION: {}}}
    opened = served.handle(wire.initialize(declared), headers=None)
    session = opened.headers["Mcp-Session-Id"]
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "signup", "arguments": VALID},
    }
    reply = served.handle(call, headers={"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"})
    assert isinstance(reply.body, dict), reply
    result = reply.body["result"]
    assert "resultType" not in result and "taskId" not in result
    assert "Sent for approval as request #" in result["content"][0]["text"]
    assert ToolTask.objects.filter(runner="staff").count() == 1


def test_an_amendment_is_judged_by_the_form_and_asked_again_under_a_new_key(served, requester):
    client = CoreClient(served, capabilities=TASKS, user=requester)
    task_id = client.call("signup", VALID)["taskId"]
    row = ToolTask.objects.get()
    tool = served_tool(served)
    requests = form_tasks.amendment_request(tool, row, "Please use your work address.")
    ((own, request),) = requests.items()
    assert own == "signup"
    params = request["params"]
    assert params["message"] == "Please use your work address."
    assert params["requestedSchema"]["properties"]["email"]["default"] == "ada@example.com"
    from mcpforms.task_store import _ask  # what approvals.amend does, once it has locked the row

    ToolTask.objects.filter(pk=row.pk).update(status="working")
    _ask(row, row.turn, requests)

    asking = client.result("tasks/get", {"taskId": task_id})
    assert asking["status"] == "input_required"
    (first_key,) = asking["inputRequests"]
    client.result(
        "tasks/update", {"taskId": task_id, "inputResponses": {first_key: accept(email="no", plan="pro")}}
    )
    again = client.result("tasks/get", {"taskId": task_id})
    assert again["status"] == "input_required"
    (second_key,) = again["inputRequests"]
    assert second_key != first_key  # a key is never reused
    assert "Enter a valid email address." in again["inputRequests"][second_key]["params"]["message"]

    asked_again = again["inputRequests"][second_key]["params"]["requestedSchema"]["properties"]
    assert set(asked_again) == {"email"}  # what the answer got right is not asked again
    ack = client.send(
        "tasks/update", {"taskId": task_id, "inputResponses": {second_key: accept(email="ada@work.example")}}
    )
    assert ack["result"] == {"resultType": "complete", "_meta": ack["result"]["_meta"]}
    waiting = client.result("tasks/get", {"taskId": task_id})
    assert (waiting["status"], waiting["statusMessage"]) == ("working", "Waiting for approval (amended)")
    values = ToolTask.objects.get().arguments["values"]
    assert (values["email"], values["plan"]) == ("ada@work.example", "pro")
    assert ran == []


def served_tool(server: Server) -> Any:
    from mcpforms.registry import registry_for

    return registry_for(server).form_tool("signup")


def test_a_turn_of_a_task_that_ended_does_nothing(served, requester):
    client = CoreClient(served, capabilities=TASKS, user=requester)
    task_id = client.call("signup", VALID)["taskId"]
    client.result("tasks/cancel", {"taskId": task_id})
    row = ToolTask.objects.get()
    run_turn(row.digest, row.turn)
    assert client.result("tasks/get", {"taskId": task_id})["status"] == "cancelled"
    assert ran == []


@pytest.mark.django_db(transaction=True)
def test_over_http_a_task_is_its_requesters_alone_and_a_revoked_token_reaches_none(served):
    ada, bob = User.objects.create_user("ada"), User.objects.create_user("bob")
    theirs = CoreClient(served, capabilities=TASKS, user=ada, over_http=True)
    task_id = theirs.call("signup", VALID)["taskId"]
    assert theirs.result("tasks/get", {"taskId": task_id})["status"] == "working"

    stranger = CoreClient(served, capabilities=TASKS, user=bob, over_http=True)
    extra: dict[str, dict[str, Any]] = {
        "tasks/get": {},
        "tasks/update": {"inputResponses": {}},
        "tasks/cancel": {},
    }
    for method, params in extra.items():
        foreign = stranger.send(method, {"taskId": task_id, **params})["error"]
        unknown = stranger.send(method, {"taskId": "x" * len(task_id), **params})["error"]
        assert foreign == {**unknown, "data": {"taskId": task_id}}  # no answer tells the two apart
        assert foreign["code"] == -32602
    assert theirs.result("tasks/get", {"taskId": task_id})["status"] == "working"  # not cancelled

    for token in AccessToken.objects.filter(user=ada):
        token.revoke()
    request = wire.http_request(
        wire.message("tasks/get", {"taskId": task_id}, capabilities=TASKS), token=theirs._token()
    )
    request.user = AnonymousUser()
    response = serve(served, request)
    assert response.status_code == 401  # the edge refuses the token before any task is looked up


OLD_KEY = "the-key-before-the-rotation-0123456789abcdef0123456789"
NEW_KEY = "the-key-after-the-rotation-0123456789abcdef0123456789ab"


@pytest.mark.parametrize(
    "rotated",
    [
        # SECURITY.md, "Keys and rotation": the old key moves into the fallbacks, new tokens use the new.
        {"SECRET_KEY": NEW_KEY, "SECRET_KEY_FALLBACKS": [OLD_KEY]},
        {"MCPFORMS": {"ALLOW_ANONYMOUS": True, "STATE_KEY": NEW_KEY, "STATE_KEY_FALLBACKS": [OLD_KEY]}},
    ],
    ids=["SECRET_KEY", "STATE_KEY"],
)
def test_a_final_round_replayed_after_a_key_rotation_finds_the_task_it_made(served, requester, rotated):
    before = (
        {"SECRET_KEY": OLD_KEY}
        if "SECRET_KEY" in rotated
        else {"MCPFORMS": {"ALLOW_ANONYMOUS": True, "STATE_KEY": OLD_KEY}}
    )
    client = CoreClient(served, capabilities=TASKS, user=requester)
    with override_settings(**before):
        first = client.call("signup", {"email": "ada@example.com"})
        final = client.answer(first, "signup", {"email": "ada@example.com"}, signup=accept(plan="team"))
    assert final["resultType"] == "task"
    with override_settings(**rotated):
        replayed = client.send(
            "tools/call",
            {
                "name": "signup",
                "arguments": {"email": "ada@example.com"},
                "inputResponses": {"signup": accept(plan="team")},
                "requestState": first["requestState"],
            },
        )
        assert "error" not in replayed, replayed
        assert replayed["result"]["taskId"] == final["taskId"]
        polled = client.result("tasks/get", {"taskId": final["taskId"]})
    assert polled["status"] == "working"
    assert ToolTask.objects.count() == 1


def test_a_replay_whose_task_was_named_with_a_key_since_withdrawn_is_told_so_and_starts_nothing(
    served, requester
):
    """A rotation rolled back: the final round ran under the new key, which the server no longer holds,
    while the flow's first token, minted with the old key, still verifies."""
    client = CoreClient(served, capabilities=TASKS, user=requester)
    old = {"ALLOW_ANONYMOUS": True, "STATE_KEY": OLD_KEY}
    with override_settings(MCPFORMS=old):
        first = client.call("signup", {"email": "ada@example.com"})
    new = {"ALLOW_ANONYMOUS": True, "STATE_KEY": NEW_KEY, "STATE_KEY_FALLBACKS": [OLD_KEY]}
    with override_settings(MCPFORMS=new):
        final = client.answer(first, "signup", {"email": "ada@example.com"}, signup=accept(plan="team"))
    assert final["resultType"] == "task"
    with override_settings(MCPFORMS=old):
        replayed = client.answer(first, "signup", {"email": "ada@example.com"}, signup=accept(plan="team"))
    assert replayed["isError"] is True
    row = ToolTask.objects.get()
    assert text(replayed) == (
        f"This form was submitted already, as request #{row.pk}, with a signing key the server no longer "
        "holds; call the tool again to start over."
    )
    assert ToolTask.objects.count() == 1 and ran == []
