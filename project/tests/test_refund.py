"""The demo's approval tool, ``refund_request``: the staff user asks, the ``finance`` user seed_demo makes
approves in the admin, and only then is the refund recorded."""

from __future__ import annotations

import re
from decimal import Decimal
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client, override_settings

from mcpforms.approvals import ApprovalRefused, approve, why_not
from mcpforms.models import ToolTask
from mcpforms.protocol.server import default_server
from mcpforms.protocol.tasks import EXTENSION
from mcpforms.registry import registry_for
from project.demo.management.commands.seed_demo import FINANCE_PASSWORD, FINANCE_USERNAME
from project.demo.models import Refund
from tests.core_client import ELICITATION, CoreClient, accept, asked, text

TASKS = {**ELICITATION, "extensions": {EXTENSION: {}}}
REFUND = {"order": "ORD-1042", "amount": "12.50", "reason": "The parcel arrived broken."}

pytestmark = pytest.mark.django_db


@pytest.fixture
def seeded() -> tuple[User, User]:
    """The demo's users as `make run` seeds them: the staff superuser who asks, finance who approves."""
    call_command("seed_demo", stdout=StringIO())
    return User.objects.get(username="staff"), User.objects.get(username=FINANCE_USERNAME)


def refund_tool():
    tool = registry_for(default_server).form_tool("refund_request")
    assert tool is not None
    return tool


def test_seed_demo_makes_a_finance_user_who_may_approve_refunds_and_nothing_else(seeded):
    _, finance = seeded
    assert finance.is_staff and not finance.is_superuser
    assert finance.has_perm("demo.approve_refund")
    assert not finance.has_perm("demo.add_ticket")
    assert Client().login(username=FINANCE_USERNAME, password=FINANCE_PASSWORD)
    call_command("seed_demo", stdout=StringIO())  # `make run` seeds every time
    assert User.objects.filter(username=FINANCE_USERNAME).count() == 1


def test_a_call_by_a_client_that_follows_tasks_waits_for_approval_and_records_nothing_yet(seeded):
    staff, _ = seeded
    client = CoreClient(default_server, capabilities=TASKS, user=staff)
    created = client.call("refund_request", REFUND)
    assert created["resultType"] == "task"
    assert (created["status"], created["statusMessage"]) == ("working", "Waiting for approval")
    assert Refund.objects.count() == 0
    polled = client.result("tasks/get", {"taskId": created["taskId"]})
    assert polled["status"] == "working" and "result" not in polled


def test_finance_approves_and_the_refund_is_recorded_for_the_requester(seeded):
    staff, finance = seeded
    client = CoreClient(default_server, capabilities=TASKS, user=staff)
    created = client.call("refund_request", REFUND)
    row = ToolTask.objects.get()
    assert why_not(refund_tool(), row, finance) is None
    approve(refund_tool(), row, finance)
    (refund,) = Refund.objects.all()
    assert (refund.order, refund.amount, refund.requested_by) == ("ORD-1042", Decimal("12.50"), staff)
    done = client.result("tasks/get", {"taskId": created["taskId"]})
    assert done["status"] == "completed"
    assert done["result"]["structuredContent"] == {
        "refund": refund.pk,
        "order": "ORD-1042",
        "amount": "12.50",
    }
    assert text(done["result"]) == f"Refund #{refund.pk} of 12.50 for ORD-1042 is recorded."


def test_the_requester_may_not_approve_their_own_refund(seeded):
    staff, _ = seeded
    CoreClient(default_server, capabilities=TASKS, user=staff).call("refund_request", REFUND)
    with pytest.raises(ApprovalRefused, match="someone else must decide it"):
        approve(refund_tool(), ToolTask.objects.get(), staff)
    assert Refund.objects.count() == 0


def test_django_judges_the_form_before_anything_waits_for_approval(seeded):
    staff, _ = seeded
    client = CoreClient(default_server, capabilities=TASKS, user=staff)
    arguments = {**REFUND, "order": "1042"}
    first = client.call("refund_request", arguments)
    question = asked(first, "refund_request")
    assert "Enter the reference as on the receipt, e.g. ORD-1042." in question["message"]
    assert list(question["requestedSchema"]["properties"]) == ["order"]
    created = client.answer(first, "refund_request", arguments, refund_request=accept(order="ORD-1042"))
    assert created["resultType"] == "task"
    assert ToolTask.objects.get().arguments["values"] == {
        "order": "ORD-1042",
        "amount": "12.50",
        "reason": "The parcel arrived broken.",
    }


def test_a_client_without_tasks_is_told_its_request_number(seeded):
    staff, _ = seeded
    result = CoreClient(default_server, user=staff).call("refund_request", REFUND)
    row = ToolTask.objects.get()
    assert text(result).startswith(f"Sent for approval as request #{row.pk};")
    assert Refund.objects.count() == 0


@override_settings(MCPFORMS={"ALLOW_ANONYMOUS": ["signup"]})
def test_the_home_page_shows_the_refund_card_and_who_approves_it(seeded):
    staff, _ = seeded
    browser = Client()
    browser.force_login(staff)
    page = browser.get("/").content.decode()
    card = re.search(r'<article class="card tool" id="tool-refund_request".*?</article>', page, re.S)
    assert card is not None
    assert '<li class="badge badge-approval">Approved in the admin</li>' in card.group(0)
    assert f"<code>{FINANCE_USERNAME}</code> / <code>{FINANCE_PASSWORD}</code>" in card.group(0)
    assert '<form class="tool-form" data-tool="refund_request"' in card.group(0)
