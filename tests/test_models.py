from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from mcpforms import models
from mcpforms.models import CompletedFlow
from mcpforms.protocol.state import dump_state, load_state

pytestmark = pytest.mark.django_db
BINDING: dict[str, Any] = {
    "server": "default",
    "tool": "tool:signup",
    "arguments": {},
    "principal": "anonymous",
}


def state():
    token = dump_state(**BINDING, answers={"email": "a@b.co"})
    return load_state(token, **BINDING)


def test_a_flow_is_recorded_once():
    finished = state()
    CompletedFlow.record(finished)
    with pytest.raises(IntegrityError), transaction.atomic():
        CompletedFlow.record(finished)
    CompletedFlow.record(state())  # another flow, same answers
    assert CompletedFlow.objects.count() == 2


def test_rows_older_than_a_token_can_live_are_pruned_now_and_then(monkeypatch):
    old = CompletedFlow.objects.create(digest="old", created=timezone.now() - timedelta(days=2))
    monkeypatch.setattr(models, "SWEEP_ONE_IN", 10**9)  # not this time
    CompletedFlow.record(state())
    assert CompletedFlow.objects.filter(pk=old.pk).exists()
    monkeypatch.setattr(models, "SWEEP_ONE_IN", 1)
    kept = CompletedFlow.record(state())  # the digest of the row it made
    assert (
        list(CompletedFlow.objects.order_by("pk")) != []
        and not CompletedFlow.objects.filter(pk=old.pk).exists()
    )
    assert CompletedFlow.objects.filter(digest=kept).exists()
