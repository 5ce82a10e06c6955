"""``manage.py mcpforms_prune``: what the 2025 era, URL mode and the exactly-once record keep past their
lifetime is deleted on a schedule, and the command says how much."""

from __future__ import annotations

import io
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone

from mcpforms.models import CompletedFlow, Era2025Call, Era2025Session, StreamEvent, UrlElicitation

pytestmark = pytest.mark.django_db

SETTINGS = {"SESSION_MAX_AGE": 600, "STATE_MAX_AGE": 60, "URL_MODE_MAX_AGE": 120}


def aged(seconds: int) -> datetime:
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


def prune() -> str:
    out = io.StringIO()
    with override_settings(MCPFORMS=SETTINGS):
        call_command("mcpforms_prune", stdout=out)
    return out.getvalue()


def test_what_outlived_its_lifetime_is_deleted_and_counted():
    live, old = session("live", 500), session("old", 700)
    call("fresh", live, 30)
    call("stale", live, 90)
    call("orphaned", old, 30)  # goes with its session
    UrlElicitation.objects.create(tool="signup", principal="anonymous", created=aged(100))
    UrlElicitation.objects.create(tool="signup", principal="anonymous", created=aged(130))
    CompletedFlow.objects.create(digest="a" * 64, created=aged(30))
    CompletedFlow.objects.create(digest="b" * 64, created=aged(90))

    output = prune()

    assert list(Era2025Session.objects.values_list("id", flat=True)) == ["live"]
    assert list(Era2025Call.objects.values_list("id", flat=True)) == ["fresh"]
    assert list(StreamEvent.objects.values_list("call_id", flat=True)) == ["fresh"]
    assert UrlElicitation.objects.count() == 1
    assert list(CompletedFlow.objects.values_list("digest", flat=True)) == ["a" * 64]
    assert "1 expired 2025-era session" in output
    assert "2 expired pending call" in output
    assert "1 URL-mode elicitation" in output
    assert "1 completed-flow record" in output


def test_nothing_to_prune_says_so():
    session("live", 10)
    assert "0 expired 2025-era sessions" in prune()
    assert Era2025Session.objects.count() == 1


def test_the_help_gives_a_cron_line():
    from mcpforms.management.commands.mcpforms_prune import Command

    assert "crontab" in Command.help and "manage.py mcpforms_prune" in Command.help


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

    out = io.StringIO()
    with override_settings(MCPFORMS={**SETTINGS, "OAUTH_DCR_UNUSED_DAYS": 2}):
        call_command("mcpforms_prune", stdout=out)

    assert sorted(Application.objects.values_list("name", flat=True)) == ["manual", "recent", "used"]
    assert AccessToken.objects.filter(scope="oauth2_provider:registration").count() == 0  # went with it
    assert "Deleted 1 never-used client registration" in out.getvalue()
