"""Serving a ``FormTool``: one round of a call, on every way a form gets filled, and the handler run once.

The client's capabilities choose, per request, between the form UI of an MCP Apps host (spec §11.5), a
form elicitation, the URL-mode page (§7.3, for passwords, files and URL-only tools) and, when the client
can be asked nothing, an ``isError`` result naming each missing field (``ways.ways_to_fill``). Every way
ends in the same Django validation and the same ``FormTool.handle``, recorded so that a retried last
round cannot run it twice.

A round reads top to bottom: ``decide`` (the caller's access, a URL-mode page in progress, the page of a
URL-only tool, else one round of ``flow.run``) returns an outcome, and ``result_of`` turns it into the
CallToolResult: the one place where each outcome gets its result. A new rule of a round goes in ``flow``;
a new outcome (a durable task) gets its case in ``result_of``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from django import forms

import mcpforms.form_tasks as form_tasks
import mcpforms.signals as signals
import mcpforms.ui as ui
import mcpforms.url_mode as url_mode
from mcpforms.answers import input_response
from mcpforms.flow import Asking, Declined, NeedsPage, Outcome, Ready, Refused, Showing, Way, run
from mcpforms.output import error_result, to_json
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.primitives import Tool
from mcpforms.running import Refusal, check_access, complete, flow_of, form_label
from mcpforms.tools import FormTool
from mcpforms.ways import ways_to_fill


@dataclass(frozen=True)
class OnThePage:
    """The user was sent to the URL-mode page ``elicitation``: its outcome once submitted, else ask again.

    ``declined``: the user declined (or cancelled) opening it, which ends the call.
    """

    elicitation: str
    declined: signals.Declined | None = None


def tool_of(tool: FormTool) -> Tool:
    """What ``tools/list`` shows for ``tool``, and what ``tools/call`` runs."""
    return Tool(
        name=tool.name,
        title=tool.get_title(),
        description=tool.get_description(),
        input_schema=tool.input_schema,
        handler=partial(serve_call, tool),
        annotations=tool.tool_annotations,
        output_schema=tool.output_schema,
        meta=ui.tool_meta(tool.name) if tool.uses_app else None,
        state_version=None if tool.version is None else partial(_version, tool),
        visible=tool.may_use,
        task_turn=partial(form_tasks.task_turn, tool) if tool.makes_tasks else None,
    )


def submit_tool_of(tool: FormTool) -> Tool | None:
    """The app-only submit tool of ``tool``'s UI (spec §11.2), or None when it has no UI."""
    if not tool.uses_app:
        return None
    return Tool(
        name=ui.submit_name(tool.name),
        title=f"Submit {tool.get_title()}",
        description=f"Submit the {tool.get_title()} form from its UI, with the field values as arguments.",
        input_schema=tool.input_schema,
        handler=partial(serve_submit, tool),
        annotations=tool.tool_annotations,
        meta=ui.tool_meta(tool.name, app_only=True),
        visible=tool.may_use,
        offered=offered_to_apps,
    )


def offered_to_apps(ctx: RequestContext) -> bool:
    """An app-only submit tool exists for hosts that render the UI that calls it: a client that declared
    no MCP Apps support (in this request, or in its 2025-era session) neither lists nor calls it, and its
    model is not invited to, whoever the caller is."""
    return ui.supports_apps(ctx.client_capabilities)


def _version(tool: FormTool) -> str | None:
    return tool.version


def choose_way(ctx: RequestContext, tool: FormTool) -> Way | None:
    """How this request asks: the App UI, a form elicitation, the URL-mode page, or no way at all."""
    ways = ways_to_fill(tool, ctx.client_capabilities)
    return ways[0] if ways else None


def serve_call(tool: FormTool, ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """Run one round of a ``tools/call``."""
    return result_of(tool, ctx, decide(tool, ctx, arguments))


def serve_submit(tool: FormTool, ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """The app-only submit tool: validate the UI's values with the form and run the handler once.

    Errors come back as ``isError`` with Django's messages per field in ``structuredContent.errors``, so
    the UI shows each next to its input (spec §11.5 step 4).
    """
    return result_of(tool, ctx, judge_submitted(tool, ctx, arguments), from_ui=True)


def decide(tool: FormTool, ctx: RequestContext, arguments: Any) -> Outcome | OnThePage:
    """What this round of a ``tools/call`` comes to; nothing has run yet."""
    try:
        instance = check_access(tool, ctx, arguments)
    except Refusal as refusal:
        return Refused(str(refusal))
    waiting = url_mode.pending_page(ctx)
    if waiting is not None:
        return OnThePage(waiting, declined=_declined(tool, ctx))
    if tool.path == "url":
        return NeedsPage(values=_given(tool, ctx, arguments), problems=())
    app = choose_way(ctx, tool) == "app"
    return run(flow_of(tool), ctx, arguments, instance=instance, confirm_label=form_label(tool), app=app)


def judge_submitted(tool: FormTool, ctx: RequestContext, arguments: Any) -> Outcome:
    """What the values the user submitted from the tool's UI come to: ``Ready``, or ``Refused`` with
    Django's messages."""
    try:
        instance = check_access(tool, ctx, arguments)
    except Refusal as refusal:
        return Refused(str(refusal))
    # The user filled the form themselves: nothing is asked, the values are judged as they are.
    silent = replace(ctx, client_capabilities={}, input_responses=None, request_state=None)
    flow = replace(flow_of(tool), ask="never")
    return run(flow, silent, arguments, instance=instance, confirm_label=form_label(tool))


def result_of(
    tool: FormTool, ctx: RequestContext, outcome: Outcome | OnThePage, *, from_ui: bool = False
) -> dict[str, Any]:
    """The CallToolResult of a round's ``outcome``; ``from_ui`` when the values came from the tool's UI."""
    match outcome:
        case Ready(form=form) as ready if tool.makes_tasks and not from_ui:
            started = form_tasks.start(tool, ctx, ready)
            return complete(tool, ctx, form) if started is None else started
        case Ready(form=form):
            return complete(tool, ctx, form)
        case Asking(result=result):
            return result
        case Showing():
            return _show(tool, outcome)
        case NeedsPage(values=values, problems=problems):
            # The page's submit makes an approval request this client could not follow: refuse first.
            form_tasks.needs_tasks_for(tool, ctx)
            return url_mode.ask_page(ctx, tool=tool, values=values, problems=problems)
        case OnThePage(elicitation=elicitation, declined=None) if (
            tool.approval is not None
            and ctx.accepts_tasks
            and (task := form_tasks.page_task(elicitation)) is not None
        ):
            return task  # the page made the approval request: a client that follows tasks follows it
        case OnThePage(elicitation=elicitation, declined=declined):
            if declined is not None:  # resume_page ends the call on either
                signals.send_declined(tool, ctx, declined)
            return url_mode.resume_page(ctx, elicitation, tool=tool, declined=declined)
        case Declined(action=action, text=text):
            signals.send_declined(tool, ctx, action)
            return error_result(text)
        case Refused(text=text, errors=errors) if from_ui and errors:
            # The UI shows each of Django's messages next to its field.
            return error_result(text) | {"structuredContent": {"errors": dict(errors)}}
        case Refused(text=text):
            return error_result(text)


def read_ui(tool: FormTool, ctx: RequestContext, uri: str) -> dict[str, Any]:
    """The ``ui://`` resource: the form rendered by ``mcpforms/form.html`` as an MCP App (spec §11.3)."""
    form = tool.form_class(**flow_of(tool).kwargs_for(ctx))
    html = ui.render_form(
        form,
        title=tool.get_title(),
        description=tool.get_message(),
        mode="app",
        submit=ui.submit_name(tool.name),
    )
    return ui.read_result(uri, html)


def page_form(
    tool: FormTool, ctx: RequestContext, *, data: Any = None, files: Any = None, initial: Any = None
) -> forms.BaseForm:
    """The form of the URL-mode page, bound to the submitted ``data`` and ``files`` when given; raises
    ``Refusal`` when the object to update is gone."""
    kwargs = flow_of(tool).kwargs_for(ctx, instance=check_access(tool, ctx, ctx.arguments))
    if data is None:
        return tool.form_class(initial=initial, **kwargs)
    return tool.form_class(data=data, files=files, **kwargs)


def _declined(tool: FormTool, ctx: RequestContext) -> signals.Declined | None:
    """The user's decline or cancel of what this tool asked (its inputRequests key is its name)."""
    response = input_response(ctx.input_responses, tool.name)
    if response is None or response.action == "accept":
        return None
    return response.action


def _show(tool: FormTool, showing: Showing) -> dict[str, Any]:
    result = ui.display_form(
        list(showing.fields), tool.name, title=tool.get_title(), submit=ui.submit_name(tool.name)
    )
    # The UI prefills from these and shows the model's invalid values next to their fields.
    result["structuredContent"] |= {"values": to_json(showing.values), "errors": showing.errors}
    return result


def _given(tool: FormTool, ctx: RequestContext, arguments: Any) -> dict[str, Any]:
    if not isinstance(arguments, dict):
        return {}
    known = {auto.name for auto in tool.fields_for(ctx) if not auto.page_only}
    return {name: value for name, value in arguments.items() if name in known}
