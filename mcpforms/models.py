"""What mcpforms keeps in the database."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

from django.db import models
from django.utils import timezone

from mcpforms.conf import conf
from mcpforms.state import RequestState


class CompletedFlow(models.Model):
    """A form flow whose handler ran: the digest of its final requestState, so a retried last round cannot
    run the handler a second time. Rows outlive their token's max age by nothing: older ones are pruned."""

    digest = models.CharField(max_length=64, unique=True)
    created = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        verbose_name = "completed flow"

    def __str__(self) -> str:
        return self.digest

    @classmethod
    def record(cls, state: RequestState) -> CompletedFlow:
        """Record the flow ``state`` finishes; raises IntegrityError when it was already recorded."""
        identity = [state.tool, state.principal, state.issued_at, state.answers, state.pending, state.version]
        digest = hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()
        # Tokens older than STATE_MAX_AGE are refused before they get here, so their rows can go.
        cls.objects.filter(created__lt=timezone.now() - timedelta(seconds=conf.STATE_MAX_AGE)).delete()
        return cls.objects.create(digest=digest)

