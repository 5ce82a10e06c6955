"""The budgets on what a 2025-era caller makes the server keep: who is counted with whom, how a client's
address is counted, and how long a refused caller is told to wait.

``test_era2025`` sees the same budgets on the wire (429 on ``initialize``, on a call, on adopting a session).
"""

from __future__ import annotations

import time

import pytest
from django.test import override_settings

from mcpforms.protocol.budgets import (
    Kept,
    OverBudget,
    address_scope,
    check_call_budget,
    check_session_budget,
    check_task_budget,
)
from mcpforms.protocol.era2025.sessions import MemorySessions, Tally
from mcpforms.protocol.reply import refusal
from mcpforms.protocol.state import ANONYMOUS


class Counted(MemorySessions):
    """A store that holds ``tally`` of everything, and remembers which scopes the budgets counted."""

    def __init__(self, tally: Tally) -> None:
        super().__init__()
        self.tally = tally
        self.counted: list[tuple[str, str | None]] = []

    def count_sessions(self, *, principal: str, address: str | None = None) -> Tally:
        self.counted.append((principal, address))
        return self.tally

    def count_calls(self, session_id: str) -> Tally:
        self.counted.append((session_id, None))
        return self.tally


@pytest.mark.parametrize(
    ("address", "scope"),
    [
        ("192.0.2.7", "192.0.2.7"),
        (" 192.0.2.7 ", "192.0.2.7"),
        ("::ffff:192.0.2.7", "192.0.2.7"),  # an IPv4 client on a dual-stack socket is the same client
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),  # an IPv6 host is handed a whole /64
        ("2001:db8:1:2::ffff", "2001:db8:1:2::/64"),
        (None, None),  # stdio
        ("", None),
        ("/run/gunicorn.sock", None),  # a Unix socket names no client
    ],
)
def test_a_client_address_is_counted_as_the_client_holds_it(address, scope):
    assert address_scope(address) == scope


@override_settings(
    MCPFORMS={"SESSIONS_PER_PRINCIPAL": 5, "ANONYMOUS_SESSIONS_PER_ADDRESS": 5, "ANONYMOUS_SESSIONS": 5}
)
def test_a_user_is_counted_alone_and_anonymous_callers_per_address_and_together():
    store = Counted(Tally(count=0))
    check_session_budget(store, principal="user:1", address="192.0.2.7")
    check_session_budget(store, principal=ANONYMOUS, address="192.0.2.7")
    check_session_budget(store, principal=ANONYMOUS, address=None)
    assert store.counted == [
        ("user:1", None),
        (ANONYMOUS, "192.0.2.7"),
        (ANONYMOUS, None),
        (ANONYMOUS, None),
    ]


@override_settings(MCPFORMS={"ANONYMOUS_SESSIONS": 3, "ANONYMOUS_SESSIONS_PER_ADDRESS": None})
def test_a_budget_set_to_none_is_not_counted_and_the_others_still_are():
    store = Counted(Tally(count=3, oldest=time.time()))
    with pytest.raises(OverBudget) as raised:
        check_session_budget(store, principal=ANONYMOUS, address="192.0.2.7")
    assert store.counted == [(ANONYMOUS, None)]
    assert raised.value.data["limit"] == "ANONYMOUS_SESSIONS"


@override_settings(MCPFORMS={"CALLS_PER_SESSION": 2, "STATE_MAX_AGE": 600})
def test_a_refused_caller_is_told_to_wait_until_the_oldest_expires():
    store = Counted(Tally(count=2, oldest=time.time() - 100))
    with pytest.raises(OverBudget) as raised:
        check_call_budget(store, "s1")
    error = raised.value
    assert 499 <= error.retry_after <= 500
    assert error.data == {"limit": "CALLS_PER_SESSION", "retryAfter": error.retry_after}
    assert "MCPFORMS['CALLS_PER_SESSION']" in error.message
    # The refusal the core sends: 429, with the wait in Retry-After too (RFC 6585).
    reply = refusal(error, 3)
    assert (reply.status, reply.headers) == (429, {"Retry-After": str(error.retry_after)})
    assert reply.body == {"jsonrpc": "2.0", "id": 3, "error": error.as_error()}


@override_settings(MCPFORMS={"CALLS_PER_SESSION": 2})
def test_under_a_budget_or_with_it_off_nothing_is_refused():
    check_call_budget(Counted(Tally(count=1, oldest=time.time())), "s1")
    with override_settings(MCPFORMS={"CALLS_PER_SESSION": None}):
        store = Counted(Tally(count=10_000, oldest=time.time()))
        check_call_budget(store, "s1")
        assert store.counted == []


@override_settings(
    MCPFORMS={"TASKS_PER_PRINCIPAL": 5, "ANONYMOUS_TASKS_PER_ADDRESS": 5, "ANONYMOUS_TASKS": 5}
)
def test_tasks_are_counted_as_sessions_are():
    counted: list[tuple[str, str | None]] = []

    def count(principal: str, address: str | None) -> Kept:
        counted.append((principal, address))
        return Kept(count=0)

    check_task_budget(count, principal="user:1", address="192.0.2.7")
    check_task_budget(count, principal=ANONYMOUS, address="192.0.2.7")
    check_task_budget(count, principal=ANONYMOUS, address=None)
    assert counted == [("user:1", None), (ANONYMOUS, "192.0.2.7"), (ANONYMOUS, None), (ANONYMOUS, None)]


@override_settings(MCPFORMS={"TASKS_PER_PRINCIPAL": 2, "TASK_TTL": 3600})
def test_a_caller_over_the_task_budget_waits_for_the_first_expiry_or_a_whole_ttl():
    with pytest.raises(OverBudget) as raised:
        check_task_budget(
            lambda *_: Kept(count=2, first_expiry=time.time() + 100), principal="u", address=None
        )
    assert 99 <= raised.value.retry_after <= 100
    assert raised.value.data == {"limit": "TASKS_PER_PRINCIPAL", "retryAfter": raised.value.retry_after}
    # Tasks that never expire free no place: the client is told to come back after a task's lifetime.
    with pytest.raises(OverBudget) as never:
        check_task_budget(lambda *_: Kept(count=3), principal="u", address=None)
    assert never.value.retry_after == 3600
