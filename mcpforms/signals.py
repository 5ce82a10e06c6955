"""Django signals a project connects to: a form tool completed, the user declined, a submission stored,
staff decided an approval request.

Each is sent after the transaction that did the work commits (``transaction.on_commit``): a flow that
rolls back sends nothing, and a receiver never sees a row it could not read. A completed flow sends
``tool_completed`` once, whichever way it was filled (form elicitation in either era, the MCP Apps
submit tool, the URL-mode page); a retried last round, which gets the recorded outcome, sends nothing.

Every signal is sent with ``send_robust``: the work is committed by then, so a receiver that raises is
logged by Django (the ``django.dispatch`` logger) and never changes the tool's result.

The sender is the ``FormTool`` class of the tool. ``register(Form, ...)`` builds that class for you, and
an admin-defined form's class is rebuilt when staff edit it, so a receiver usually picks its tools by
``tool.name``; ``sender=MyFormTool`` works for a ``FormTool`` subclass registered as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from django import forms
from django.db import transaction
from django.dispatch import Signal

from mcpforms.fields import secret_names
from mcpforms.protocol.context import RequestContext
from mcpforms.tools import FormTool

if TYPE_CHECKING:
    from mcpforms.models import Submission, ToolTask

#: A form tool's handler ran and its transaction committed. Keyword arguments: ``tool`` (the
#: ``FormTool``), ``request`` (the call's ``RequestContext``), ``principal`` (``"user:<pk>"`` or
#: ``"anonymous"``), ``data`` (the form's cleaned data, password fields left out) and ``result`` (the
#: ``CallToolResult`` dict the client gets).
tool_completed = Signal()
#: The user declined or cancelled a form elicitation (or the URL-mode page's): nothing ran. Keyword
#: arguments: ``tool``, ``request``, ``principal`` and ``action`` (``"decline"`` or ``"cancel"``).
tool_declined = Signal()
#: An admin-defined form stored a ``Submission`` and its transaction committed. Keyword arguments:
#: ``tool``, ``request``, ``principal`` and ``submission``.
submission_stored = Signal()
#: Staff decided an approval request (``mcpforms.approvals``) and the decision committed. Keyword
#: arguments: ``tool``, ``task`` (the ``ToolTask``), ``decision`` (``"approved"``, ``"rejected"`` or
#: ``"amend"``), ``approver`` (the staff user) and ``reason`` (their reason or note, maybe empty). An
#: approval that ran the handler sends ``tool_completed`` too.
task_decided = Signal()

Declined = Literal["decline", "cancel"]


def _after_commit(
    signal: Signal, tool: FormTool, ctx: RequestContext, arguments: Callable[[], dict[str, Any]]
) -> None:
    """Send ``signal`` with ``arguments()`` once the open transaction commits (at once when none is)."""
    if not signal.has_listeners(type(tool)):
        return  # a signal nobody listens to costs nothing: not even its arguments are read

    def send() -> None:
        # Whatever goes wrong here comes after the commit: logged (robust), never the caller's problem.
        signal.send_robust(type(tool), tool=tool, request=ctx, principal=ctx.principal, **arguments())

    transaction.on_commit(send, robust=True)


def send_completed(tool: FormTool, ctx: RequestContext, form: forms.BaseForm, result: dict[str, Any]) -> None:
    """Send ``tool_completed`` once the handler's transaction commits."""

    def arguments() -> dict[str, Any]:
        # The one secrets rule of the default handler and of stored submissions (``AutoFormField.secret``).
        secret = secret_names(form)
        data = {name: value for name, value in form.cleaned_data.items() if name not in secret}
        return {"data": data, "result": result}

    _after_commit(tool_completed, tool, ctx, arguments)


def send_declined(tool: FormTool, ctx: RequestContext, action: Declined) -> None:
    """Send ``tool_declined`` (at once, unless a transaction is open: then after it commits)."""
    _after_commit(tool_declined, tool, ctx, lambda: {"action": action})


def send_stored(tool: FormTool, ctx: RequestContext, submission: Submission) -> None:
    """Send ``submission_stored`` once the submission's transaction commits."""
    _after_commit(submission_stored, tool, ctx, lambda: {"submission": submission})


def send_decided(tool: FormTool, task: ToolTask, decision: str, approver: Any, reason: str) -> None:
    """Send ``task_decided`` once the decision's transaction commits."""
    if not task_decided.has_listeners(type(tool)):
        return

    def send() -> None:
        task_decided.send_robust(
            type(tool), tool=tool, task=task, decision=decision, approver=approver, reason=reason
        )

    transaction.on_commit(send, robust=True)
