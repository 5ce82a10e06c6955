"""URLconf of the fault tests' servers: the demo's, plus ``held_write``, a form tool whose handler writes
its row and then, while the test's ``hold`` file exists, waits before returning (so before its
transaction commits). Each worker says which process it is by a ``holding-<pid>`` file, and every
``tool_completed`` signal appends a line to ``completed``: the test counts completions there.

Imported by the fault tests' server processes only (as their ROOT_URLCONF), never by the test run: the
tool lands on those processes' default server, not on the one the rest of the suite lists.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from django import forms
from django.conf import settings

import mcpforms
from mcpforms.models import Submission
from mcpforms.protocol import RequestContext
from mcpforms.signals import tool_completed
from project.urls import urlpatterns

TOOL = "held_write"  # tests/e2e/test_faults.py names it too
HOLD_LIMIT = 60.0  # seconds: a test that never releases its worker still ends


def _directory() -> Path:
    # The test's own setting, which django-stubs cannot know of.
    return Path(settings.FAULT_DIRECTORY)  # type: ignore[misc]


class HeldForm(forms.Form):
    note = forms.CharField(max_length=200)


@mcpforms.tool(HeldForm, description="Store the note; wait while the fault test holds this worker.")
def held_write(request: RequestContext, form: forms.Form) -> dict[str, Any]:
    note = form.cleaned_data["note"]
    Submission.objects.create(tool_name=TOOL, data={"note": note, "pid": os.getpid()})
    hold = _directory() / "hold"
    if hold.exists():
        (_directory() / f"holding-{os.getpid()}").write_text(note)
        deadline = time.monotonic() + HOLD_LIMIT
        while hold.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    return {"note": note, "pid": os.getpid()}


def _count_completion(sender: Any, *, tool: Any, data: dict[str, Any], **kwargs: Any) -> None:
    if tool.name == TOOL:
        # One short append per line: lines of concurrent workers do not interleave (O_APPEND).
        with (_directory() / "completed").open("a") as log:
            log.write(f"{data['note']}\t{os.getpid()}\n")


tool_completed.connect(_count_completion)

__all__ = ["urlpatterns"]
