"""Approval requests in the admin, as staff use them: who sees which, the page that shows what was asked,
and the Approve / Reject / Send back buttons (``mcpforms.task_admin``)."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from mcpforms.models import ToolTask
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.envelope import CLIENT_INFO_KEY
from mcpforms.task_store import start_task
from tests import wire
from tests.test_approvals import REFUND, TASKS, Site, site_with, user

pytestmark = pytest.mark.django_db

CLAUDE = {"name": "claude-ai", "version": "0.9"}


def signed_in(who: User, **kwargs: Any) -> Client:
    client = Client(**kwargs)
    client.force_login(who)
    return client


def url(view: str, *args: Any) -> str:
    return reverse(f"admin:mcpforms_tooltask_{view}", args=args)


def ask_from(site: Site, client_info: dict[str, str], **arguments: Any) -> ToolTask:
    """The requester's call, from a client that names itself (``clientInfo`` in ``_meta``)."""
    payload = wire.message("tools/call", {"name": site.tool.name, "arguments": arguments or REFUND})
    payload["params"]["_meta"] = wire.meta(TASKS, extra={CLIENT_INFO_KEY: client_info})
    body = site.server.handle(payload, headers=None, user=site.requester).body
    assert isinstance(body, dict) and body["result"]["resultType"] == "task", body
    return ToolTask.objects.order_by("-pk")[0]


@pytest.fixture
def site() -> Site:
    return site_with()


def messages_of(response: Any) -> list[str]:
    return [str(message) for message in response.context["messages"]]


# Who sees what ------------------------------------------------------------------------------------------


def test_an_approver_lists_the_requests_they_may_decide(site):
    row = ask_from(site, CLAUDE)
    response = signed_in(site.approver).get(url("changelist"))
    assert response.status_code == 200
    page = response.content.decode()
    for shown in (f"#{row.pk}", "refund", "ann", "claude-ai 0.9", "working"):
        assert shown in page
    assert url("add") not in page  # requests come from calls, never typed in
    filtered = signed_in(site.approver).get(url("changelist"), {"status__exact": "cancelled"})
    assert f"#{row.pk}<" not in filtered.content.decode()


def test_staff_without_the_approval_permission_see_no_requests_nor_their_pages(site):
    row = ask_from(site, CLAUDE)
    clerk = signed_in(user("clerk"))
    assert clerk.get(url("changelist")).status_code == 403
    assert "mcpforms/tooltask" not in clerk.get(reverse("admin:index")).content.decode()
    # The same answer as for a request that does not exist: the page tells nothing of it.
    assert clerk.get(url("change", row.pk)).status_code == 403
    assert clerk.get(url("change", row.pk + 100)).status_code == 403
    assert clerk.post(url("decide", row.pk), {"decision": "approve"}).status_code == 403
    assert site.runs == []
    assert ToolTask.objects.get(pk=row.pk).status == "working"


def test_an_approval_callable_picks_the_rows_each_approver_sees():
    site = site_with(approval=lambda approver, task: task.arguments["values"]["amount"] <= 50)
    small = ask_from(site, CLAUDE, **REFUND)
    large = ask_from(site, CLAUDE, **{**REFUND, "amount": 500})
    page = signed_in(site.approver).get(url("changelist")).content.decode()
    assert f"#{small.pk}<" in page
    assert f"#{large.pk}<" not in page


def test_a_request_a_rule_let_them_decide_stays_listed_for_whoever_decided_it():
    site = site_with(approval=lambda approver, task: task.arguments["values"]["amount"] <= 50)
    row = ask_from(site, CLAUDE)
    colleague = signed_in(user("colleague"))
    assert f"#{row.pk}<" in colleague.get(url("changelist")).content.decode()  # the rule lets them too
    _decide(site, row, decision="approve")
    assert f"#{row.pk}<" in signed_in(site.approver).get(url("changelist")).content.decode()
    # Decided, it waits for nobody: the rule is no longer asked about it, and the colleague has no list.
    assert colleague.get(url("changelist")).status_code == 403


def test_who_may_see_every_task_sees_background_ones_too(site):
    row = ask_from(site, CLAUDE)
    ctx = RequestContext.for_tool("export", user=site.requester, server=site.server.key)
    background = start_task(ctx, tool="export", arguments={}, runner=ToolTask.Runner.QUEUE).row
    auditor = signed_in(user("auditor", "mcpforms.view_all_tasks"))
    page = auditor.get(url("changelist")).content.decode()
    assert f"#{row.pk}<" in page and f"#{background.pk}<" in page
    assert f"#{background.pk}<" not in signed_in(site.approver).get(url("changelist")).content.decode()
    # Seeing is not deciding: the auditor holds no approval permission.
    shown = auditor.get(url("change", row.pk)).content.decode()
    assert "Approve" not in shown and "You may not decide" in shown


# The page -----------------------------------------------------------------------------------------------


def test_the_page_shows_what_was_asked_read_only_under_the_forms_labels(site):
    row = ask_from(site, {"name": "claude-ai", "title": "Claude", "version": "0.9"})
    page = signed_in(site.approver).get(url("change", row.pk)).content.decode()
    for label, value in [("Order number", "A-1"), ("Amount (EUR)", "30"), ("Reason", "Arrived late")]:
        assert re.search(rf"<th>{re.escape(label)}</th><td>{re.escape(value)}</td>", page), label
    assert "ann" in page and "Claude 0.9" in page
    # Nothing to edit: no input for a value, no Save button; the decision has its own form.
    assert 'name="order"' not in page and 'name="_save"' not in page
    assert f'action="{url("decide", row.pk)}"' in page
    assert 'name="csrfmiddlewaretoken"' in page
    for button in ('value="approve"', 'value="reject"', 'value="amend"'):
        assert button in page


def test_the_page_says_when_the_requester_is_no_longer_active(site):
    deactivated = ask_from(site, CLAUDE)
    User.objects.filter(pk=site.requester.pk).update(is_active=False)
    approver = signed_in(site.approver)
    assert "ann (deactivated)" in approver.get(url("changelist")).content.decode()
    page = approver.get(url("change", deactivated.pk)).content.decode()
    assert "ann (deactivated)" in page
    assert "has been deactivated: approving runs nothing" in page
    response = approver.post(url("decide", deactivated.pk), {"decision": "approve"}, follow=True)
    assert messages_of(response) == [
        f"Approved request #{deactivated.pk}, but it could not run: The account that made this request, "
        "ann, has been deactivated: nothing was run."
    ]
    assert site.runs == []
    User.objects.get(pk=site.requester.pk).delete()
    deleted = ToolTask.objects.create(
        digest="d" * 64, server=site.server.key, tool="refund", principal="user:999", runner="staff"
    )
    assert "user:999 (deleted)" in approver.get(url("change", deleted.pk)).content.decode()


def test_a_decided_request_shows_its_decision_and_no_buttons(site):
    row = ask_from(site, CLAUDE)
    approver = signed_in(site.approver)
    approver.post(url("decide", row.pk), {"decision": "reject", "reason": "No receipt."})
    page = approver.get(url("change", row.pk)).content.decode()
    assert "No receipt." in page and "finance" in page
    assert 'value="approve"' not in page
    assert "was decided already" in page


# Deciding -----------------------------------------------------------------------------------------------


def _decide(site: Site, row: ToolTask, **data: Any) -> Any:
    client = signed_in(site.approver, enforce_csrf_checks=True)
    page = client.get(url("change", row.pk))
    data.setdefault("seen", page.context["seen"])
    token = page.context["csrf_token"]
    return client.post(url("decide", row.pk), {"csrfmiddlewaretoken": str(token), **data}, follow=True)


def test_approve_runs_the_request_and_says_so(site):
    row = ask_from(site, CLAUDE)
    response = _decide(site, row, decision="approve")
    assert response.redirect_chain[-1][0] == url("change", row.pk)
    assert messages_of(response) == [
        f"Approved request #{row.pk}: it ran, and the requester gets its result."
    ]
    assert site.runs == [{"order": "A-1", "amount": 30, "why": "late"}]
    row.refresh_from_db()
    assert (row.status, row.decision, row.decided_by) == ("completed", "approved", site.approver)


def test_reject_with_a_reason_and_send_back_with_a_note(site):
    first = ask_from(site, CLAUDE)
    second = ask_from(site, CLAUDE, **{**REFUND, "order": "A-2"})
    rejected = _decide(site, first, decision="reject", reason="Outside the refund window.")
    assert messages_of(rejected) == [f"Rejected request #{first.pk}; the requester is told."]
    first.refresh_from_db()
    assert first.reason == "Outside the refund window."
    assert first.result is not None and first.result["isError"] is True

    sent_back = _decide(site, second, decision="amend", reason="Which parcel arrived late?")
    assert messages_of(sent_back) == [f"Sent request #{second.pk} back to the requester with your note."]
    second.refresh_from_db()
    assert second.status == "input_required"
    [request] = [entry["request"] for entry in second.outstanding.values()]
    assert request["params"]["message"].startswith("Which parcel arrived late?")
    assert site.runs == []


@pytest.mark.parametrize("decision", ["reject", "amend"])
def test_a_reason_no_database_can_store_is_refused_with_a_message(site, decision):
    """PostgreSQL stores no NUL character, in a text column or in JSON: the approver is told so."""
    row = ask_from(site, CLAUDE)
    response = _decide(site, row, decision=decision, reason="No receipt.\x00")
    assert messages_of(response) == [
        "Nothing was decided: the reason or note holds a null character, which cannot be stored. "
        "Remove it and decide again."
    ]
    row.refresh_from_db()
    assert (row.status, row.decision, row.reason) == ("working", "", "")


def test_a_decision_post_without_the_csrf_token_is_refused(site):
    row = ask_from(site, CLAUDE)
    client = signed_in(site.approver, enforce_csrf_checks=True)
    assert client.post(url("decide", row.pk), {"decision": "approve"}).status_code == 403
    assert site.runs == []


def test_the_decide_url_takes_only_posts(site):
    row = ask_from(site, CLAUDE)
    assert signed_in(site.approver).get(url("decide", row.pk)).status_code == 405


def test_a_refused_decision_is_shown_as_an_error(site):
    row = ask_from(site, CLAUDE)
    approver = signed_in(site.approver)
    page = approver.get(url("change", row.pk))
    ToolTask.objects.filter(pk=row.pk).update(status="cancelled")  # the requester cancelled meanwhile
    response = approver.post(
        url("decide", row.pk), {"decision": "approve", "seen": page.context["seen"]}, follow=True
    )
    assert messages_of(response) == [
        f"The requester cancelled request #{row.pk}; it can no longer be decided."
    ]
    assert site.runs == []


def test_ones_own_request_shows_why_it_cannot_be_decided_unless_the_setting_allows_it():
    site = site_with()
    site.requester = site.approver
    row = ask_from(site, CLAUDE)
    approver = signed_in(site.approver)
    page = approver.get(url("change", row.pk)).content.decode()
    assert 'value="approve"' not in page and "yourself" in page
    response = approver.post(url("decide", row.pk), {"decision": "approve"}, follow=True)
    assert "yourself" in messages_of(response)[0]
    assert site.runs == []
    with override_settings(MCPFORMS={"ALLOW_ANONYMOUS": True, "ALLOW_SELF_APPROVAL": True}):
        assert 'value="approve"' in approver.get(url("change", row.pk)).content.decode()


def test_nothing_edits_or_deletes_a_request(site):
    row = ask_from(site, CLAUDE)
    superuser = signed_in(User.objects.create_superuser("root", "root@example.com", "pw"))
    assert superuser.get(url("add")).status_code == 403
    assert superuser.get(url("delete", row.pk)).status_code == 403
    changed = superuser.post(url("change", row.pk), {"arguments": "{}", "status": "completed"})
    assert changed.status_code == 403
    row.refresh_from_db()
    assert row.status == "working" and row.arguments["values"]["amount"] == 30


def test_a_superuser_may_decide_any_request(site):
    row = ask_from(site, CLAUDE)
    boss = User.objects.create_superuser("boss", "boss@example.com", "pw")
    assert 'value="approve"' in signed_in(boss).get(url("change", row.pk)).content.decode()


def test_an_approver_of_one_tool_sees_nothing_of_anothers_requests(site):
    from mcpforms.registry import registry_for
    from mcpforms.tools import tool_class
    from tests.test_approvals import RefundForm

    registry_for(site.server).add_tool(
        tool_class(RefundForm, name="payout", approval="testapp.delete_gadget")()
    )
    mine = ask_from(site, CLAUDE)
    payload = wire.message("tools/call", {"name": "payout", "arguments": REFUND}, capabilities=TASKS)
    site.server.handle(payload, headers=None, user=site.requester)
    other = ToolTask.objects.get(tool="payout")
    approver = signed_in(site.approver)
    page = approver.get(url("changelist")).content.decode()
    assert f"#{mine.pk}<" in page and f"#{other.pk}<" not in page
    assert approver.get(url("change", other.pk)).status_code == 302  # "no such task", as for any other id
    response = approver.post(url("decide", other.pk), {"decision": "approve"})
    assert response.status_code == 403
    assert ToolTask.objects.get(pk=other.pk).status == "working"


# A list of many requests ---------------------------------------------------------------------------------


def many_requests(site: Site, tool: str, count: int, *, status: str, start: int = 0) -> None:
    """``count`` requests of ``tool``, made as calls make them, but at once."""
    now = timezone.now()
    values = {"order": "A-1", "amount": 30, "why": "late"}
    ToolTask.objects.bulk_create(
        ToolTask(
            digest=f"{tool}-{start + number:08d}".ljust(64, "0"),
            server=site.server.key,
            tool=tool,
            principal=f"user:{site.requester.pk}",
            user=site.requester,
            arguments={"arguments": values, "values": values},
            runner=ToolTask.Runner.STAFF,
            status=status,
            created=now - timedelta(seconds=start + number),
            expires=now + timedelta(days=7),
        )
        for number in range(count)
    )


def test_the_approvers_list_stays_fast_with_ten_thousand_requests():
    from mcpforms.registry import registry_for
    from mcpforms.tools import tool_class
    from tests.test_approvals import APPROVE, RefundForm

    asked: list[int] = []

    def small_refunds(approver: Any, task: ToolTask) -> bool:
        asked.append(task.pk)
        return bool(task.arguments["values"]["amount"] <= 50)

    site = site_with(approval=small_refunds)  # the refund tool: a rule decides who decides
    registry_for(site.server).add_tool(tool_class(RefundForm, name="payout", approval=APPROVE)())
    many_requests(site, "refund", 5, status="working")
    many_requests(site, "payout", 5, status="working")
    approver = signed_in(site.approver)

    def listed() -> tuple[int, int, str]:
        """The queries and the rule's calls one page of the list takes, and the page."""
        asked.clear()
        with CaptureQueriesContext(connection) as queries:
            response = approver.get(url("changelist"))
        assert response.status_code == 200
        return len(queries), len(asked), response.content.decode()

    few_queries, few_asked, page = listed()
    assert "10 tasks" in page
    # Ten thousand more: a week's decided requests of both tools, and a few more waiting.
    many_requests(site, "refund", 5000, status="completed", start=10)
    many_requests(site, "payout", 4990, status="completed", start=10)
    many_requests(site, "refund", 5, status="working", start=6000)
    queries, rule_calls, page = listed()
    assert queries == few_queries
    # The rule is asked about the requests waiting for a decision, once each: never the table's history.
    assert rule_calls == few_asked + 5 <= 10
    assert "5005 tasks" in page  # the rule's waiting ten, and every request of the permission's tool
