"""Delete what mcpforms keeps past its lifetime: expired 2025-era sessions and pending calls, URL-mode rows
and completed-flow records. Requests prune some of these now and then; a schedule prunes them all."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.apps import apps
from django.core.management.base import BaseCommand
from django.db import models, transaction
from django.utils import timezone

from mcpforms.conf import conf
from mcpforms.models import CompletedFlow, Era2025Call, Era2025Session, UrlElicitation

CRON_LINE = "17 * * * *  cd /srv/site && python manage.py mcpforms_prune --verbosity 0"


def _older_than(seconds: Callable[[], int]) -> Callable[[], Any]:
    return lambda: timezone.now() - timedelta(seconds=seconds())


# (what, model, horizon): each row older than its horizon can no longer be used by anyone.
_PRUNED: list[tuple[str, type[models.Model], Callable[[], Any]]] = [
    # A call nobody resumed within a requestState's lifetime cannot go on (its events go with it).
    ("expired pending calls", Era2025Call, _older_than(lambda: conf.STATE_MAX_AGE)),
    # A session answers 404 after SESSION_MAX_AGE; its client opens a new one (its calls go with it).
    ("expired 2025-era sessions", Era2025Session, _older_than(lambda: conf.SESSION_MAX_AGE)),
    # As mcpforms.url_mode.ask_page prunes them: a retry can no longer reach a row once both the page's
    # link and the requestState that names it have expired.
    (
        "URL-mode elicitations",
        UrlElicitation,
        _older_than(lambda: max(conf.STATE_MAX_AGE, conf.URL_MODE_MAX_AGE)),
    ),
    # Tokens older than STATE_MAX_AGE are refused before their flow's record is read.
    ("completed-flow records", CompletedFlow, _older_than(lambda: conf.STATE_MAX_AGE)),
]


class Command(BaseCommand):
    help = (
        "Delete expired 2025-era sessions, pending calls (with their stream events), URL-mode elicitations "
        "and completed-flow records, and, with django-oauth-toolkit, dynamically registered OAuth clients "
        "that got no token within MCPFORMS['OAUTH_DCR_UNUSED_DAYS'], and print how many. Run it on a "
        "schedule, e.g. hourly from "
        f"crontab: `{CRON_LINE}`. With SESSION_STORE = CacheSessions the cache expires sessions and calls "
        "itself; the other rows are still in the database."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        deleted = {label: 0 for label, _, _ in _PRUNED}
        labels = {model._meta.label: label for label, model, _ in _PRUNED}
        for _, model, horizon in _PRUNED:
            with transaction.atomic():
                _, by_model = model._default_manager.filter(created__lt=horizon()).delete()
            # A session's calls go with it: they are counted as calls (stream events are not counted).
            for name, count in by_model.items():
                if name in labels:
                    deleted[labels[name]] += count
        if apps.is_installed("oauth2_provider"):
            deleted["never-used client registrations"] = _prune_unused_registrations()
        for label, count in deleted.items():
            self.stdout.write(f"Deleted {count} {label}.")


def _prune_unused_registrations() -> int:
    """Dynamic registrations that got no token within ``OAUTH_DCR_UNUSED_DAYS`` (Claude registers twice
    per connect and signs in with one): nobody will sign in with them now. Their registration access
    tokens go with them."""
    from mcpforms.oauth.dcr import unused_registrations  # optional: mcpforms[oauth]

    horizon = timezone.now() - timedelta(days=conf.OAUTH_DCR_UNUSED_DAYS)
    stale = unused_registrations().filter(created__lt=horizon)
    with transaction.atomic():
        _, by_model = stale.delete()
    return by_model.get(stale.model._meta.label, 0)
