"""A task outlives the process that made it: the demo on a PostgreSQL database of its own; a real tasks client
(tests/e2e/task_client.mjs) makes an approval request through one gunicorn instance, which is then
stopped; another instance, started on the same database, answers ``tasks/get`` for it and the client
takes the task up there (ext-tasks' serialized reference); the ``finance`` user approves it in the admin
of a third instance, in Chromium; the client, polling the second instance, receives the handler's
result."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from tests import wire
from tests.e2e.deployment import Deployment, deployment, needs_postgres
from tests.e2e.task_client import CHROMIUM, TaskClient, digest, in_the_admin

pytestmark = [
    needs_postgres,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium: make installs it"),
]

# The approver seed_demo makes (project/demo/management/commands/seed_demo.py; the package's tests do not load
# the demo's apps, so its constants cannot be imported here).
FINANCE_USERNAME, FINANCE_PASSWORD = "finance", "mcpforms-finance"
REFUND = {"order": "ORD-7001", "amount": "30.00", "reason": "Charged twice for one order."}
TASKS: dict[str, Any] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    directory = tmp_path_factory.mktemp("task-durability")
    with deployment(directory, f"mcpforms_task_durability_{os.getpid()}") as ready:
        yield ready


def get_task(url: str, token: str, task_id: str) -> dict[str, Any]:
    """``tasks/get`` as a plain HTTP POST, with the headers 2026-07-28 asks for."""
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tasks/get",
        "Mcp-Name": task_id,
    }
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tasks/get",
        "params": {"taskId": task_id, "_meta": wire.meta(TASKS)},
    }
    response = httpx2.post(url, content=json.dumps(body), headers=headers, timeout=30)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["result"]
    return result


def test_a_task_made_by_a_stopped_instance_is_answered_and_completed_by_another(made):
    token = made.manage("mcpforms_token", "create", "staff", "--quiet").strip()
    with made.serving("gunicorn", name="first") as first:
        client = TaskClient(url=first, token=token, tool="refund_request", arguments=REFUND, detach=True)
        created = client.until("created")
        client.finish()
    # The first instance is gone: what it made is a committed row, nothing in its memory.
    ((pk, status),) = made.rows(
        "SELECT id, status FROM mcpforms_tooltask WHERE digest = %s", digest(created["taskId"])
    )
    assert status == "working"

    with made.serving("gunicorn", name="second") as second:
        polled = get_task(second, token, created["taskId"])
        assert (polled["taskId"], polled["status"]) == (created["taskId"], "working")
        assert polled["statusMessage"] == "Waiting for approval"
        resumed = TaskClient(url=second, token=token, resume=created["reference"])
        try:
            assert resumed.until("resumed")["taskId"] == created["taskId"]
            with made.serving("gunicorn", name="admin") as admin:
                page = in_the_admin(
                    admin.removesuffix("/mcp"), FINANCE_USERNAME, FINANCE_PASSWORD, pk, decision="approve"
                )
            assert page["after"]["messages"] == [
                {
                    "level": "success",
                    "text": f"Approved request #{pk}: it ran, and the requester gets its result.",
                }
            ]
            outcome = resumed.until("outcome")
            resumed.finish()
        finally:
            resumed.stop()
        assert outcome["status"] == "completed" and not outcome["result"].get("isError")
        refund = outcome["result"]["structuredContent"]["refund"]
        assert outcome["result"]["structuredContent"] == {
            "refund": refund,
            "order": "ORD-7001",
            "amount": "30.00",
        }
        # The handler ran once, in the admin's process, for the requester.
        assert made.rows(
            "SELECT r.id, u.username FROM demo_refund r JOIN auth_user u ON u.id = r.requested_by_id"
        ) == [(refund, "staff")]
        done = get_task(second, token, created["taskId"])
        assert done["status"] == "completed" and done["result"]["structuredContent"]["refund"] == refund
