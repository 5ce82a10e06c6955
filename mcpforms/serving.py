"""Serving a ``FormTool``: one round of a call, on every way a form gets filled, and the handler run once.

The client's capabilities choose, per request, between the form UI of an MCP Apps host (spec §11.5), a
form elicitation, the URL-mode page (§7.3, for passwords, files and URL-only tools) and, when the client
can be asked nothing, an ``isError`` result naming each missing field. Every way ends in the same Django
validation and the same ``FormTool.handle``, recorded so that a retried last round cannot run it twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.db import IntegrityError, models, transaction

from mcpforms import signals, ui, url_mode
from mcpforms.answers import input_response
from mcpforms.flow import Asking, FormFlow, NeedsPage, Outcome, Ready, Refused, Showing, Way, run
from mcpforms.output import error_result, to_json, tool_result
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.errors import InsufficientScope
from mcpforms.protocol.primitives import Tool
from mcpforms.tools import FormTool


class Refusal(Exception):
    """The call cannot go on: no permission, or no object to update. The text is for the model."""


def tool_of(tool: FormTool) -> Tool:
    """What ``tools/list`` shows for ``tool``, and what ``tools/call`` runs."""
    return Tool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=tool.input_schema,
        handler=partial(serve_call, tool),
        annotations=tool.tool_annotations,
        output_schema=tool.output_schema,
        meta=ui.tool_meta(tool.name) if tool.uses_app else None,
        state_version=None if tool.version is None else partial(_version, tool),
        visible=tool.may_use,
    )


def submit_tool_of(tool: FormTool) -> Tool | None:
    """The app-only submit tool of ``tool``'s UI (spec §11.2), or None when it has no UI."""
    if not tool.uses_app:
        return None
    return Tool(
        name=ui.submit_name(tool.name),
        title=f"Submit {tool.title}",
        description=f"Submit the {tool.title} form from its UI, with the field values as arguments.",
        input_schema=tool.input_schema,
        handler=partial(serve_submit, tool),
        annotations=tool.tool_annotations,
        meta=ui.tool_meta(tool.name, app_only=True),
        visible=partial(submit_visible, tool),
    )


def submit_visible(tool: FormTool, ctx: RequestContext) -> bool:
    """An app-only submit tool exists for hosts that render the UI that calls it: a client that declared
    no MCP Apps support (in this request, or in its 2025-era session) neither lists nor calls it, and its
    model is not invited to."""
    return ui.supports_apps(ctx.client_capabilities) and tool.may_use(ctx)


def _version(tool: FormTool) -> str | None:
    return tool.version


def flow_of(tool: FormTool) -> FormFlow:
    return FormFlow(
        tool.form_class, key=tool.name, message=tool.message, ask=tool.ask, form_kwargs=tool.get_form_kwargs
    )


def choose_way(ctx: RequestContext, tool: FormTool) -> Way | None:
    """How this request asks: the App UI, a form elicitation, or no way at all (spec §11.5)."""
    if tool.uses_app and ui.supports_apps(ctx.client_capabilities):
        return "app"
    if ctx.supports_elicitation("form"):
        return "form"
    return None


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


def serve_call(tool: FormTool, ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """Run one round of a ``tools/call``."""
    try:
        instance = check_access(tool, ctx, arguments)
    except Refusal as refusal:
        return error_result(str(refusal))
    waiting = url_mode.pending_page(ctx)
    if waiting is not None:
        if (action := _declined(tool, ctx)) is not None:  # resume_page ends the call on either
            signals.send_declined(tool, ctx, action)
        return url_mode.resume_page(ctx, waiting, tool=tool)
    if tool.path == "url":
        return url_mode.ask_page(ctx, tool=tool, values=_given(tool, ctx, arguments), problems=())
    way = choose_way(ctx, tool)
    outcome = run(
        flow_of(tool), ctx, arguments, instance=instance, confirm_label=_label(tool), app=way == "app"
    )
    if isinstance(outcome, NeedsPage):
        return url_mode.ask_page(ctx, tool=tool, values=outcome.values, problems=outcome.problems)
    if isinstance(outcome, Showing):
        return _show(tool, outcome)
    return _finish(tool, ctx, outcome)


def serve_submit(tool: FormTool, ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """The app-only submit tool: validate the UI's values with the form and run the handler once.

    Errors come back as ``isError`` with Django's messages per field in ``structuredContent.errors``, so
    the UI shows each next to its input (spec §11.5 step 4).
    """
    try:
        instance = check_access(tool, ctx, arguments)
    except Refusal as refusal:
        return error_result(str(refusal))
    # The user filled the form themselves: nothing is asked, the values are judged as they are.
    silent = replace(ctx, client_capabilities={}, input_responses=None, request_state=None)
    flow = replace(flow_of(tool), ask="never")
    outcome = run(flow, silent, arguments, instance=instance, confirm_label=_label(tool))
    if isinstance(outcome, Refused):
        result = error_result(outcome.text)
        result["structuredContent"] = {"errors": dict(outcome.errors)}
        return result
    if isinstance(outcome, Ready):
        return complete(tool, ctx, outcome.form)
    return error_result(f"The {tool.title} form could not be submitted from its UI.")


def read_ui(tool: FormTool, ctx: RequestContext, uri: str) -> dict[str, Any]:
    """The ``ui://`` resource: the form rendered by ``mcpforms/form.html`` as an MCP App (spec §11.3)."""
    form = tool.form_class(**flow_of(tool).kwargs_for(ctx))
    html = ui.render_form(
        form, title=tool.title, description=tool.message, mode="app", submit=ui.submit_name(tool.name)
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


def run_handler(tool: FormTool, ctx: RequestContext, form: forms.BaseForm) -> dict[str, Any]:
    """Run the handler on a valid form; return the CallToolResult. ``tool_completed`` follows once the
    caller's transaction commits: every way of filling a form ends here, once per completed flow."""
    result = tool_result(tool.handle(ctx, form))
    signals.send_completed(tool, ctx, form, result)
    return result


class _Recorded(Exception):
    """The flow being completed is recorded already: its transaction must end before the outcome is read."""


def complete(tool: FormTool, ctx: RequestContext, form: forms.BaseForm) -> dict[str, Any]:
    """Run the handler once per flow: the flow is recorded, with the result, in the handler's own
    transaction. A client that retries the last round (it lost the response), or answers an earlier
    round of the same flow again, gets the recorded outcome; nothing runs twice."""
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
            result = run_handler(tool, ctx, form)
            if digest is not None:
                CompletedFlow.keep_result(digest, result)
            return result
    except _Recorded:
        assert state is not None
        recorded = CompletedFlow.outcome_of(state)
        if recorded is not None:
            return recorded
        # Recorded by a transaction that has not committed yet: it is being submitted right now.
        return error_result(f"This {tool.title} form is being submitted already; it was not submitted again.")


def _finish(tool: FormTool, ctx: RequestContext, outcome: Outcome) -> dict[str, Any]:
    if isinstance(outcome, Asking):
        return outcome.result
    if isinstance(outcome, Refused):
        # flow.run reads the answer first, unless the form changed mid-flow: then a decline is no answer.
        if not ctx.stale_state and (action := _declined(tool, ctx)) is not None:
            signals.send_declined(tool, ctx, action)
        return error_result(outcome.text)
    assert isinstance(outcome, Ready)
    return complete(tool, ctx, outcome.form)


def _declined(tool: FormTool, ctx: RequestContext) -> signals.Declined | None:
    """The user's decline or cancel of what this tool asked (its inputRequests key is its name)."""
    response = input_response(ctx.input_responses, tool.name)
    if response is None or response.action == "accept":
        return None
    return response.action


def _show(tool: FormTool, showing: Showing) -> dict[str, Any]:
    result = ui.display_form(
        list(showing.fields), tool.name, title=tool.title, submit=ui.submit_name(tool.name)
    )
    # The UI prefills from these and shows the model's invalid values next to their fields.
    result["structuredContent"] |= {"values": to_json(showing.values), "errors": showing.errors}
    return result


def _label(tool: FormTool) -> str:
    return f"the {tool.title} form"


def _given(tool: FormTool, ctx: RequestContext, arguments: Any) -> dict[str, Any]:
    if not isinstance(arguments, dict):
        return {}
    known = {auto.name for auto in tool.fields_for(ctx) if not auto.page_only}
    return {name: value for name, value in arguments.items() if name in known}
