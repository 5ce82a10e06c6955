"""Delete what mcpforms keeps past its lifetime, as ``clearsessions`` does for Django's sessions: expired
2025-era sessions and pending calls, URL-mode rows (wizards' page steps and their files among them),
completed-flow records, expired tasks (approval requests nobody decided in time among them) and
never-used OAuth client registrations. Run on a schedule, it takes over from the requests' occasional
``mcpforms.models.sweep``."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.apps import apps
from django.core.management.base import BaseCommand
from django.db import models, transaction
from django.utils import timezone

from mcpforms.conf import conf
from mcpforms.models import CleanupRun, CompletedFlow, Era2025Call, Era2025Session, ToolTask, UrlElicitation

CRON_LINE = "17 * * * *  cd /srv/site && python manage.py mcpforms_cleanup --verbosity 0"

# Each kind of expired row, as the report names it. Calls first: a session deleted later takes its calls
# with it, and those are counted as calls too.
_EXPIRING: list[tuple[str, Callable[[], models.QuerySet[Any]]]] = [
    ("expired pending calls", Era2025Call.expired),
    ("expired 2025-era sessions", Era2025Session.expired),
    ("URL-mode elicitations", UrlElicitation.expired),
    ("completed-flow records", CompletedFlow.expired),
    ("expired tasks", ToolTask.expired),
]


class Command(BaseCommand):
    help = (
        "Delete expired 2025-era sessions, pending calls (with their stream events), URL-mode elicitations, "
        "completed-flow records and tasks (past their ttlMs: nobody can poll or approve them), and, with "
        "django-oauth-toolkit, dynamically registered OAuth clients that got no token within "
        "MCPFORMS['OAUTH_DCR_UNUSED_DAYS'], and print how many. Run it on a "
        f"schedule, e.g. hourly from crontab: `{CRON_LINE}`; requests then stop deleting expired rows "
        "themselves for two days. With SESSION_STORE = CacheSessions the cache expires sessions and calls "
        "itself; the other rows are still in the database."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        deleted = {label: 0 for label, _ in _EXPIRING}
        labels = {expired().model._meta.label: label for label, expired in _EXPIRING}
        for _, expired in _EXPIRING:
            with transaction.atomic():
                _, by_model = expired().delete()
            # A session's calls go with it: they are counted as calls (stream events are not counted).
            for name, count in by_model.items():
                if name in labels:
                    deleted[labels[name]] += count
        if apps.is_installed("oauth2_provider"):
            deleted["never-used client registrations"] = _delete_unused_registrations()
        CleanupRun.record()
        for label, count in deleted.items():
            self.stdout.write(f"Deleted {count} {label}.")


def _delete_unused_registrations() -> int:
    """Dynamic registrations that got no token within ``OAUTH_DCR_UNUSED_DAYS`` (Claude registers twice
    per connect and signs in with one): nobody will sign in with them now. Their registration access
    tokens go with them."""
    from mcpforms.oauth.dcr import unused_registrations  # optional: mcpforms[oauth]

    horizon = timezone.now() - timedelta(days=conf.OAUTH_DCR_UNUSED_DAYS)
    stale = unused_registrations().filter(created__lt=horizon)
    with transaction.atomic():
        _, by_model = stale.delete()
    return by_model.get(stale.model._meta.label, 0)
