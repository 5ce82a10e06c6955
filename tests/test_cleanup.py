"""Expired rows: ``manage.py mcpforms_cleanup`` deletes what the 2025 era, URL mode and the exactly-once
record keep past their lifetime, and says how much; the requests' occasional sweep is only the fallback."""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from django import forms
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone

import mcpforms
from mcpforms import models
from mcpforms.management.commands.mcpforms_cleanup import CRON_LINE, Command
from mcpforms.models import (
    CleanupRun,
    CompletedFlow,
    Era2025Call,
    Era2025Session,
    StreamEvent,
    ToolTask,
    UrlElicitation,
    sweep,
)
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.era2025.sessions import PendingCall, Session
from mcpforms.protocol.server import default_server
from mcpforms.registry import registry_for
from mcpforms.session_stores import DatabaseSessions
from mcpforms.task_store import start_task
from tests.core_client import CoreClient, url_request
from tests.docs_examples import example

pytestmark = pytest.mark.django_db

SETTINGS = {"SESSION_MAX_AGE": 600, "STATE_MAX_AGE": 60, "URL_MODE_MAX_AGE": 120}


def aged(seconds: float) -> datetime:
    return timezone.now() - timedelta(seconds=seconds)


def session(session_id: str, age: int) -> Era2025Session:
    return Era2025Session.objects.create(
        id=session_id, version="2025-11-25", principal="anonymous", server="default", created=aged(age)
    )


def call(call_id: str, owner: Era2025Session, age: int) -> Era2025Call:
    made = Era2025Call.objects.create(
        id=call_id, session=owner, request_id=1, method="tools/call", created=aged(age)
    )
    StreamEvent.objects.create(call=made, seq=1, data={"jsonrpc": "2.0"})
    return made


def cleanup(**configured: Any) -> str:
    out = io.StringIO()
    with override_settings(MCPFORMS={**SETTINGS, **configured}):
        call_command("mcpforms_cleanup", stdout=out)
    return out.getvalue()


# The command ----------------------------------------------------------------------------------------------


def test_what_outlived_its_lifetime_is_deleted_and_counted():
    live, old = session("live", 500), session("old", 700)
    call("fresh", live, 30)
    call("stale", live, 90)
    call("orphaned", old, 30)  # goes with its session
    UrlElicitation.objects.create(tool="signup", principal="anonymous", created=aged(100))
    UrlElicitation.objects.create(tool="signup", principal="anonymous", created=aged(130))
    CompletedFlow.objects.create(digest="a" * 64, created=aged(30))
    CompletedFlow.objects.create(digest="b" * 64, created=aged(90))

    output = cleanup()

    assert list(Era2025Session.objects.values_list("id", flat=True)) == ["live"]
    assert list(Era2025Call.objects.values_list("id", flat=True)) == ["fresh"]
    assert list(StreamEvent.objects.values_list("call_id", flat=True)) == ["fresh"]
    assert UrlElicitation.objects.count() == 1
    assert list(CompletedFlow.objects.values_list("digest", flat=True)) == ["a" * 64]
    assert "1 expired 2025-era session" in output
    assert "2 expired pending call" in output
    assert "1 URL-mode elicitation" in output
    assert "1 completed-flow record" in output


def test_expired_tasks_are_deleted_and_live_ones_kept():
    ctx = RequestContext.for_tool("refund", user=None)
    live = start_task(ctx, tool="refund", arguments={}, runner=ToolTask.Runner.STAFF).row
    old = start_task(ctx, tool="refund", arguments={}, runner=ToolTask.Runner.STAFF).row
    ToolTask.objects.filter(pk=old.pk).update(expires=aged(1))  # nobody may poll or approve it now
    output = cleanup()
    assert list(ToolTask.objects.values_list("pk", flat=True)) == [live.pk]
    assert "Deleted 1 expired task" in output


def test_nothing_to_delete_says_so():
    session("live", 10)
    assert "0 expired 2025-era sessions" in cleanup()
    assert Era2025Session.objects.count() == 1


def test_each_run_is_recorded_and_only_the_latest_kept():
    assert not CleanupRun.ran_recently()
    cleanup()
    cleanup()
    assert CleanupRun.ran_recently()
    assert CleanupRun.objects.count() == 1


def test_the_help_the_installation_page_and_the_deploying_guide_give_the_same_cron_line():
    assert "crontab" in Command.help and CRON_LINE in Command.help
    assert "manage.py mcpforms_cleanup" in CRON_LINE
    assert example("deploying-cron-line").strip() == CRON_LINE  # docs/howto/deploying.md
    assert example("installation-cron-line").strip() == CRON_LINE  # docs/installation.md


# Dynamic client registrations that never got a token (mcpforms.oauth.dcr) ---------------------------------
# Claude registers twice per connect and signs in with one; each abandoned registration would stay forever.


def application(name: str, *, source: str, age_days: float) -> Any:
    from oauth2_provider.models import Application

    made = Application.objects.create(
        name=name,
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="https://claude.ai/api/mcp/auth_callback",
        registration_source=source,
    )
    # ``created`` is auto_now_add: set the age afterwards.
    Application.objects.filter(pk=made.pk).update(created=timezone.now() - timedelta(days=age_days))
    return made


def token(app: Any, *, scope: str) -> None:
    from oauth2_provider.models import AccessToken

    AccessToken.objects.create(
        application=app, token=f"t-{scope}-{app.pk}", scope=scope, expires=timezone.now() + timedelta(hours=1)
    )


def test_never_used_dynamic_registrations_are_deleted_after_the_horizon():
    from oauth2_provider.models import AccessToken, Application

    abandoned = application("abandoned", source="dcr", age_days=3)
    token(abandoned, scope="oauth2_provider:registration")  # its registration access token is no use
    used = application("used", source="dcr", age_days=30)
    token(used, scope="mcp")
    application("manual", source="manual", age_days=30)
    application("recent", source="dcr", age_days=1)

    output = cleanup(OAUTH_DCR_UNUSED_DAYS=2)

    assert sorted(Application.objects.values_list("name", flat=True)) == ["manual", "recent", "used"]
    assert AccessToken.objects.filter(scope="oauth2_provider:registration").count() == 0  # went with it
    assert "Deleted 1 never-used client registration" in output


# The requests' sweep: a fallback for projects that never schedule the command ------------------------------


@pytest.fixture
def every_time(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The sweep's chance made a certainty, with the test's lifetimes."""
    monkeypatch.setattr(models, "SWEEP_ONE_IN", 1)
    with override_settings(MCPFORMS=SETTINGS):
        yield


def flows() -> list[str]:
    return sorted(CompletedFlow.objects.values_list("digest", flat=True))


def test_the_sweep_deletes_only_expired_rows(every_time):
    CompletedFlow.objects.create(digest="old", created=aged(90))
    CompletedFlow.objects.create(digest="new", created=aged(30))
    sweep(CompletedFlow.expired)
    assert flows() == ["new"]


def test_a_missed_chance_costs_no_query(monkeypatch, django_assert_num_queries):
    monkeypatch.setattr(models, "SWEEP_ONE_IN", 10**9)
    CompletedFlow.objects.create(digest="old", created=aged(90))
    with override_settings(MCPFORMS=SETTINGS), django_assert_num_queries(0):
        sweep(CompletedFlow.expired)
    assert flows() == ["old"]


def test_a_recent_cleanup_leaves_the_deleting_to_the_command(every_time):
    CompletedFlow.objects.create(digest="old", created=aged(90))
    CleanupRun.record()
    sweep(CompletedFlow.expired)
    assert flows() == ["old"]


def test_a_cleanup_long_ago_hands_the_deleting_back_to_requests(every_time):
    CompletedFlow.objects.create(digest="old", created=aged(90))
    CleanupRun.objects.create(created=timezone.now() - models.CLEANUP_COUNTS_FOR - timedelta(minutes=1))
    sweep(CompletedFlow.expired)
    assert flows() == []


def test_a_setting_turns_the_sweep_off(every_time):
    CompletedFlow.objects.create(digest="old", created=aged(90))
    with override_settings(MCPFORMS={**SETTINGS, "SWEEP_EXPIRED": False}):
        sweep(CompletedFlow.expired)
    assert flows() == ["old"]


# Each place a row is written sweeps its kind -------------------------------------------------------------


def opened(session_id: str) -> Session:
    return Session(
        id=session_id,
        version="2025-11-25",
        capabilities={},
        client_info=None,
        principal="anonymous",
        server="default",
    )


def test_a_new_session_sweeps_expired_sessions(every_time):
    session("old", 700)
    DatabaseSessions().create(opened("new"))
    assert list(Era2025Session.objects.values_list("id", flat=True)) == ["new"]


def test_a_new_pending_call_sweeps_expired_calls(every_time):
    owner = session("live", 10)
    call("stale", owner, 90)
    DatabaseSessions().save_call(
        PendingCall(id="new", session="live", request_id=1, method="tools/call", params={})
    )
    assert list(Era2025Call.objects.values_list("id", flat=True)) == ["new"]


def test_a_completed_flow_sweeps_expired_records(every_time):
    from mcpforms.protocol.state import dump_state, load_state

    binding: dict[str, Any] = {
        "server": "default",
        "tool": "tool:t",
        "arguments": {},
        "principal": "anonymous",
    }
    CompletedFlow.objects.create(digest="old", created=aged(90))
    kept = CompletedFlow.record(load_state(dump_state(**binding, answers={}), **binding))
    assert flows() == [kept]


class VaultForm(forms.Form):
    password = forms.CharField(widget=forms.PasswordInput)


def test_a_new_url_mode_page_sweeps_expired_pages(every_time):
    UrlElicitation.objects.create(tool="vault", principal="anonymous", created=aged(130))
    mcpforms.register(VaultForm, name="cleanup_vault")
    try:
        with override_settings(MCPFORMS={**SETTINGS, "BASE_URL": "http://testserver"}):
            client = CoreClient(default_server, capabilities={"elicitation": {"form": {}, "url": {}}})
            url_request(client.call("cleanup_vault", {}), "cleanup_vault")
    finally:
        registry_for(default_server).unregister("cleanup_vault")
    assert list(UrlElicitation.objects.values_list("tool", flat=True)) == ["cleanup_vault"]
