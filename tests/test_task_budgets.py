"""What a task keeps, and how many a caller may make the server keep: only the arguments the tool declares,
and budgets on live tasks per user and, for anonymous callers, per address and all together, refused with
429 and ``Retry-After`` on the wire of either era (``task_store.start_task``, ``protocol.budgets``)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.test import RequestFactory, override_settings
from django.utils import timezone

from mcpforms.api import serve
from mcpforms.models import AccessToken, ToolTask
from mcpforms.protocol.state import ANONYMOUS
from tests import wire
from tests.core_client import CoreClient, accept
from tests.test_approvals import REFUND, TASKS, ColourForm, Site, site_with
from tests.testapp.models import Colour

pytestmark = pytest.mark.django_db

JUNK = {"junk": "x" * 90_000, "nested": {"deeper": ["y" * 1000] * 20}}


@pytest.fixture
def site() -> Site:
    return site_with()


# What a task keeps ------------------------------------------------------------------------------------


def test_a_task_keeps_only_the_arguments_its_tool_declares(site):
    task = site.client().call(site.tool.name, {**REFUND, **JUNK})
    assert task["resultType"] == "task"
    row = ToolTask.objects.get()
    assert row.arguments == {"arguments": REFUND, "values": REFUND}
    assert len(json.dumps(row.arguments)) < 200


def test_an_update_keeps_its_lookup_and_the_forms_fields_only():
    colour = Colour.objects.create(name="Teal", code="#088")
    site = site_with(ColourForm, name="rename_colour", update=True)
    site.ask(pk=colour.pk, name="Petrol", **JUNK)
    kept = ToolTask.objects.get().arguments
    assert kept["arguments"] == {"pk": colour.pk, "name": "Petrol"}
    assert kept["values"] == {"name": "Petrol", "code": "#088"}


# Budgets -----------------------------------------------------------------------------------------------


def budgets(**limits: int | None) -> Any:
    return override_settings(MCPFORMS={"ALLOW_ANONYMOUS": True, **limits})


def call(site: Site, arguments: dict[str, Any], *, user: Any = None, address: str = "192.0.2.7") -> Any:
    """The ``tools/call`` of a 2026-07-28 client that follows tasks, over HTTP, from ``address``: with a
    token of ``user``, or anonymous."""
    payload = wire.message("tools/call", {"name": site.tool.name, "arguments": arguments}, capabilities=TASKS)
    token = None if user is None else AccessToken.objects.issue(user, "tests")[1]
    request = wire.http_request(payload, token=token, REMOTE_ADDR=address)
    request.user = AnonymousUser()
    return serve(site.server, request)


def order(number: int) -> dict[str, Any]:
    return {**REFUND, "order": f"A-{number}"}


def assert_over_budget(response: Any, setting: str) -> dict[str, Any]:
    """A 429 with Retry-After (RFC 6585), whose JSON-RPC error names the setting; the error."""
    assert response.status_code == 429, response.content
    error: dict[str, Any] = json.loads(response.content)["error"]
    assert error["code"] == -32000
    assert f"MCPFORMS['{setting}']" in error["message"], error
    assert error["data"] == {"limit": setting, "retryAfter": int(response["Retry-After"])}
    assert int(response["Retry-After"]) > 0
    return error


@budgets(TASKS_PER_PRINCIPAL=2)
def test_a_user_may_keep_so_many_live_tasks_then_is_told_429_and_when_to_retry(site):
    for number in (1, 2):
        assert (
            json.loads(call(site, order(number), user=site.requester).content)["result"]["resultType"]
            == "task"
        )
    refused = call(site, order(3), user=site.requester)
    error = assert_over_budget(refused, "TASKS_PER_PRINCIPAL")
    assert "2 live tasks" in error["message"]
    # The first place frees up when the oldest task expires: TASK_TTL (a week) from now.
    assert 7 * 86400 - 60 <= int(refused["Retry-After"]) <= 7 * 86400
    assert ToolTask.objects.count() == 2
    # Someone else is counted apart.
    other = User.objects.create_user("bob")
    assert json.loads(call(site, order(3), user=other).content)["result"]["resultType"] == "task"


@budgets(TASKS_PER_PRINCIPAL=1)
def test_an_expired_task_frees_its_place_and_retry_after_counts_to_the_first_expiry(site):
    assert call(site, order(1), user=site.requester).status_code == 200
    ToolTask.objects.update(expires=timezone.now() + timedelta(seconds=90))
    refused = call(site, order(2), user=site.requester)
    assert_over_budget(refused, "TASKS_PER_PRINCIPAL")
    assert 85 <= int(refused["Retry-After"]) <= 90
    ToolTask.objects.update(expires=timezone.now() - timedelta(seconds=1))
    assert call(site, order(2), user=site.requester).status_code == 200


@budgets(ANONYMOUS_TASKS_PER_ADDRESS=2, ANONYMOUS_TASKS=3)
def test_anonymous_callers_are_counted_per_address_and_all_together():
    site = site_with(permission=None)
    assert call(site, order(1)).status_code == call(site, order(2)).status_code == 200
    assert_over_budget(call(site, order(3)), "ANONYMOUS_TASKS_PER_ADDRESS")
    # An IPv6 host owns its whole /64, as for sessions: one of its addresses is all of them.
    assert call(site, order(3), address="2001:db8::1").status_code == 200
    assert_over_budget(call(site, order(4), address="2001:db8::2"), "ANONYMOUS_TASKS")
    assert_over_budget(call(site, order(4), address="198.51.100.1"), "ANONYMOUS_TASKS")
    assert ToolTask.objects.filter(principal=ANONYMOUS).count() == 3
    assert sorted(ToolTask.objects.values_list("address", flat=True)) == [
        "192.0.2.7",
        "192.0.2.7",
        "2001:db8::/64",
    ]


@budgets(TASKS_PER_PRINCIPAL=None, ANONYMOUS_TASKS_PER_ADDRESS=None, ANONYMOUS_TASKS=None)
def test_a_budget_set_to_none_counts_nothing():
    site = site_with(permission=None)
    for number in range(5):
        assert call(site, order(number)).status_code == 200
    assert ToolTask.objects.count() == 5


@budgets(TASKS_PER_PRINCIPAL=1)
def test_a_replayed_final_round_finds_its_task_past_the_budget(site):
    client = CoreClient(site.server, capabilities=TASKS, user=site.requester)
    first = client.call(site.tool.name, {"order": "A-1", "why": "late"})
    final = client.answer(first, site.tool.name, {"order": "A-1", "why": "late"}, refund=accept(**REFUND))
    assert final["resultType"] == "task"
    replayed = client.answer(first, site.tool.name, {"order": "A-1", "why": "late"}, refund=accept(**REFUND))
    assert replayed["taskId"] == final["taskId"]
    refused = client.send("tools/call", {"name": site.tool.name, "arguments": order(2)})
    assert refused["error"]["data"]["limit"] == "TASKS_PER_PRINCIPAL"


@pytest.mark.django_db(transaction=True)
@budgets(ANONYMOUS_TASKS_PER_ADDRESS=1, ANONYMOUS_SESSIONS_PER_ADDRESS=None)
def test_a_2025_session_past_the_budget_is_told_429_too():
    site = site_with(permission=None)

    def post(message: dict[str, Any], **headers: str) -> Any:
        environ: dict[str, Any] = {"REMOTE_ADDR": "192.0.2.7", **headers}
        request = RequestFactory().post(
            "/mcp", json.dumps(message), content_type="application/json", **environ
        )
        request.user = AnonymousUser()
        return serve(site.server, request)

    session = post(wire.initialize({"elicitation": {}}))["Mcp-Session-Id"]
    sent = {"HTTP_MCP_SESSION_ID": session, "HTTP_MCP_PROTOCOL_VERSION": "2025-11-25"}
    message = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
    queued = post({**message, "params": {"name": "refund", "arguments": order(1)}}, **sent)
    assert queued.status_code == 200
    assert ToolTask.objects.count() == 1
    assert_over_budget(
        post({**message, "params": {"name": "refund", "arguments": order(2)}}, **sent),
        "ANONYMOUS_TASKS_PER_ADDRESS",
    )
    assert ToolTask.objects.count() == 1
