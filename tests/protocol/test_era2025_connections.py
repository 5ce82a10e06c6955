"""The database connections of a 2025-era call's handler, through the real endpoint: it runs on a thread
of its own (the answer may stream), one of a few the endpoint keeps, whose connections live from one
call to the next as a request thread's do under ``CONN_MAX_AGE``, and are checked as Django checks a
request's (``CONN_HEALTH_CHECKS``, ``close_old_connections``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection, connections
from django.db.backends.signals import connection_created
from django.test import override_settings

from mcpforms import api
from mcpforms.protocol.server import Server
from mcpforms.registry import register
from mcpforms.session_stores import DatabaseSessions
from tests.forms import SignupForm
from tests.protocol.test_era2025_queries import flow_queries

# The handler's thread sees committed rows only.
pytestmark = pytest.mark.django_db(transaction=True)
FLOWS = 3


@pytest.fixture
def server() -> Server:
    made = Server(name="connections", sessions=DatabaseSessions())
    register(SignupForm, server=made)
    return made


@pytest.fixture
def persistent() -> Iterator[dict[str, Any]]:
    """Persistent connections (``CONN_MAX_AGE``), as docs/howto/deploying.md recommends, for every
    connection opened from now on; no helper thread holding one before the test or after it."""
    settings = connections["default"].settings_dict
    saved = {key: settings[key] for key in ("CONN_MAX_AGE", "CONN_HEALTH_CHECKS")}
    api._helpers.retire()
    connection.ensure_connection()  # this thread's, opened before anything is counted
    settings["CONN_MAX_AGE"] = 600
    try:
        yield settings
    finally:
        settings.update(saved)
        api._helpers.retire()


@pytest.fixture
def opened() -> Iterator[list[Any]]:
    """The connections opened from now on, on any thread (Django's ``connection_created``)."""
    made: list[Any] = []

    def record(sender: Any, connection: Any, **kwargs: Any) -> None:
        made.append(connection)

    connection_created.connect(record, weak=False)
    try:
        yield made
    finally:
        connection_created.disconnect(record)


def complete_flow(server: Server) -> None:
    """bench/legacy_flow.py's flow: initialize, the call answered on SSE, the answer, the resumed stream."""
    for name, status, _ in flow_queries(server):
        assert status in (200, 202), name


@override_settings(MCPFORMS={"ALLOW_ANONYMOUS": True})
def test_streamed_calls_share_one_persistent_database_connection(server, persistent, opened):
    for _ in range(FLOWS):
        complete_flow(server)
    assert len(opened) == 1, opened
    assert opened[0] is not connection  # the handler's thread's own, not this thread's


@pytest.mark.skipif(connection.vendor == "sqlite", reason="SQLite connections are always usable to Django")
@override_settings(MCPFORMS={"ALLOW_ANONYMOUS": True})
def test_a_broken_persistent_connection_is_replaced_before_the_next_call(server, persistent, opened):
    persistent["CONN_HEALTH_CHECKS"] = True
    complete_flow(server)
    assert len(opened) == 1, opened
    opened[0].connection.close()  # as a database restart or an idle timeout would
    complete_flow(server)  # the health check Django makes on a request's first query replaces it
    assert len(opened) == 2, opened
