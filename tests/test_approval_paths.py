"""An approval gate holds on every path to the handler: a tool with ``approval`` runs ``handle`` only when
a staff member approves, whichever way its form was filled — a form elicitation, the URL-mode page a
client that can only open links is sent to, or a direct call of ``running.run_handler``."""

from __future__ import annotations

import io
import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from django import forms
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.test import Client, override_settings

import mcpforms.signals as signals
from mcpforms.approvals import approve
from mcpforms.models import ToolTask
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.server import Server, default_server
from mcpforms.protocol.tasks import EXTENSION
from mcpforms.registry import registry_for
from mcpforms.running import run_handler
from mcpforms.tools import FormTool, tool_class
from tests.core_client import CoreClient, page_path, text, url_request
from tests.test_approvals import user

pytestmark = pytest.mark.django_db

# A client that can be asked only through a link: no form elicitation, no MCP Apps, no tasks.
LINKS_ONLY: dict[str, Any] = {"elicitation": {"url": {}}}
APPROVE = "testapp.change_gadget"
_keys = itertools.count()


class RefundForm(forms.Form):
    """Ask for a refund."""

    order = forms.CharField()
    amount = forms.IntegerField(min_value=1)


class GroupForm(forms.ModelForm):
    class Meta:
        model = Group
        fields = ["name"]


@pytest.fixture(autouse=True)
def base_url() -> Iterator[None]:
    with override_settings(MCPFORMS={"BASE_URL": "http://testserver", "ALLOW_ANONYMOUS": True}):
        yield


@pytest.fixture
def runs() -> list[dict[str, Any]]:
    return []


@pytest.fixture
def completed() -> Iterator[list[str]]:
    """The tools ``tool_completed`` was sent for (on commit: run a step inside ``committing``)."""
    seen: list[str] = []

    def receiver(sender: Any, **kwargs: Any) -> None:
        seen.append(kwargs["tool"].name)

    signals.tool_completed.connect(receiver, dispatch_uid="test_approval_paths")
    yield seen
    signals.tool_completed.disconnect(dispatch_uid="test_approval_paths")


@pytest.fixture
def committing(django_capture_on_commit_callbacks: Any) -> Any:
    """``with committing():`` runs what the block's commits would have run, at its end."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


def serve(
    runs: list[dict[str, Any]], form_class: type[forms.BaseForm], **options: Any
) -> tuple[Server, FormTool]:
    def handler(request: Any, form: forms.BaseForm) -> str:
        runs.append(dict(form.cleaned_data))
        if hasattr(form, "save"):
            form.save()
        return "Done."

    server = Server(key=f"approval-paths-{next(_keys)}")
    built = tool_class(form_class, handler=handler, approval=APPROVE, permission=None, **options)()
    registry_for(server).add_tool(built)
    return server, built


def submit_on_the_page(
    result: dict[str, Any], key: str, data: dict[str, Any], user: User | None = None
) -> Any:
    browser = Client()
    if user is not None:
        browser.force_login(user)
    return browser.post(page_path(result, key), data)


def test_a_confirmed_refund_filled_on_the_page_waits_for_approval(runs, completed, committing):
    server, refund = serve(runs, RefundForm, name="refund", ask="always")
    ann = user("ann")
    client = CoreClient(server, capabilities=LINKS_ONLY, user=ann)

    first = client.call("refund", {"order": "A-1", "amount": 30})
    url_request(first, "refund")  # the page is where the user confirms
    with committing():
        done = submit_on_the_page(first, "refund", {"order": "A-1", "amount": "30"}, user=ann)
    assert done.status_code == 200
    assert runs == [] and completed == []  # nothing ran: the request waits for a decision

    task = ToolTask.objects.get(tool="refund")
    assert task.runner == ToolTask.Runner.STAFF and task.status == ToolTask.Status.WORKING
    assert task.user == ann
    assert task.arguments["values"] == {"order": "A-1", "amount": 30}
    assert f"Sent for approval as request #{task.pk}" in done.content.decode()

    again = client.call(
        "refund",
        {"order": "A-1", "amount": 30},
        inputResponses={"refund": {"action": "accept"}},
        requestState=first["requestState"],
    )
    assert f"Sent for approval as request #{task.pk}" in text(again)
    assert runs == []

    with committing():
        approve(refund, task, user("finance", APPROVE))
    assert runs == [{"order": "A-1", "amount": 30}] and completed == ["refund"]


def test_an_update_called_with_only_its_lookup_waits_for_approval_after_the_page(runs, completed, committing):
    server, _rename = serve(runs, GroupForm, name="rename_group", update=True)
    group = Group.objects.create(name="Sales")
    ann = user("ann")
    client = CoreClient(server, capabilities=LINKS_ONLY, user=ann)

    first = client.call("rename_group", {"pk": group.pk})
    with committing():
        done = submit_on_the_page(first, "rename_group", {"name": "Revenue"}, user=ann)
    assert done.status_code == 200
    assert runs == [] and completed == []
    assert Group.objects.get(pk=group.pk).name == "Sales"
    task = ToolTask.objects.get(tool="rename_group")
    assert task.arguments == {"arguments": {"pk": group.pk}, "values": {"name": "Revenue"}}


def test_an_invalid_page_submit_of_an_approval_tool_makes_no_request(runs):
    server, _refund = serve(runs, RefundForm, name="refund", ask="always")
    first = CoreClient(server, capabilities=LINKS_ONLY).call("refund", {"order": "A-1", "amount": 30})
    refused = submit_on_the_page(first, "refund", {"order": "A-1", "amount": "0"})
    assert refused.status_code == 400
    assert "Ensure this value is greater than or equal to 1" in refused.content.decode()
    assert not ToolTask.objects.exists() and runs == []


def test_a_tool_that_needs_tasks_is_refused_before_the_page_for_a_client_without_them(runs):
    server, _refund = serve(runs, RefundForm, name="refund", ask="always", approval_requires_tasks=True)
    body = CoreClient(server, capabilities=LINKS_ONLY).send(
        "tools/call", {"name": "refund", "arguments": {"order": "A-1", "amount": 30}}
    )
    assert body["error"]["code"] == -32021, body
    assert EXTENSION in body["error"]["message"]
    assert not ToolTask.objects.exists() and runs == []


def test_the_handler_of_an_approval_tool_never_runs_outside_an_approval(runs, completed, committing):
    _server, refund = serve(runs, RefundForm, name="refund")
    form = RefundForm(data={"order": "A-1", "amount": 30})
    assert form.is_valid()
    with committing():
        result = run_handler(refund, RequestContext.for_tool("refund", user=None), form)
    assert result["isError"] is True
    assert "needs approval" in text(result)
    assert runs == [] and completed == []


def test_mcpforms_tools_says_every_path_of_an_approval_tool_waits_for_approval():
    refund = tool_class(RefundForm, name="refund_listed", approval=APPROVE, ask="always")()
    registry_for(default_server).add_tool(refund)
    try:
        out = io.StringIO()
        call_command("mcpforms_tools", "refund_listed", stdout=out)
    finally:
        registry_for(default_server).unregister("refund_listed")
    assert "form elicitation, URL-mode page" in out.getvalue()
    assert (
        f"runs         once staff approve the request (holders of {APPROVE}); every path, the URL-mode page "
        "too, makes the request"
    ) in out.getvalue()


def test_a_background_tool_filled_on_the_page_runs_once_in_the_pages_request(completed, committing):
    runs: list[dict[str, Any]] = []

    def handler(request: Any, form: forms.BaseForm) -> str:
        runs.append(dict(form.cleaned_data))
        return "Refunded."

    server = Server(key=f"approval-paths-{next(_keys)}")
    built = tool_class(RefundForm, name="slow_refund", handler=handler, background=True, ask="always")()
    registry_for(server).add_tool(built)
    client = CoreClient(server, capabilities=LINKS_ONLY)
    first = client.call("slow_refund", {"order": "A-1", "amount": 30})
    with committing():
        assert submit_on_the_page(first, "slow_refund", {"order": "A-1", "amount": "30"}).status_code == 200
    retried = {"inputResponses": {"slow_refund": {"action": "accept"}}, "requestState": first["requestState"]}
    assert text(client.call("slow_refund", {"order": "A-1", "amount": 30}, **retried)) == "Refunded."
    assert text(client.call("slow_refund", {"order": "A-1", "amount": 30}, **retried)) == "Refunded."
    assert runs == [{"order": "A-1", "amount": 30}] and completed == ["slow_refund"]
    assert not ToolTask.objects.exists()  # the page answers a person, who follows no task


def test_past_the_task_budget_the_page_says_so_and_its_link_still_works(runs):
    server, _refund = serve(runs, RefundForm, name="refund", ask="always")
    first = CoreClient(server, capabilities=LINKS_ONLY).call("refund", {"order": "A-1", "amount": 30})
    with override_settings(
        MCPFORMS={"BASE_URL": "http://testserver", "ALLOW_ANONYMOUS": True, "ANONYMOUS_TASKS_PER_ADDRESS": 0}
    ):
        refused = submit_on_the_page(first, "refund", {"order": "A-1", "amount": "30"})
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert "ANONYMOUS_TASKS_PER_ADDRESS" in refused.content.decode()
    assert not ToolTask.objects.exists()
    assert submit_on_the_page(first, "refund", {"order": "A-1", "amount": "30"}).status_code == 200
    assert ToolTask.objects.get().address == "127.0.0.1"


def test_a_client_that_follows_tasks_is_given_the_request_the_page_made(runs):
    server, _refund = serve(runs, RefundForm, name="refund", ask="always")
    client = CoreClient(server, capabilities={**LINKS_ONLY, "extensions": {EXTENSION: {}}})
    first = client.call("refund", {"order": "A-1", "amount": 30})
    again = {"inputResponses": {"refund": {"action": "accept"}}, "requestState": first["requestState"]}
    assert client.call("refund", {"order": "A-1", "amount": 30}, **again)["resultType"] == "input_required"
    assert submit_on_the_page(first, "refund", {"order": "A-1", "amount": "30"}).status_code == 200
    created = client.call("refund", {"order": "A-1", "amount": 30}, **again)
    assert created["resultType"] == "task" and created["status"] == "working"
    polled = client.result("tasks/get", {"taskId": created["taskId"]})
    assert polled["statusMessage"] == "Waiting for approval"
    # Asked again, the same request: one row, whatever the retries.
    assert client.call("refund", {"order": "A-1", "amount": 30}, **again)["taskId"] == created["taskId"]
    assert ToolTask.objects.count() == 1 and runs == []
