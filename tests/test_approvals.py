"""Approval requests decided by staff (``mcpforms.approvals``), as the requester's client sees them: the
task its call became, polled with ``tasks/get``, and what each decision — or a cancel, or the clock —
makes of it."""

from __future__ import annotations

import itertools
import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar, cast

import pytest
from django import forms
from django.contrib.auth.models import Permission, User
from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.test import Client, override_settings
from django.urls import reverse
from django.utils import timezone

import mcpforms.signals as signals
from mcpforms.approvals import ApprovalRefused, amend, approve, reject
from mcpforms.models import CompletedFlow, ToolTask
from mcpforms.protocol.errors import ToolError
from mcpforms.protocol.server import Server
from mcpforms.protocol.tasks import EXTENSION
from mcpforms.registry import registry_for
from mcpforms.task_store import cancel_task
from mcpforms.tools import FormTool, tool_class
from tests.core_client import ELICITATION, CoreClient, text
from tests.testapp.models import Colour

pytestmark = pytest.mark.django_db

TASKS = {**ELICITATION, "extensions": {EXTENSION: {}}}
# What approvers of the tests' tools hold: any real permission serves.
APPROVE = "testapp.change_gadget"
_keys = itertools.count()
T = TypeVar("T")


class RefundForm(forms.Form):
    """Ask for a refund."""

    order = forms.CharField(label="Order number")
    amount = forms.IntegerField(label="Amount (EUR)", min_value=1)
    why = forms.ChoiceField(label="Reason", choices=[("damaged", "Damaged"), ("late", "Arrived late")])


class ColourForm(forms.ModelForm):
    class Meta:
        model = Colour
        fields = ["name", "code"]


REFUND = {"order": "A-1", "amount": 30, "why": "late"}


def user(name: str, *permissions: str) -> User:
    made = User.objects.create_user(name, password="pw", is_staff=True)
    for permission in permissions:
        app_label, codename = permission.split(".")
        made.user_permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )
    return User.objects.get(pk=made.pk)  # permissions are cached per instance


@dataclass
class Site:
    """A server with one approval tool, whose handler runs are counted, and the people around it."""

    server: Server
    tool: FormTool
    requester: User
    approver: User
    runs: list[dict[str, Any]] = field(default_factory=list)

    def client(self) -> CoreClient:
        return CoreClient(self.server, capabilities=TASKS, user=self.requester)

    def ask(self, **arguments: Any) -> tuple[str, ToolTask]:
        """Call the tool with valid arguments: the call becomes a task waiting for approval."""
        created = self.client().call(self.tool.name, arguments or REFUND)
        assert created["resultType"] == "task", created
        assert created["status"] == "working"
        return created["taskId"], ToolTask.objects.get(digest=_digest(created["taskId"]))

    def ask_in_two_rounds(self) -> tuple[dict[str, Any], dict[str, Any], ToolTask]:
        """Call without the amount, answer the form elicitation: the flow's final round becomes the task.
        The first round's result, the answer's params, and the task."""
        client = self.client()
        first = client.call(self.tool.name, {"order": "A-1", "why": "late"})
        answer = {self.tool.name: {"action": "accept", "content": {**REFUND}}}
        created = client.answer(first, self.tool.name, {"order": "A-1", "why": "late"}, **answer)
        assert created["resultType"] == "task", created
        return first, answer, ToolTask.objects.get(digest=_digest(created["taskId"]))

    def poll(self, task_id: str) -> dict[str, Any]:
        """What the requester's ``tasks/get`` answers: the task, or the JSON-RPC error."""
        body = self.client().send("tasks/get", {"taskId": task_id})
        answer: dict[str, Any] = body.get("result") or body["error"]
        return answer


def _digest(task_id: str) -> str:
    from mcpforms.models import task_digest

    return task_digest(task_id)


def site_with(form_class: type[forms.BaseForm] = RefundForm, **options: Any) -> Site:
    holder: dict[str, Site] = {}

    def handler(request: Any, form: forms.BaseForm) -> Any:
        holder["site"].runs.append(dict(form.cleaned_data))
        if "handle" in options:
            return options["handle"](request, form)
        return f"Refunded {form.cleaned_data.get('amount')} EUR on {form.cleaned_data.get('order')}"

    server = Server(key=f"approvals-{next(_keys)}")
    settings = {"name": "refund", "approval": APPROVE, "permission": None} | {
        key: value for key, value in options.items() if key != "handle"
    }
    built = tool_class(form_class, handler=handler, **settings)()
    registry_for(server).add_tool(built)
    holder["site"] = Site(server, built, requester=user("ann"), approver=user("finance", APPROVE))
    return holder["site"]


@pytest.fixture
def site() -> Site:
    return site_with()


# Approve -----------------------------------------------------------------------------------------------


def test_approving_runs_the_handler_and_the_requester_polls_its_result(site):
    task_id, row = site.ask()
    assert site.poll(task_id)["statusMessage"] == "Waiting for approval"
    assert site.runs == []

    decided = approve(site.tool, row, site.approver)

    assert decided.succeeded
    assert site.runs == [{"order": "A-1", "amount": 30, "why": "late"}]
    polled = site.poll(task_id)
    assert polled["status"] == "completed"
    assert text(polled["result"]) == "Refunded 30 EUR on A-1"
    row.refresh_from_db()
    assert (row.decision, row.decided_by, row.reason) == ("approved", site.approver, "")
    assert row.decided_at is not None


def test_approving_twice_runs_the_handler_once(site):
    _, _, row = site.ask_in_two_rounds()
    approve(site.tool, row, site.approver)
    with pytest.raises(ApprovalRefused, match="decided already"):
        approve(site.tool, row, site.approver)
    assert len(site.runs) == 1
    # The flow's completion is recorded, as any completed flow's is.
    assert list(CompletedFlow.objects.values_list("digest", flat=True)) == [row.flow]


def test_the_final_round_replayed_after_the_approval_gets_the_result_not_a_second_run(site):
    first, answer, row = site.ask_in_two_rounds()
    approve(site.tool, row, site.approver)
    replayed = site.client().answer(first, "refund", {"order": "A-1", "why": "late"}, **answer)
    assert text(replayed) == "Refunded 30 EUR on A-1"
    assert len(site.runs) == 1
    assert ToolTask.objects.count() == 1


# Two approvers at once ----------------------------------------------------------------------------------


@contextmanager
def threads_on_a_file_database(path: Path) -> Iterator[None]:
    """On SQLite, make the threads started inside open a copy of the test database in the file ``path``,
    each on a connection of its own that waits half a second for a lock: the test database is in memory,
    where SQLite serializes every connection, as no deployment does. Elsewhere, nothing changes."""
    if connection.vendor != "sqlite":
        yield
        return
    connection.ensure_connection()
    copy = sqlite3.connect(path)
    connection.connection.backup(copy)
    copy.close()
    original = connections.settings[DEFAULT_DB_ALIAS]
    options = {**original.get("OPTIONS", {}), "timeout": 0.5}
    connections.settings[DEFAULT_DB_ALIAS] = {**original, "NAME": str(path), "OPTIONS": options}
    try:
        yield
    finally:
        connections.settings[DEFAULT_DB_ALIAS] = original


def in_a_thread(work: Callable[[], T]) -> T:
    """``work()`` on a thread of its own, with its own database connection, as another request has."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as error:
            outcome["error"] = error
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(30)
    if "error" in outcome:
        raise outcome["error"]
    return cast(T, outcome["value"])


def admin_messages(response: Any) -> list[str]:
    return [str(message) for message in response.context["messages"]]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("rounds", ["one round", "two rounds"])
def test_two_approvers_deciding_at_once_run_the_handler_once_and_the_second_is_told(tmp_path, rounds):
    """The second approver's Approve arrives while the first one's handler runs: on SQLite (a file, two
    connections) and on PostgreSQL alike, it is refused at once with a page that says why, never a 500;
    the handler runs once, and the request ends as the first decision made it."""
    inside, release = threading.Event(), threading.Event()

    def slow(request: Any, form: forms.BaseForm) -> str:
        inside.set()
        release.wait(10)
        return "Refunded"

    site = site_with(handle=slow)
    task_id, row = site.ask() if rounds == "one round" else (None, site.ask_in_two_rounds()[2])
    colleague = user("colleague", APPROVE)
    first, second = Client(), Client()
    first.force_login(site.approver)
    second.force_login(colleague)
    decide = reverse("admin:mcpforms_tooltask_decide", args=[row.pk])
    change = reverse("admin:mcpforms_tooltask_change", args=[row.pk])
    with threads_on_a_file_database(tmp_path / "db.sqlite3"):
        clicked: dict[str, Any] = {}

        def click_first() -> None:
            try:
                clicked["first"] = first.post(decide, {"decision": "approve"})
            finally:
                connections.close_all()

        thread = threading.Thread(target=click_first)
        thread.start()
        assert inside.wait(10)
        answered = in_a_thread(lambda: second.post(decide, {"decision": "approve"}))
        release.set()
        thread.join(30)
        # Each page read after both clicks: the test client records the templates of every thread's request.
        told = {"1": in_a_thread(lambda: first.get(change)), "2": in_a_thread(lambda: second.get(change))}
        final = in_a_thread(lambda: ToolTask.objects.get(pk=row.pk))
    assert (clicked["first"].status_code, answered.status_code) == (302, 302)
    assert admin_messages(told["2"]) == [
        f"Someone is deciding or changing request #{row.pk} right now: nothing was decided. Look at it again "
        "in a moment."
    ]
    assert admin_messages(told["1"]) == [
        f"Approved request #{row.pk}: it ran, and the requester gets its result."
    ]
    assert len(site.runs) == 1
    assert (final.status, final.decision, final.decided_by_id) == ("completed", "approved", site.approver.pk)


def test_a_tool_error_completes_the_request_with_its_message():
    def refuse(request: Any, form: forms.BaseForm) -> Any:
        raise ToolError("Order A-1 was refunded already.")

    site = site_with(handle=refuse)
    task_id, row = site.ask()
    decided = approve(site.tool, row, site.approver)
    assert not decided.succeeded
    polled = site.poll(task_id)
    assert polled["status"] == "completed"
    assert polled["result"]["isError"] is True
    assert text(polled["result"]) == "Order A-1 was refunded already."


@pytest.mark.django_db(transaction=True)
def test_a_handler_that_raises_fails_the_request_and_its_writes_roll_back_but_the_failure_stays(caplog):
    def crash(request: Any, form: forms.BaseForm) -> Any:
        Colour.objects.create(name="Written", code="#000")
        raise RuntimeError("the payment gateway's secret detail")

    site = site_with(handle=crash)
    task_id, row = site.ask()
    with caplog.at_level(logging.ERROR, logger="mcpforms.approvals"):
        decided = approve(site.tool, row, site.approver)

    assert not decided.succeeded
    polled = site.poll(task_id)  # another transaction: the failure was committed
    assert polled["status"] == "failed"
    assert polled["error"] == {"code": -32603, "message": "Internal error"}
    assert "secret detail" not in json.dumps(polled)
    assert not Colour.objects.exists()  # the handler's savepoint rolled back
    assert not CompletedFlow.objects.exists()  # and its completion with it: it did not complete
    assert ToolTask.objects.get(pk=row.pk).decision == "approved"
    assert "secret detail" in caplog.text  # only the log has it


# The form, bound again for the requester ---------------------------------------------------------------


def test_a_unique_value_taken_since_the_request_completes_it_with_djangos_message():
    site = site_with(ColourForm, name="add_colour")
    task_id, row = site.ask(name="Teal", code="#088")
    Colour.objects.create(name="Teal", code="#077")  # someone else took the name meanwhile

    decided = approve(site.tool, row, site.approver)

    assert not decided.succeeded
    assert "Colour with this Name already exists." in decided.message
    polled = site.poll(task_id)
    assert polled["status"] == "completed"
    assert polled["result"]["isError"] is True
    assert "Colour with this Name already exists." in text(polled["result"])
    assert site.runs == []
    assert Colour.objects.count() == 1


def test_an_object_deleted_since_the_request_completes_it_with_an_error():
    colour = Colour.objects.create(name="Teal", code="#088")
    site = site_with(ColourForm, name="rename_colour", update=True)
    pk = colour.pk
    task_id, row = site.ask(pk=pk, name="Petrol")
    colour.delete()

    approve(site.tool, row, site.approver)

    polled = site.poll(task_id)
    assert polled["result"]["isError"] is True
    assert text(polled["result"]) == f"No colour with pk {pk}."
    assert site.runs == []


def test_the_form_is_bound_again_for_the_requester_not_the_approver():
    seen: list[Any] = []

    class PerUserTool(FormTool):
        form_class = RefundForm
        name = "refund"
        approval = APPROVE

        def get_form_kwargs(self, request: Any) -> dict[str, Any]:
            seen.append(request.user)
            return {}

    server = Server(key=f"approvals-{next(_keys)}")
    registry_for(server).add_tool(PerUserTool())
    ann, finance = user("ann"), user("finance", APPROVE)
    created = CoreClient(server, capabilities=TASKS, user=ann).call("refund", REFUND)
    seen.clear()
    tool = registry_for(server).form_tool("refund")
    assert tool is not None
    approve(tool, ToolTask.objects.get(), finance)
    assert seen and all(who == ann for who in seen)
    assert created["resultType"] == "task"


# Reject, cancel, expiry --------------------------------------------------------------------------------


def test_rejecting_completes_the_request_with_the_reason_and_nothing_runs(site):
    task_id, row = site.ask()
    reject(site.tool, row, site.approver, "  Refunds over 20 EUR need a receipt.  ")
    polled = site.poll(task_id)
    assert polled["status"] == "completed"
    assert polled["result"]["isError"] is True
    assert text(polled["result"]) == (
        f"Request #{row.pk} (Refund) was rejected; nothing was done. "
        "Reason: Refunds over 20 EUR need a receipt."
    )
    assert site.runs == []
    row.refresh_from_db()
    assert (row.decision, row.reason) == ("rejected", "Refunds over 20 EUR need a receipt.")
    with pytest.raises(ApprovalRefused, match="decided already"):
        approve(site.tool, row, site.approver)


def test_a_request_the_requester_cancelled_cannot_be_approved_and_never_runs(site):
    task_id, row = site.ask()
    assert site.client().send("tasks/cancel", {"taskId": task_id})["result"] is not None
    assert site.poll(task_id)["status"] == "cancelled"

    with pytest.raises(ApprovalRefused, match="The requester cancelled request"):
        approve(site.tool, row, site.approver)
    with pytest.raises(ApprovalRefused, match="cancelled"):
        reject(site.tool, row, site.approver, "too late")

    assert site.runs == []
    assert not CompletedFlow.objects.exists()
    assert site.poll(task_id)["status"] == "cancelled"


def test_a_cancel_after_the_approval_changes_nothing(site):
    task_id, row = site.ask()
    approve(site.tool, row, site.approver)
    assert not cancel_task(row)
    assert site.poll(task_id)["status"] == "completed"


def _race(
    first: Callable[[], Any], second: Callable[[], Any], inside: threading.Event, *, waits: bool = True
) -> dict[str, Any]:
    """Run ``first`` until it signals ``inside`` (its transaction holds the request), start ``second``,
    check that it waits (or, not ``waits``, that it is answered at once), and let both finish; what each
    returned or raised."""
    outcomes: dict[str, Any] = {}

    def run(label: str, work: Callable[[], Any]) -> None:
        try:
            outcomes[label] = work()
        except Exception as error:
            outcomes[label] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(label, work)) for label, work in [("first", first)]]
    threads[0].start()
    assert inside.wait(10)
    threads.append(threading.Thread(target=run, args=("second", second)))
    threads[1].start()
    threads[1].join(0.5 if waits else 5)
    assert threads[1].is_alive() is waits  # the second waits for the first's transaction, or does not
    return {"threads": threads, "outcomes": outcomes}


@pytest.mark.django_db(transaction=True)
def test_a_cancel_racing_an_approval_loses_to_it_when_the_approval_came_first():
    if connection.vendor != "postgresql":
        pytest.skip("needs a database where a second writer waits: PostgreSQL")
    inside, release = threading.Event(), threading.Event()

    def slow(request: Any, form: forms.BaseForm) -> str:
        inside.set()
        release.wait(10)
        return "Refunded"

    site = site_with(handle=slow)
    task_id, row = site.ask()
    race = _race(lambda: approve(site.tool, row, site.approver), lambda: cancel_task(row), inside)
    release.set()
    for thread in race["threads"]:
        thread.join(10)
    assert race["outcomes"]["second"] is False  # the cancel found the request decided
    assert len(site.runs) == 1
    assert site.poll(task_id)["status"] == "completed"


@pytest.mark.django_db(transaction=True)
def test_an_approval_racing_a_cancel_loses_to_it_when_the_cancel_came_first():
    if connection.vendor != "postgresql":
        pytest.skip("needs a database where a second writer waits: PostgreSQL")
    site = site_with()
    task_id, row = site.ask()
    inside, release = threading.Event(), threading.Event()

    def cancel_and_hold() -> bool:
        with transaction.atomic():
            cancelled = cancel_task(row)
            inside.set()
            release.wait(10)  # the cancel's transaction is still open when the approval arrives
        return cancelled

    # A decision waits for no one: while the cancel's transaction holds the request, the approver is told.
    race = _race(cancel_and_hold, lambda: approve(site.tool, row, site.approver), inside, waits=False)
    assert "is deciding or changing request" in str(race["outcomes"]["second"])
    release.set()
    for thread in race["threads"]:
        thread.join(10)
    assert race["outcomes"]["first"] is True
    assert isinstance(race["outcomes"]["second"], ApprovalRefused)
    with pytest.raises(ApprovalRefused, match="The requester cancelled request"):
        approve(site.tool, row, site.approver)
    assert site.runs == []
    assert site.poll(task_id)["status"] == "cancelled"


def test_an_expired_request_cannot_be_approved(site):
    task_id, row = site.ask()
    ToolTask.objects.filter(pk=row.pk).update(expires=timezone.now() - timedelta(seconds=1))
    with pytest.raises(ApprovalRefused, match="has expired"):
        approve(site.tool, row, site.approver)
    assert site.runs == []
    assert site.poll(task_id)["code"] == -32602  # and the requester's poll finds no such task


def test_a_request_just_before_its_expiry_can_still_be_approved(site):
    task_id, row = site.ask()
    ToolTask.objects.filter(pk=row.pk).update(expires=timezone.now() + timedelta(seconds=30))
    approve(site.tool, row, site.approver)
    assert site.poll(task_id)["status"] == "completed"


# A requester who is no longer active -----------------------------------------------------------------


def gone(site: Site, how: str) -> str:
    """Deactivate or delete the requester, as staff do to someone who left; what the request says then."""
    if how == "deactivated":
        User.objects.filter(pk=site.requester.pk).update(is_active=False)
        return "The account that made this request, ann, has been deactivated: nothing was run."
    site.requester.delete()
    return "The account that made this request no longer exists: nothing was run."


@pytest.mark.parametrize("how", ["deactivated", "deleted"])
def test_approving_the_request_of_a_requester_no_longer_active_runs_nothing_and_ends_it(how):
    seen: list[Any] = []

    def refund(request: Any, form: forms.BaseForm) -> str:
        seen.append(request.user)
        return "Refunded"

    site = site_with(handle=refund)
    _, row = site.ask()
    why = gone(site, how)

    decided = approve(site.tool, row, site.approver)

    assert seen == [] and site.runs == []
    assert not decided.succeeded
    assert decided.message == f"Approved request #{row.pk}, but it could not run: {why}"
    row.refresh_from_db()
    assert row.status == "completed" and row.result is not None
    assert row.result["isError"] is True and text(row.result) == why
    assert not CompletedFlow.objects.exists()


@pytest.mark.parametrize("how", ["deactivated", "deleted"])
def test_a_request_whose_requester_is_gone_cannot_be_sent_back(site, how):
    _, row = site.ask()
    gone(site, how)
    with pytest.raises(ApprovalRefused, match="cannot be sent back: nobody can answer it"):
        amend(site.tool, row, site.approver, "Which parcel?")
    reject(site.tool, row, site.approver, "They left.")  # rejecting it closes it
    row.refresh_from_db()
    assert (row.status, row.decision) == ("completed", "rejected")


# Who may decide ----------------------------------------------------------------------------------------


def test_only_a_holder_of_the_approval_permission_may_decide(site):
    task_id, row = site.ask()
    clerk = user("clerk")  # staff, but without the approval permission
    decisions: list[Callable[[], Any]] = [
        lambda: approve(site.tool, row, clerk),
        lambda: reject(site.tool, row, clerk, "no"),
        lambda: amend(site.tool, row, clerk, "change it"),
    ]
    for decide in decisions:
        with pytest.raises(ApprovalRefused, match=f"needs the '{APPROVE}' permission"):
            decide()
    assert site.poll(task_id)["status"] == "working"
    inactive = user("gone", APPROVE)
    User.objects.filter(pk=inactive.pk).update(is_active=False)
    with pytest.raises(ApprovalRefused):
        approve(site.tool, row, User.objects.get(pk=inactive.pk))


def test_an_approval_callable_decides_each_request():
    site = site_with(approval=lambda approver, task: task.arguments["values"]["amount"] <= 50)
    _, small = site.ask(**REFUND)
    _, large = site.ask(**{**REFUND, "order": "A-2", "amount": 500})
    approve(site.tool, small, site.approver)
    with pytest.raises(ApprovalRefused, match="approval rule does not let you"):
        approve(site.tool, large, site.approver)


def test_nobody_approves_their_own_request_unless_the_setting_allows_it():
    site = site_with()
    site.requester = site.approver  # the approver asks for a refund themselves
    task_id, row = site.ask()
    with pytest.raises(ApprovalRefused, match="You made request .* yourself"):
        approve(site.tool, row, site.approver)
    with override_settings(MCPFORMS={"ALLOW_ANONYMOUS": True, "ALLOW_SELF_APPROVAL": True}):
        approve(site.tool, row, site.approver)
    assert site.poll(task_id)["status"] == "completed"


# Amendments ---------------------------------------------------------------------------------------------


def test_sending_a_request_back_asks_the_requester_again_under_a_fresh_key(site):
    task_id, row = site.ask()
    amend(site.tool, row, site.approver, "Refunds for late orders are at most 20 EUR.")

    polled = site.poll(task_id)
    assert polled["status"] == "input_required"
    [(key, request)] = polled["inputRequests"].items()
    assert request["params"]["message"].startswith("Refunds for late orders are at most 20 EUR.")
    schema = request["params"]["requestedSchema"]["properties"]
    assert schema["amount"]["default"] == 30  # prefilled with what they asked for
    assert schema["order"]["default"] == "A-1"
    with pytest.raises(ApprovalRefused, match="waiting for the requester's amendment"):
        approve(site.tool, row, site.approver)

    answer = {"action": "accept", "content": {**REFUND, "amount": 20}}
    site.client().send("tasks/update", {"taskId": task_id, "inputResponses": {key: answer}})
    assert site.poll(task_id)["status"] == "working"

    amend(site.tool, row, site.approver, "And the order number, please.")
    again = site.poll(task_id)["inputRequests"]
    assert key not in again  # never the same key twice
    [(second_key, _)] = again.items()
    site.client().send("tasks/update", {"taskId": task_id, "inputResponses": {second_key: answer}})

    approve(site.tool, row, site.approver)
    assert site.runs == [{"order": "A-1", "amount": 20, "why": "late"}]  # the amended values
    row.refresh_from_db()
    assert row.decision == "approved"


def test_sending_back_needs_a_note(site):
    _, row = site.ask()
    with pytest.raises(ApprovalRefused, match="Say what should change"):
        amend(site.tool, row, site.approver, "   ")


def test_a_decision_on_values_the_page_did_not_show_is_refused(site):
    from mcpforms.approvals import fingerprint

    _, row = site.ask()
    shown = fingerprint(row)
    ToolTask.objects.filter(pk=row.pk).update(
        arguments={**row.arguments, "values": {**REFUND, "amount": 900}}
    )
    with pytest.raises(ApprovalRefused, match="changed since the page showed it"):
        approve(site.tool, row, site.approver, seen=shown)
    assert site.runs == []


# The signal --------------------------------------------------------------------------------------------


@pytest.fixture
def decisions() -> Iterator[list[dict[str, Any]]]:
    received: list[dict[str, Any]] = []

    def receiver(sender: Any, **kwargs: Any) -> None:
        received.append(kwargs)

    signals.task_decided.connect(receiver)
    yield received
    signals.task_decided.disconnect(receiver)


def test_each_decision_sends_task_decided_once_it_commits(
    site, decisions, django_capture_on_commit_callbacks
):
    _, first = site.ask()
    _, second = site.ask(**{**REFUND, "order": "A-2"})
    with django_capture_on_commit_callbacks(execute=True):
        approve(site.tool, first, site.approver)
        assert decisions == []  # not before the commit
    with django_capture_on_commit_callbacks(execute=True):
        reject(site.tool, second, site.approver, "duplicate")
    assert [(d["task"].pk, d["decision"], d["approver"], d["reason"]) for d in decisions] == [
        (first.pk, "approved", site.approver, ""),
        (second.pk, "rejected", site.approver, "duplicate"),
    ]
    assert all(d["tool"] is site.tool for d in decisions)


def test_a_refused_decision_sends_nothing(site, decisions, django_capture_on_commit_callbacks):
    _, row = site.ask()
    cancel_task(row)
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(ApprovalRefused):
        approve(site.tool, row, site.approver)
    assert decisions == []
