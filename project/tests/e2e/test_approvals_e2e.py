"""Approval gates end to end: a real tasks client (``@modelcontextprotocol/ext-tasks`` over the TypeScript
SDK, tests/e2e/task_client.mjs) calls the demo's ``refund_request`` as the staff user and polls, while the
``finance`` user decides in the admin, in Chromium (tests/e2e/approval_admin.mjs). Each decision reaches the
client as the task's outcome: approve (the handler's result), reject (isError with the reason), the
requester's cancel (the admin then refuses to approve), and an amendment round answered by the client."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from project.demo.management.commands.seed_demo import (
    FINANCE_PASSWORD,
    FINANCE_USERNAME,
    STAFF_PASSWORD,
    STAFF_USERNAME,
)
from tests.e2e.demo_server import DemoServer, demo_server
from tests.e2e.task_client import CHROMIUM, HeldPage, TaskClient, digest, in_the_admin

WIDTH = 1280
REFUND = {"order": "ORD-1042", "amount": "12.50", "reason": "The mug arrived in pieces."}

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium: make installs it")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoServer]:
    with demo_server(tmp_path_factory.mktemp("approvals")) as server:
        yield server


@pytest.fixture
def clients() -> Iterator[list[TaskClient]]:
    started: list[TaskClient] = []
    yield started
    for client in started:
        client.stop()


def call(
    demo: DemoServer, clients: list[TaskClient], arguments: dict[str, Any], **options: Any
) -> TaskClient:
    client = TaskClient(url=demo.url, token=demo.token, tool="refund_request", arguments=arguments, **options)
    clients.append(client)
    return client


def request_number(demo: DemoServer, created: dict[str, Any]) -> int:
    ((pk,),) = demo.rows("SELECT id FROM mcpforms_tooltask WHERE digest = ?", digest(created["taskId"]))
    assert isinstance(pk, int)
    return pk


def finance(demo: DemoServer, task: int, **options: Any) -> dict[str, Any]:
    return in_the_admin(demo.url.removesuffix("/mcp"), FINANCE_USERNAME, FINANCE_PASSWORD, task, **options)


def refunds(demo: DemoServer, order: str) -> list[tuple[Any, ...]]:
    return demo.rows(
        "SELECT r.amount, u.username FROM demo_refund r JOIN auth_user u ON u.id = r.requested_by_id "
        'WHERE r."order" = ?',
        order,
    )


def test_finance_approves_in_the_admin_and_the_client_gets_the_handlers_result(demo, clients):
    # The reason is missing: the form asks for it (an MRTR round, before any task), then the task waits.
    client = call(
        demo,
        clients,
        {"order": "ORD-1042", "amount": "12.50"},
        answers=[{"action": "accept", "content": {"reason": REFUND["reason"]}}],
    )
    asked = client.until("input")
    assert (asked["scope"], asked["fields"]) == ("request", ["reason"])
    created = client.until("created")
    assert (created["status"], created["statusMessage"]) == ("working", "Waiting for approval")
    assert created["pollIntervalMs"] == 5000  # a human decides: minutes, not milliseconds
    number = request_number(demo, created)
    assert refunds(demo, "ORD-1042") == []  # nothing ran yet

    page = finance(demo, number, decision="approve")
    assert {
        "number": f"#{number}",
        "tool": "refund_request",
        "requester": "staff",
        "status": "working",
    } in page["listed"]
    assert page["values"] == {"Order reference": "ORD-1042", "Amount": "12.50", "Reason": REFUND["reason"]}
    assert page["buttons"] == ["Approve", "Reject", "Send back for an amendment"]
    assert page["after"]["messages"] == [
        {
            "level": "success",
            "text": f"Approved request #{number}: it ran, and the requester gets its result.",
        }
    ]
    assert page["after"]["buttons"] == []  # decided: a second click has nothing to press
    assert page["consoleErrors"] == []

    outcome = client.until("outcome")
    client.finish()
    assert outcome["status"] == "completed"
    result = outcome["result"]
    assert not result.get("isError")
    ((amount, requester),) = refunds(demo, "ORD-1042")
    refund = result["structuredContent"]["refund"]
    assert result["structuredContent"] == {"refund": refund, "order": "ORD-1042", "amount": "12.50"}
    assert result["content"][0]["text"] == f"Refund #{refund} of 12.50 for ORD-1042 is recorded."
    assert (float(amount), requester) == (12.5, "staff")
    statuses = [(line["status"], line["statusMessage"]) for line in client.lines if line["event"] == "status"]
    assert statuses == [("completed", "Approved")]


def test_finance_rejects_and_the_client_reads_the_reason(demo, clients):
    client = call(demo, clients, {**REFUND, "order": "ORD-2001"})
    number = request_number(demo, client.until("created"))
    page = finance(demo, number, decision="reject", reason="The order was delivered intact; see the photo.")
    assert page["after"]["messages"] == [
        {"level": "warning", "text": f"Rejected request #{number}; the requester is told."}
    ]
    outcome = client.until("outcome")
    client.finish()
    assert outcome["status"] == "completed" and outcome["result"]["isError"] is True
    assert outcome["result"]["content"][0]["text"] == (
        f"Request #{number} (Request a refund) was rejected; nothing was done. "
        "Reason: The order was delivered intact; see the photo."
    )
    assert refunds(demo, "ORD-2001") == []


def test_the_requester_cancels_and_the_admin_then_refuses_to_approve(demo, clients, tmp_path):
    client = call(demo, clients, {**REFUND, "order": "ORD-3001"}, detach=True)
    created = client.until("created")
    client.finish()
    number = request_number(demo, created)
    # Finance opens the request while it waits; the requester cancels before they press Approve.
    base = demo.url.removesuffix("/mcp")
    page = HeldPage(tmp_path, base, FINANCE_USERNAME, FINANCE_PASSWORD, number, decision="approve")
    page.opened()
    cancelling = call(demo, clients, {}, resume=created["reference"], cancel=True)
    assert cancelling.until("outcome")["status"] == "cancelled"
    cancelling.finish()
    report = page.go()
    assert report["buttons"] == ["Approve", "Reject", "Send back for an amendment"]  # as the page was opened
    refusal = f"The requester cancelled request #{number}; it can no longer be decided."
    assert report["after"]["messages"] == [{"level": "error", "text": refusal}]
    assert report["after"]["buttons"] == [] and report["after"]["cannotDecide"] == refusal
    assert report["after"]["status"] == "cancelled"
    assert refunds(demo, "ORD-3001") == []


def test_finance_sends_it_back_the_client_amends_it_and_finance_approves_the_amended_request(demo, clients):
    note = "Only one of the two mugs broke: refund 6.25, please."
    amended = {**REFUND, "order": "ORD-4001", "amount": "6.25"}
    client = call(
        demo,
        clients,
        {**REFUND, "order": "ORD-4001"},
        answers=[{"action": "accept", "content": amended}],
    )
    number = request_number(demo, client.until("created"))
    sent_back = finance(demo, number, decision="amend", reason=note)
    assert sent_back["after"]["messages"] == [
        {"level": "success", "text": f"Sent request #{number} back to the requester with your note."}
    ]
    assert (
        sent_back["after"]["cannotDecide"] == f"Request #{number} is waiting for the requester's amendment."
    )

    asked = client.until("input")
    assert (asked["scope"], asked["message"]) == ("task", note)
    assert asked["fields"] == ["order", "amount", "reason"]
    client.until("status", status="working", statusMessage="Waiting for approval (amended)")

    page = finance(demo, number, decision="approve")
    assert page["values"]["Amount"] == "6.25"
    outcome = client.until("outcome")
    client.finish()
    assert outcome["status"] == "completed" and not outcome["result"].get("isError")
    assert outcome["result"]["structuredContent"]["amount"] == "6.25"
    statuses = [line["status"] for line in client.lines if line["event"] == "status"]
    assert statuses == ["input_required", "working", "completed"]


def test_the_request_page_fits_the_window_and_the_requester_cannot_decide_it(demo, clients):
    client = call(demo, clients, {**REFUND, "order": "ORD-5001"}, detach=True)
    number = request_number(demo, client.until("created"))
    client.finish()
    page = finance(demo, number)
    assert page["listWidth"] <= WIDTH and page["scrollWidth"] <= WIDTH, page
    own = in_the_admin(demo.url.removesuffix("/mcp"), STAFF_USERNAME, STAFF_PASSWORD, number)
    assert own["buttons"] == []
    assert own["cannotDecide"] == (
        f"You made request #{number} yourself: someone else must decide it "
        "(MCPFORMS['ALLOW_SELF_APPROVAL'] is off)."
    )
