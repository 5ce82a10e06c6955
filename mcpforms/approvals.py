"""Staff decide an approval request: approve it (``handle`` runs, once), reject it, or send it back to the
requester for an amendment.

An approval request is a ``staff`` task (``ToolTask``) that a tool with ``approval`` made at the final
round of its form (``mcpforms.form_tasks``). Each decision locks the row for its whole transaction, so a
decision and the requester's ``tasks/cancel`` (a compare-and-set on the status, ``task_store.cancel_task``)
never both win, and two decisions of one request (a double click, two staff members) are one decision
and a refusal. A refusal is ``ApprovalRefused``, whose message the admin shows as it is.

Approving binds the tool's form again to what the task kept, for the requester (their permission, their
``get_form_kwargs``, the object an update changes as it is now), and judges it again: what was valid
when asked may not be now. The handler then runs in a savepoint, recorded as the flow's completion, so
that what it wrote rolls back alone when it raises, and the task's ``failed`` survives.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from django.db import DatabaseError, IntegrityError, connections, router, transaction
from django.db.models import F
from django.utils import timezone

import mcpforms.signals as signals
from mcpforms.conf import conf
from mcpforms.form_tasks import amendment_request, bound_form, problems, requester_gone
from mcpforms.models import CompletedFlow, ToolTask
from mcpforms.output import error_result, result_text, to_json
from mcpforms.protocol.errors import INTERNAL_ERROR, ToolError, unreachable_service
from mcpforms.running import Refusal, run_handler
from mcpforms.task_store import settle, turn_context
from mcpforms.tools import FormTool

logger = logging.getLogger(__name__)

Status = ToolTask.Status
Decision = ToolTask.Decision
INTERNAL = {"code": INTERNAL_ERROR, "message": "Internal error"}


class ApprovalRefused(Exception):
    """The decision was not taken: the message says why, for the approver to read."""


@dataclass(frozen=True)
class Decided:
    """What a decision did: the task as it is now, and a sentence for the approver. ``succeeded`` is False
    when the request ended in an error the requester will read (a rejection, a form no longer valid, a
    handler that failed)."""

    task: ToolTask
    message: str
    succeeded: bool = True


def fingerprint(task: ToolTask) -> str:
    """What the approver was shown of ``task``: a decision taken on a page that showed other values (the
    requester amended them meanwhile) is refused, rather than taken on values nobody looked at."""
    shown = json.dumps(task.arguments, sort_keys=True, default=str)
    return hashlib.sha256(shown.encode()).hexdigest()[:32]


def approve(tool: FormTool, row: ToolTask, approver: Any, *, seen: str | None = None) -> Decided:
    """Approve ``row``: run ``tool``'s handler on the form bound again for the requester; the task
    completes with its result (``isError`` when the form is no longer valid or the handler raised
    ``ToolError``), or fails with an internal error."""
    with _deciding(row):
        task = _locked(tool, row, approver, seen)
        status, outcome = _run(tool, task)
        if status == Status.FAILED:
            _finish(tool, task, Decision.APPROVED, approver, "", status=status, error=outcome)
            message = (
                f"Approved request #{task.pk}, but its handler failed; the error is in the server's log."
            )
            return Decided(task, message, succeeded=False)
        _finish(tool, task, Decision.APPROVED, approver, "", status=Status.COMPLETED, result=outcome)
    if outcome.get("isError"):
        text = result_text(outcome)
        return Decided(task, f"Approved request #{task.pk}, but it could not run: {text}", succeeded=False)
    return Decided(task, f"Approved request #{task.pk}: it ran, and the requester gets its result.")


def reject(
    tool: FormTool, row: ToolTask, approver: Any, reason: str = "", *, seen: str | None = None
) -> Decided:
    """Reject ``row``: the task completes with ``isError`` and the ``reason``, which the requester (and
    their model) read; nothing runs."""
    reason = _stored(reason)
    with _deciding(row):
        task = _locked(tool, row, approver, seen)
        text = f"Request #{task.pk} ({tool.get_title()}) was rejected; nothing was done."
        if reason:
            text += f" Reason: {reason}"
        _finish(
            tool,
            task,
            Decision.REJECTED,
            approver,
            reason,
            status=Status.COMPLETED,
            result=error_result(text),
        )
    return Decided(task, f"Rejected request #{task.pk}; the requester is told.", succeeded=False)


def amend(tool: FormTool, row: ToolTask, approver: Any, note: str, *, seen: str | None = None) -> Decided:
    """Send ``row`` back to its requester: the task asks them (``input_required``, under a key never
    issued before) for the tool's fields, prefilled with what they asked for, with ``note`` as the
    message; their valid answer puts it back in the queue for a decision."""
    note = _stored(note)
    if not note:
        raise ApprovalRefused("Say what should change: the note is what the requester reads.")
    with _deciding(row):
        task = _locked(tool, row, approver, seen)
        if (gone := requester_gone(task.user, task.principal)) is not None:
            raise ApprovalRefused(
                f"Request #{task.pk} cannot be sent back: nobody can answer it, the account that made it is "
                f"{gone}. Reject it to close it."
            )
        try:
            requests = amendment_request(tool, task, note)
        except ValueError:
            raise ApprovalRefused(
                f"Request #{task.pk} cannot be sent back: its form has no field the requester's client "
                "could be asked for."
            ) from None
        settle(task, task.turn, {"resultType": "input_required", "inputRequests": requests})
        _finish(tool, task, Decision.AMEND, approver, note, message="Sent back for an amendment")
        task.refresh_from_db()
    return Decided(task, f"Sent request #{task.pk} back to the requester with your note.")


def _stored(text: str) -> str:
    """An approver's reason or note as the task keeps it, stripped; a NUL character is refused, as Django's
    form fields refuse it: PostgreSQL stores none, in a text column or in JSON."""
    if "\x00" in text:
        raise ApprovalRefused(
            "Nothing was decided: the reason or note holds a null character, which cannot be stored. Remove "
            "it and decide again."
        )
    return text.strip()


# The request, locked and checked ------------------------------------------------------------------------


def why_not(tool: FormTool, task: ToolTask, approver: Any) -> str | None:
    """Why ``approver`` may not decide ``task`` now, or None when they may: what the admin says instead of
    showing its buttons, and what a decision refuses with."""
    if task.runner != ToolTask.Runner.STAFF or task.tool != tool.name:
        return f"Request #{task.pk} does not wait for an approval."
    if not tool.may_approve(approver, task):
        return f"You may not decide request #{task.pk}: {_who_may(tool)}."
    if task.user_id is not None and task.user_id == approver.pk and not conf.ALLOW_SELF_APPROVAL:
        return (
            f"You made request #{task.pk} yourself: someone else must decide it "
            "(MCPFORMS['ALLOW_SELF_APPROVAL'] is off)."
        )
    if task.status == Status.CANCELLED:
        return f"The requester cancelled request #{task.pk}; it can no longer be decided."
    if task.ended:
        by = f" by {task.decided_by}" if task.decided_by_id is not None else ""
        return f"Request #{task.pk} was decided already ({task.get_decision_display() or task.status}{by})."
    if task.status == Status.INPUT_REQUIRED:
        return f"Request #{task.pk} is waiting for the requester's amendment."
    if task.has_expired:
        return f"Request #{task.pk} has expired; it can no longer be decided."
    return None


@contextmanager
def _deciding(row: ToolTask) -> Iterator[None]:
    """The transaction of one decision on ``row``: refused with a sentence for the approver, never a 500,
    when another transaction holds the request (a colleague deciding it, the requester amending or
    cancelling it) and this one would have to wait for it."""
    try:
        with transaction.atomic():
            yield
    except DatabaseError as error:
        if not _busy(error):
            raise
        raise ApprovalRefused(
            f"Someone is deciding or changing request #{row.pk} right now: nothing was decided. Look at it "
            "again in a moment."
        ) from None


def _busy(error: DatabaseError) -> bool:
    """Whether ``error`` says another transaction holds the request: PostgreSQL refusing a locked row to
    NOWAIT (SQLSTATE 55P03), MySQL the same (3572) or after its lock wait (1205), SQLite's one write lock
    still held once the connection's busy timeout ran out."""
    cause = error.__cause__
    if "55P03" in (getattr(cause, "sqlstate", None), getattr(cause, "pgcode", None)):
        return True
    if (getattr(cause, "args", None) or (None,))[0] in (1205, 3572):
        return True
    return str(getattr(cause, "sqlite_errorname", "")).startswith(("SQLITE_BUSY", "SQLITE_LOCKED"))


def _locked(tool: FormTool, row: ToolTask, approver: Any, seen: str | None) -> ToolTask:
    """``row`` again, locked until the decision commits, once ``approver`` may decide it now. Another
    decision holding it is not waited for: it may be running a handler for minutes (``_deciding`` says
    so instead)."""
    features = connections[router.db_for_write(ToolTask)].features
    if features.has_select_for_update:
        rows = ToolTask.objects.select_for_update(nowait=features.has_select_for_update_nowait)
    else:
        # SQLite locks no rows. The decision's first statement writes the row instead, which takes the
        # database's one write lock for the whole decision: a second one waits here (its busy timeout)
        # rather than read the request as still waiting and run the handler a second time.
        ToolTask.objects.filter(pk=row.pk).update(updated=F("updated"))
        rows = ToolTask.objects.all()
    task = rows.filter(pk=row.pk).first()
    if task is None:
        raise ApprovalRefused(f"Request #{row.pk} no longer exists.")
    refusal = why_not(tool, task, approver)
    if refusal is not None:
        raise ApprovalRefused(refusal)
    if seen is not None and seen != fingerprint(task):
        raise ApprovalRefused(
            f"Request #{task.pk} changed since the page showed it (the requester amended it): look at it "
            "again."
        )
    return task


def _who_may(tool: FormTool) -> str:
    if isinstance(tool.approval, str):
        return f"it needs the {tool.approval!r} permission"
    return f"the {tool.name} tool's approval rule does not let you"


# Running the approved request ---------------------------------------------------------------------------


class _Recorded(Exception):
    """The flow of the task completed already (its handler ran): its recorded outcome is the result."""


def _run(tool: FormTool, task: ToolTask) -> tuple[str, dict[str, Any]]:
    """The form bound again for the requester and, when valid, the handler run once: ``completed`` and
    the CallToolResult, or ``failed`` and the JSON-RPC error, whose details only the log gets."""
    # The handler reads the call's arguments, as it would have in the request.
    ctx = replace(turn_context(task), arguments=dict(task.arguments.get("arguments") or {}))
    try:
        # A savepoint for all of it: what the form's validation or the handler wrote goes back when it
        # raises, and the transaction stays usable for the task's own status.
        with transaction.atomic():
            judged = bound_form(tool, ctx, task.arguments)
            if not judged.is_valid:
                return Status.COMPLETED, error_result(problems(tool, judged))
            if task.flow:
                try:
                    # The first statement of the savepoint, as in running.complete: a duplicate rolls
                    # back nothing else.
                    CompletedFlow.objects.create(digest=task.flow)
                except IntegrityError as duplicate:
                    raise _Recorded from duplicate
            result = to_json(run_handler(tool, ctx, judged.form, approved=True))
            if task.flow:
                CompletedFlow.keep_result(task.flow, result)
            return Status.COMPLETED, result
    except _Recorded:
        recorded = CompletedFlow.objects.filter(digest=task.flow).values_list("result", flat=True).first()
        if isinstance(recorded, dict):
            return Status.COMPLETED, recorded
        return Status.COMPLETED, error_result(f"Request #{task.pk} ran already; it was not run again.")
    except Refusal as refusal:
        return Status.COMPLETED, error_result(str(refusal))
    except ToolError as error:
        return Status.COMPLETED, error_result(str(error))
    except Exception as error:
        if unreachable_service(error) is not None:
            raise  # nothing is wrong with the request: the approver may try again
        logger.error("Approved request #%s of %s failed", task.pk, task.tool, exc_info=error)
        return Status.FAILED, dict(INTERNAL)


def _finish(
    tool: FormTool,
    task: ToolTask,
    decision: str,
    approver: Any,
    reason: str,
    *,
    status: str | None = None,
    result: dict[str, Any] | None = None,
    error: dict[str, Any] | None = None,
    message: str | None = None,
) -> None:
    """Write the decision (and, when it ends the task, its end) on the locked ``task``."""
    now = timezone.now()
    task.decision, task.decided_by, task.decided_at, task.reason = decision, approver, now, reason
    task.updated = now
    fields = ["decision", "decided_by", "decided_at", "reason", "updated"]
    if status is not None:
        task.status, task.outstanding = status, {}
        task.result, task.error = result, error
        fields += ["status", "outstanding", "result", "error"]
    if message is not None or status is not None:
        task.status_message = message if message is not None else task.get_decision_display().capitalize()
        fields.append("status_message")
    task.save(update_fields=fields)
    signals.send_decided(tool, task, decision, approver, reason)
