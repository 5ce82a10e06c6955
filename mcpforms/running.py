"""Running a ``FormTool``'s handler: who may, on which object, and exactly once per flow.

Every way a form gets filled ends here — a round of a call (``mcpforms.serving``), the URL-mode page, a
staff member's approval or a worker's turn (``mcpforms.form_tasks``): ``check_access`` decides whether the
caller may use the tool and finds the object an update changes, ``complete`` runs ``handle`` once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.db import IntegrityError, models, transaction

import mcpforms.signals as signals
from mcpforms.flow import FormFlow
from mcpforms.output import error_result, tool_result
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.errors import InsufficientScope
from mcpforms.tools import FormTool

logger = logging.getLogger(__name__)


class Refusal(Exception):
    """The call cannot go on: no permission, or no object to update. The text is for the model."""


def flow_of(tool: FormTool) -> FormFlow:
    return FormFlow(
        tool.form_class,
        key=tool.name,
        message=tool.get_message(),
        ask=tool.ask,
        form_kwargs=tool.get_form_kwargs,
    )


def check_access(tool: FormTool, ctx: RequestContext, arguments: Any) -> models.Model | None:
    """Check the permission and find the object an update changes; raise ``Refusal`` otherwise, and
    ``InsufficientScope`` (a 403 the client can step up from) for an access token without the tool's
    ``scope``."""
    if not tool.may_use(ctx):
        raise Refusal(f"Permission denied: {tool.name} needs the {tool.required_permission()!r} permission.")
    if missing := ctx.access.lacks(tool.required_scopes):
        raise InsufficientScope(f"the tool {tool.name!r}", tool.required_scopes, missing=missing)
    if not tool.update:
        return None
    key = arguments.get(tool.lookup) if isinstance(arguments, Mapping) else None
    if isinstance(key, bool) or not isinstance(key, str | int):
        raise Refusal(f"Pass the {tool.lookup} of the object to change as the {tool.lookup!r} argument.")
    queryset = tool.get_queryset(ctx)
    try:
        instance: models.Model = queryset.get(**{tool.lookup: key})
    except (queryset.model.DoesNotExist, ValidationError, ValueError, TypeError):
        raise Refusal(f"No {queryset.model._meta.verbose_name} with {tool.lookup} {key!r}.") from None
    return instance


def run_handler(
    tool: FormTool, ctx: RequestContext, form: forms.BaseForm, *, approved: bool = False
) -> dict[str, Any]:
    """Run the handler on a valid form; return the CallToolResult. ``tool_completed`` follows once the
    caller's transaction commits: every way of filling a form ends here, once per completed flow.

    The handler of a tool with ``approval`` runs only for a decision (``approved``, which only
    ``mcpforms.approvals`` passes): whatever path a call took, this is the one place every path to the
    handler passes, so the gate holds here too, should a path forget to make the approval request.
    """
    if tool.approval is not None and not approved:
        logger.error("%r needs approval: its handler was called outside an approval, and did not run", tool)
        return error_result(
            f"{form_label(tool).capitalize()} needs approval before it runs; nothing was run."
        )
    return handled(tool, ctx, form, tool.handle(ctx, form))


def handled(tool: FormTool, ctx: RequestContext, form: forms.BaseForm, value: Any) -> dict[str, Any]:
    """What the handler returned, ``value``, as the CallToolResult, with ``tool_completed`` to follow."""
    # Which fields a saved object shows is read from the form (its passwords): only for an object.
    fields = tool.get_result_fields(form) if isinstance(value, models.Model) else None
    result = tool_result(value, fields=fields)
    signals.send_completed(tool, ctx, form, result)
    return result


class _Recorded(Exception):
    """The flow being completed is recorded already: its transaction must end before the outcome is read."""


def complete(
    tool: FormTool,
    ctx: RequestContext,
    form: forms.BaseForm,
    *,
    run: Callable[[], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Run the handler once per flow: the flow is recorded, with the result, in the handler's own
    transaction. A client that retries the last round (it lost the response), or answers an earlier
    round of the same flow again, gets the recorded outcome; nothing runs twice. ``run`` stands for
    ``run_handler`` where the handler takes more than one form (a wizard's steps)."""
    from mcpforms.models import CompletedFlow  # models load after the app registry; this module before

    state = ctx.request_state
    try:
        with transaction.atomic():
            digest = None
            if state is not None:
                # The record is the block's first statement (a transaction, or a savepoint inside the
                # caller's): a duplicate rolls the block back with nothing else in it to undo, so the
                # record needs no savepoint of its own.
                try:
                    digest = CompletedFlow.record(state)
                except IntegrityError as duplicate:
                    raise _Recorded from duplicate
            result = run_handler(tool, ctx, form) if run is None else run()
            if digest is not None:
                CompletedFlow.keep_result(digest, result)
            return result
    except _Recorded:
        assert state is not None
        recorded = CompletedFlow.outcome_of(state)
        if recorded is not None:
            return recorded
        # Recorded by a transaction that has not committed yet: it is being submitted right now.
        return error_result(
            f"This {tool.get_title()} form is being submitted already; it was not submitted again."
        )


def form_label(tool: FormTool) -> str:
    return f"the {tool.get_title()} form"
