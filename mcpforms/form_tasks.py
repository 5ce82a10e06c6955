"""A ``FormTool`` call as a durable task: an approval request that waits for staff, or a handler that runs
in the background (the tasks extension, ``mcpforms.task_store``).

The form is gathered and validated by the usual rounds (``mcpforms.flow``); at its final round, instead of
running ``handle``, ``start`` makes the task, keeping what the form was bound to. Later, outside any
request, the form is bound again from what the task kept, for the requester, and judged again before
``handle`` runs: in a worker (``task_turn``), or when staff approve (``mcpforms.approvals``).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from django import forms

from mcpforms.answers import FormOutcome, validate_with_form
from mcpforms.flow import Asking, Ready, run
from mcpforms.models import CompletedFlow, ToolTask
from mcpforms.output import error_result, to_json
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.errors import ToolError
from mcpforms.protocol.state import ANONYMOUS, RequestState
from mcpforms.protocol.tasks import Ask, Wait, tasks_required
from mcpforms.running import Refusal, check_access, flow_of, form_label, handled
from mcpforms.task_store import finishing, flow_digest, made_for, start_task, turn_context
from mcpforms.tools import FormTool

WAITING_FOR_APPROVAL = "Waiting for approval"
QUEUED = "Queued"


def _part(kept: Mapping[str, Any], name: str) -> dict[str, Any]:
    """``kept[name]`` (the arguments or the values a task kept), as a dict: {} for anything else."""
    part = kept.get(name)
    return dict(part) if isinstance(part, Mapping) else {}


def stored(tool: FormTool, ctx: RequestContext, ready: Ready) -> dict[str, Any]:
    """What a task keeps of its call: the arguments the tool declares (the form's fields, an update's
    lookup) and the values the form was bound to, as JSON. A task lives for days (``TASK_TTL``) and is
    shown to approvers: a client must not make the server keep what no handler reads."""
    arguments = ctx.arguments if isinstance(ctx.arguments, Mapping) else {}
    declared = {*ready.form.fields, *([tool.lookup] if tool.update else [])}
    kept = {name: value for name, value in arguments.items() if name in declared}
    return {"arguments": to_json(kept), "values": to_json(dict(ready.values))}


def start(tool: FormTool, ctx: RequestContext, ready: Ready) -> dict[str, Any] | None:
    """The final round of a flow whose tool makes tasks: its CreateTaskResult for a client that follows
    tasks, or what another client is told. None: run the handler now, as for any tool (a background tool
    called by a client that cannot follow a task)."""
    state = ctx.request_state
    flow = flow_digest(state) if state is not None else None
    if state is not None and (recorded := CompletedFlow.outcome_of(state)) is not None:
        return recorded  # the flow completed already, in the request: its replay is not a second run
    if tool.approval is not None:
        return _ask_for_approval(tool, ctx, ready, flow)
    if not ctx.accepts_tasks:
        existing = ToolTask.objects.filter(flow=flow).first() if flow is not None else None
        return None if existing is None else _told(existing)
    started = start_task(
        ctx,
        tool=tool.name,
        arguments=stored(tool, ctx, ready),
        status_message=QUEUED,
        ttl=tool.task_ttl,
        flow=flow,
    )
    return started.created_result()


def page_flow(elicitation: str) -> str:
    """The ``flow`` of the task a URL-mode page's submit makes: one per page row, whose link works once."""
    return hashlib.sha256(f"mcpforms.url_mode.page\n{elicitation}".encode()).hexdigest()


def start_from_page(
    tool: FormTool, ctx: RequestContext, form: forms.BaseForm, *, elicitation: str
) -> dict[str, Any]:
    """The URL-mode page's submit of a tool with ``approval``: the approval request, made of the valid
    form's values, and what the requester is told (the page acts in no MCP request, so never a task to
    follow). The handler runs when staff approve, as for a call whose final round was an answer."""
    values = {name: to_json(value) for name, value in form.cleaned_data.items() if name in form.fields}
    return _ask_for_approval(tool, ctx, Ready(form, values), page_flow(elicitation))


def page_task(elicitation: str) -> dict[str, Any] | None:
    """The CreateTaskResult of the approval request the page ``elicitation`` made, for a retry of the call
    by a client that follows tasks; None while the page is not submitted."""
    started = made_for(page_flow(elicitation))
    return None if started is None else started.created_result()


def needs_tasks_for(tool: FormTool, ctx: RequestContext) -> None:
    """Raise -32021 when ``ctx``'s client cannot follow the task ``tool`` would make and the tool wants
    only clients that can (``approval_requires_tasks``): before anyone is asked anything."""
    if tool.approval is not None and tool.approval_requires_tasks and not ctx.accepts_tasks:
        raise tasks_required(f"the tool {tool.name!r}, whose calls wait for approval")


def _ask_for_approval(tool: FormTool, ctx: RequestContext, ready: Ready, flow: str | None) -> dict[str, Any]:
    needs_tasks_for(tool, ctx)
    started = start_task(
        ctx,
        tool=tool.name,
        arguments=stored(tool, ctx, ready),
        runner=ToolTask.Runner.STAFF,
        status_message=WAITING_FOR_APPROVAL,
        ttl=tool.task_ttl,
        flow=flow,
    )
    return started.created_result() if ctx.accepts_tasks else _told(started.row)


def _told(row: ToolTask) -> dict[str, Any]:
    """What a client that cannot follow a task hears of it: which request it is, and where it stands."""
    if row.runner == ToolTask.Runner.STAFF and not row.ended:
        text = (
            f"Sent for approval as request #{row.pk}; nothing has run yet. The user will be told when it is "
            "decided."
        )
    elif row.status == ToolTask.Status.COMPLETED and isinstance(row.result, dict):
        return row.result
    else:
        text = f"Request #{row.pk} is {row.get_status_display()}."
    return {"content": [{"type": "text", "text": text}]}


def requester_gone(user: Any, principal: str) -> str | None:
    """How the account that made a task is gone since — ``"deactivated"`` or ``"deleted"`` — or None when
    it is not (or nobody signed in made it). Nothing runs for it then: its tokens, sessions and OAuth grants
    stopped working too."""
    if principal == ANONYMOUS:
        return None
    if user is None:
        return "deleted"
    return None if getattr(user, "is_active", True) else "deactivated"


def _gone_refusal(ctx: RequestContext) -> Refusal | None:
    gone = requester_gone(ctx.user, ctx.principal)
    if gone == "deleted":
        return Refusal("The account that made this request no longer exists: nothing was run.")
    if gone == "deactivated":
        name = ctx.user.get_username()
        return Refusal(f"The account that made this request, {name}, has been deactivated: nothing was run.")
    return None


def bound_form(tool: FormTool, ctx: RequestContext, kept: Mapping[str, Any]) -> FormOutcome:
    """The tool's form bound again to what a task ``kept``, for the requester of ``ctx``, and judged anew:
    the object an update changes may be gone, a unique value taken, a choice withdrawn. Raises
    ``Refusal`` when the requester's account is gone (deactivated or deleted), may no longer use the tool,
    or the object is gone."""
    if (refusal := _gone_refusal(ctx)) is not None:
        raise refusal
    instance = check_access(tool, ctx, _part(kept, "arguments"))
    kwargs = flow_of(tool).kwargs_for(ctx, instance=instance)
    return validate_with_form(tool.form_class, _part(kept, "values"), **kwargs)


def problems(tool: FormTool, judged: FormOutcome) -> str:
    """Django's messages on a form bound again, for the requester (and the model) to read."""
    lines = [f"{name}: {' '.join(messages)}" for name, messages in judged.errors.items()]
    return f"{form_label(tool).capitalize()} is no longer valid:\n- " + "\n- ".join(lines)


def task_turn(tool: FormTool, ctx: RequestContext, kept: dict[str, Any]) -> dict[str, Any] | Ask | Wait:
    """The core ``Tool.task_turn`` of a tool that makes tasks: the answers to an amendment of an approval
    request, or the background run of its handler."""
    if tool.approval is not None:
        return _amended(tool, ctx, kept)
    try:
        judged = bound_form(tool, ctx, kept)
    except Refusal as refusal:
        raise ToolError(str(refusal)) from None
    if not judged.is_valid:
        raise ToolError(problems(tool, judged))
    with finishing(ctx) as complete:
        value = tool.handle(ctx, judged.form)
        if _asks(value):
            # The handler asks the user mid-task, before it writes anything: the task is input_required,
            # and the handler runs again with the answers in ``request.input_responses``.
            return Ask(value["inputRequests"])
        result = handled(tool, ctx, judged.form, value)
        complete(result)
    return result


def _asks(value: Any) -> bool:
    return (
        isinstance(value, Mapping)
        and value.get("resultType") == "input_required"
        and isinstance(value.get("inputRequests"), Mapping)
        and bool(value["inputRequests"])
    )


# Amendments --------------------------------------------------------------------------------------------


def _amending(ctx: RequestContext, tool: FormTool, kept: Mapping[str, Any]) -> RequestContext:
    """A round of the tool's flow that starts from what the task kept, with every field pending: the flow
    then judges an amendment exactly as it judges any answer, and asks again the same way."""
    fields = tool.fields_for(ctx)
    state = RequestState(
        tool=ctx.binding,
        principal=ctx.principal,
        issued_at=int(time.time()),
        server=ctx.server,
        flow="amendment",
        answers=_part(kept, "values"),
        # What the last amendment round asked; every field the first time.
        pending=tuple(kept.get("pending") or (auto.name for auto in fields if not auto.page_only)),
    )
    return replace(ctx, request_state=state, client_capabilities={"elicitation": {"form": {}}})


def amendment_request(tool: FormTool, row: ToolTask, note: str) -> dict[str, Any]:
    """The input requests (by the tool's own key) that send ``row`` back to its requester: every field,
    prefilled with what they asked for, under the approver's ``note``."""
    ctx = replace(_amending(turn_context(row), tool, row.arguments), input_responses=None)
    flow = replace(flow_of(tool), ask="always", message=note or tool.get_message())
    outcome = run(flow, ctx, _part(row.arguments, "arguments"), confirm_label=form_label(tool))
    if not isinstance(outcome, Asking):
        raise ValueError(f"{tool.name}: the form has no field a form elicitation can ask")
    requests: dict[str, Any] = outcome.result["inputRequests"]
    return requests


def _amended(tool: FormTool, ctx: RequestContext, kept: dict[str, Any]) -> dict[str, Any] | Ask | Wait:
    """Judge the requester's answer to an amendment: asked again (with Django's messages) while it is
    invalid; once valid, the request waits for a decision again, with the amended values."""
    amending = _amending(ctx, tool, kept)
    outcome = run(flow_of(tool), amending, _part(kept, "arguments"), confirm_label=form_label(tool))
    match outcome:
        case Ready():
            amended = {"arguments": _part(kept, "arguments"), "values": to_json(dict(outcome.values))}
            return Wait(f"{WAITING_FOR_APPROVAL} (amended)", arguments=amended)
        case Asking(result=result, values=values, pending=pending):
            # Asked again for what is still wrong: what the answer got right is kept for the next one.
            so_far = {
                "arguments": _part(kept, "arguments"),
                "values": to_json(dict(values)),
                "pending": pending,
            }
            return Ask(result["inputRequests"], arguments=so_far)
        case _:
            text = getattr(outcome, "text", f"{form_label(tool).capitalize()} was not amended.")
            return error_result(text)
