"""Fuzz what reaches a task: ``tasks/get``, ``tasks/update``, ``tasks/cancel`` (and ``tasks/result`` and
``tasks/list``, which the extension removed) on both protocol eras, and the approvers' decisions in the
admin. Whatever arrives, the answer is a clear one: never a 500, a -32603 or a traceback.

The tasks are real: each example first makes an approval request (some sent back for an amendment, so that
``tasks/update`` reaches the amendment's round) or a background task, then sends its id, a near miss or
anything at all, with any answers.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.http import HttpResponse
from django.test import Client, override_settings
from django.urls import reverse
from hypothesis import event, given
from hypothesis import strategies as st

from mcpforms.approvals import ApprovalRefused, amend
from mcpforms.models import ToolTask, task_digest
from mcpforms.protocol.era2025.sessions import MemorySessions
from mcpforms.protocol.server import Server
from mcpforms.protocol.tasks import EXTENSION
from mcpforms.registry import register, registry_for
from tests import wire
from tests.protocol.test_fuzz import (
    FORM_SETTINGS,
    VERSION,
    assert_json_rpc,
    assert_json_rpc_2025,
    assert_parse_error,
    field_values,
    http,
    json_values,
    legacy_post,
    mostly,
    open_legacy_session,
    spliced,
)
from tests.test_approvals import APPROVE, RefundForm
from tests.test_background import DUMMY, PaintForm
from tests.testapp.models import Colour

task_server = Server(key="fuzz-tasks", name="fuzz-tasks", sessions=MemorySessions())
register(RefundForm, server=task_server, name="refund", approval=APPROVE, permission=None)
register(PaintForm, server=task_server, name="paint", background=True, permission=None)
FIELDS = [*RefundForm.base_fields, *PaintForm.base_fields, "zz"]
TASK_METHODS = ["tasks/get", "tasks/update", "tasks/cancel", "tasks/result", "tasks/list"]
OPTED_IN: dict[str, Any] = {"elicitation": {"form": {}}, "extensions": {EXTENSION: {}}}
REFUND = {"order": "A-1", "amount": 30, "why": "late"}
# Every example is an anonymous caller from the one address RequestFactory gives: lift those budgets.
ANYONE = override_settings(
    MCPFORMS={
        "ALLOW_ANONYMOUS": True,
        "ANONYMOUS_TASKS_PER_ADDRESS": None,
        "ANONYMOUS_TASKS": None,
        "ANONYMOUS_SESSIONS_PER_ADDRESS": None,
    },
    TASKS=DUMMY,
)


def approver() -> User:
    made, _ = User.objects.get_or_create(username="fuzz-approver", defaults={"is_staff": True})
    made.user_permissions.add(Permission.objects.get(codename=APPROVE.split(".")[1]))
    return User.objects.get(pk=made.pk)  # permissions are cached per instance


def modern(method: str, params: dict[str, Any], capabilities: Any = None) -> tuple[HttpResponse, bool]:
    """POST one 2026-07-28 request, its headers agreeing with it; whether decode() had to refuse it."""
    meta = wire.meta(OPTED_IN if capabilities is None else capabilities)
    body, refused = spliced(
        {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    )
    headers = {"HTTP_MCP_PROTOCOL_VERSION": VERSION, "HTTP_MCP_METHOD": method}
    target = params.get("name", params.get("taskId"))
    if isinstance(target, str) and target.isascii() and target.isprintable():
        headers["HTTP_MCP_NAME"] = target
    response = http(task_server, "POST", body, **headers)
    assert isinstance(response, HttpResponse), response
    return response, refused


def a_task(kind: str) -> tuple[str, ToolTask, list[str]]:
    """A task of ``kind`` made as a client makes it: its id, its row and the keys it waits on."""
    if kind == "background":
        red, _ = Colour.objects.get_or_create(name="red", defaults={"code": "#ff0000"})
        tool, arguments = "paint", {"base": red.pk, "name": "pink"}
    else:
        tool, arguments = "refund", REFUND
    response, _ = modern("tools/call", {"name": tool, "arguments": arguments})
    created = json.loads(response.content)["result"]
    assert created["resultType"] == "task", created
    row = ToolTask.objects.get(digest=task_digest(created["taskId"]))
    if kind == "sent back":
        refund = registry_for(task_server).form_tool("refund")
        assert refund is not None
        amend(refund, row, approver(), "Which parcel?")
        row.refresh_from_db()
    return created["taskId"], row, list(row.outstanding)


def task_ids(real: str) -> st.SearchStrategy[Any]:
    return mostly(
        st.sampled_from([real, real, real[:-1] + ("x" if real[-1:] != "x" else "y"), real + " ", ""]),
        st.text(max_size=70) | json_values,
    )


def answers(keys: list[str]) -> st.SearchStrategy[Any]:
    answer = st.fixed_dictionaries(
        {"action": st.sampled_from(["accept", "accept", "decline", "cancel", "maybe"])},
        optional={"content": st.dictionaries(st.sampled_from(FIELDS), field_values, max_size=4)},
    )
    return mostly(
        st.dictionaries(st.sampled_from([*keys, "refund", "x"]), mostly(answer, json_values), max_size=3),
        json_values,
    )


@ANYONE
@pytest.mark.django_db
@FORM_SETTINGS
@given(data=st.data(), kind=st.sampled_from(["waiting", "sent back", "background"]))
def test_the_task_methods_answer_anything_clearly_on_2026(data: st.DataObject, kind: str) -> None:
    task_id, _, keys = a_task(kind)
    method = data.draw(st.sampled_from(TASK_METHODS))
    params: dict[str, Any] = {}
    if data.draw(mostly(st.just(True), st.just(False))):
        params["taskId"] = data.draw(task_ids(task_id))
    if method == "tasks/update" or data.draw(st.booleans()):
        params["inputResponses"] = data.draw(answers(keys))
    capabilities = data.draw(
        mostly(st.just(OPTED_IN), st.sampled_from([{}, {"extensions": {}}]) | json_values)
    )
    event(f"{method} on a {kind} task")
    response, refused = modern(method, params, capabilities)
    if refused:
        assert_parse_error(response)
        return
    assert_json_rpc(response)
    body = json.loads(response.content)
    if "result" in body and method == "tasks/get":
        assert body["result"]["status"] in ("working", "input_required", "completed", "failed", "cancelled")
    # Whatever the answers were, the task is still there to poll, and says where it stands.
    polled, _ = modern("tasks/get", {"taskId": task_id})
    assert "result" in json.loads(polled.content), polled.content


@ANYONE
@pytest.mark.django_db(transaction=True)
@FORM_SETTINGS
@given(data=st.data())
def test_the_task_methods_are_unknown_on_a_2025_session_whatever_they_carry(data: st.DataObject) -> None:
    session = open_legacy_session(task_server)
    # A 2025-era client's call of an approval tool is queued; it cannot follow the task.
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    call["params"] = {"name": "refund", "arguments": data.draw(mostly(st.just(REFUND), json_values))}
    queued, refused = legacy_post(task_server, session, call)
    if not refused and queued["Content-Type"] == "application/json":
        assert_json_rpc_2025(json.loads(queued.content))  # type: ignore[attr-defined]
    method = data.draw(st.sampled_from(TASK_METHODS))
    params = data.draw(
        st.fixed_dictionaries(
            {},
            optional={"taskId": st.text(max_size=70) | json_values, "inputResponses": answers(["refund"])},
        )
    )
    response, refused = legacy_post(
        task_server, session, {"jsonrpc": "2.0", "id": 2, "method": method, "params": params}
    )
    if refused:
        assert_parse_error(response)
        return
    assert response.status_code != 500
    answer = json.loads(response.content)  # type: ignore[attr-defined]
    assert_json_rpc_2025(answer)
    assert answer["error"]["code"] in (-32601, -32602), answer


# The approvers' decisions -------------------------------------------------------------------------------

# What a browser (or anyone holding a staff session) can put in a form field: any text but lone surrogates,
# which no page's encoding can carry.
form_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=60) | st.sampled_from(
    ["\x00", "No receipt.\x00", "\u2028", "<b>&amp;</b>", "{{ reason }}", "é" * 3000, " \t\n"]
)


@ANYONE
@pytest.mark.django_db
@FORM_SETTINGS
@given(data=st.data(), kind=st.sampled_from(["waiting", "sent back"]))
def test_the_decision_posts_answer_anything_with_a_page(data: st.DataObject, kind: str) -> None:
    from mcpforms.approvals import fingerprint

    _, row, _ = a_task(kind)
    client = Client()
    client.force_login(approver())
    object_id = data.draw(
        mostly(st.just(str(row.pk)), st.sampled_from(["0", "-1", "x", "9" * 30]) | form_text)
    )
    fields = {
        "decision": data.draw(mostly(st.sampled_from(["approve", "reject", "amend"]), form_text)),
        "reason": data.draw(st.sampled_from(["", "No receipt.", "Which parcel?"]) | form_text),
        "seen": data.draw(mostly(st.just(fingerprint(row)), form_text)),
    }
    posted = {
        name: value for name, value in fields.items() if data.draw(mostly(st.just(True), st.just(False)))
    }
    event(f"{posted.get('decision', 'no decision')[:10]} on a {kind} request")
    try:
        path = reverse("admin:mcpforms_tooltask_decide", args=[object_id])
    except Exception:  # noqa: BLE001  (an id no URL can hold is no request a browser can send)
        return
    response = client.post(path, posted)
    assert response.status_code in (302, 403, 404, 405), response.status_code
    if response.status_code == 302:
        page = client.get(response["Location"])
        assert page.status_code in (200, 302), page.status_code
    row.refresh_from_db()
    assert row.status in ("working", "input_required", "completed", "failed", "cancelled")
    try:
        # Whatever was posted, the request can still be decided once, with a page that says so.
        refund = registry_for(task_server).form_tool("refund")
        assert refund is not None
        from mcpforms.approvals import reject

        reject(refund, row, approver(), "closing")
    except ApprovalRefused as refusal:
        event(f"then: {str(refusal)[:40]}")
