"""A ``WizardTool`` in an MCP Apps host: the App shows one step at a time, with Back, and Next submits it.

The host that declared MCP Apps (and any other client ``ways.ways_to_fill`` sends to the App, as for a
``FormTool``) gets the wizard's call answered with the step to show as the form UI (spec §11.5): the
step's fields, values and errors, a ``step`` object ("Step k of at most N") and a signed state. Every step
of the wizard is in the ``ui://`` page (``read_ui``), which shows the one the server names. The App's Next
and Back call the app-only submit tool (``ui.submit_name``) with the shown step's values and that state
(``ui.STEP_STATE``; ``ui.STEP_BACK`` for Back); the answer is the next step, the one before, the step's
errors (``isError``, shown next to its fields), or the wizard's result.

The walk is the elicitation rounds' (``wizard_rounds.StepWalk``): conditions, revalidation of every
active step, and the handler run once per flow (a replayed submit gets the recorded outcome) stay on the
server. What differs: the user answers the step the App shows, in full; a step they saw before going back is
shown again on the way forward, prefilled (a step the model's arguments satisfy is still not asked).

The state is a requestState (``protocol.state``: signed, readable, ``STATE_MAX_AGE``, ``MAX_ROUNDS``,
``MAX_STATE_BYTES``) bound to the server, the principal, the wizard's digest and the binding
``app:<tool>``, which no call's own requestState has; it is not bound to arguments, since each submit
carries another step's values. ``answers`` holds each step's values (the model's arguments for the steps
ahead among them), ``pending`` the step shown, then every step the user has seen.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any

from django import forms

import mcpforms.ui as ui
import mcpforms.wizard_rounds as wizard_rounds
from mcpforms.fields import AutoFormField
from mcpforms.flow import NON_FIELD, Asking, Refused, argument_values, describe_problems
from mcpforms.output import error_result, to_json
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.errors import ToolError, invalid_state
from mcpforms.protocol.primitives import Tool
from mcpforms.protocol.state import InvalidState, StaleState, load_state
from mcpforms.running import Refusal, check_access
from mcpforms.schema import OTHER_PATH_TYPES
from mcpforms.serving import choose_way, offered_to_apps
from mcpforms.wizard_formsets import describe_row_problems
from mcpforms.wizard_rounds import Recorded, WizardOutcome
from mcpforms.wizards import STARTED_OVER, WizardTool


def tool_of(tool: WizardTool) -> Tool:
    """What ``tools/list`` shows for the wizard and what ``tools/call`` runs: its rounds, linked to its App
    for the hosts that render it."""
    rounds = wizard_rounds.tool_of(tool)
    if not tool.uses_app:
        return rounds
    return replace(rounds, handler=partial(serve_call, tool), meta=ui.tool_meta(tool.name))


def submit_tool_of(tool: WizardTool) -> Tool | None:
    """The app-only tool the App's Next and Back call (spec §11.2), or None when the wizard has no App."""
    if not tool.uses_app:
        return None
    schema = tool.input_schema
    return Tool(
        name=ui.submit_name(tool.name),
        title=f"Submit {tool.get_title()}",
        description=(
            f"Submit the shown step of the {tool.get_title()} form from its UI: the step's values and the "
            f"state it was shown with ({ui.STEP_STATE}); {ui.STEP_BACK} goes back a step instead."
        ),
        input_schema={
            **schema,
            "properties": {
                **schema.get("properties", {}),
                ui.STEP_STATE: {"type": "string", "description": "The state the step was shown with."},
                ui.STEP_BACK: {"type": "boolean", "description": "Go back to the step before instead."},
            },
            "required": [ui.STEP_STATE],
        },
        handler=partial(serve_submit, tool),
        annotations=tool.tool_annotations,
        meta=ui.tool_meta(tool.name, app_only=True),
        visible=tool.may_use,
        offered=offered_to_apps,
    )


def serve_call(tool: WizardTool, ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """A call of the wizard: on the App for a client ``ways.ways_to_fill`` sends there, else its rounds."""
    if choose_way(ctx, tool) != "app":
        return wizard_rounds.serve_call(tool, ctx, arguments)
    try:
        check_access(tool, ctx, arguments)
    except Refusal as refusal:
        return result_of(tool, ctx, Refused(str(refusal)))
    # A call starts a flow of the App's own: whatever state the call echoed is not the App's.
    fresh = replace(ctx, request_state=None, stale_state=False, input_responses=None)
    return result_of(tool, fresh, _AppWalk(tool, fresh, arguments).run())


def serve_submit(tool: WizardTool, ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """The App's Next (or Back): verify the state, then walk the steps with the shown one's values."""
    submitted = submitted_context(tool, ctx, arguments)
    return result_of(tool, submitted, decide_submit(tool, submitted, arguments))


def submitted_context(tool: WizardTool, ctx: RequestContext, arguments: Any) -> RequestContext:
    """``ctx`` with the App's state verified as a requestState is (-32602 when it is tampered, expired or
    another's; a wizard changed since, ``stale_state``: it starts over)."""
    token = arguments.get(ui.STEP_STATE) if isinstance(arguments, dict) else None
    if token is None:
        raise ToolError(
            f"{ui.STEP_STATE} is missing: pass the state of the step the {tool.get_title()} form showed "
            "(its structuredContent has it). Nothing was submitted."
        )
    try:
        state = load_state(
            token,
            server=ctx.server,
            tool=_binding(tool),
            arguments={},
            principal=ctx.principal,
            version=tool.digest,
        )
    except StaleState:
        return replace(ctx, request_state=None, stale_state=True, input_responses=None)
    except InvalidState:
        raise invalid_state() from None
    return replace(ctx, request_state=state, stale_state=False, input_responses=None)


def decide_submit(tool: WizardTool, ctx: RequestContext, arguments: dict[str, Any]) -> WizardOutcome:
    """What the App's submit comes to; nothing has run yet."""
    try:
        check_access(tool, ctx, arguments)
    except Refusal as refusal:
        return Refused(str(refusal))
    state = ctx.request_state
    if state is None:  # the wizard changed since the step was shown: from the first step, with nothing
        return _AppWalk(tool, ctx, {}).run()
    if (recorded := wizard_rounds.recorded_outcome(state)) is not None:
        return Recorded(recorded)
    values = {name: value for name, value in arguments.items() if name not in (ui.STEP_STATE, ui.STEP_BACK)}
    return _AppWalk(tool, ctx, values, back=arguments.get(ui.STEP_BACK) is True).run()


def result_of(tool: WizardTool, ctx: RequestContext, outcome: WizardOutcome) -> dict[str, Any]:
    """The CallToolResult of the App's ``outcome``: a step to show is ``Asking`` its result, as a round
    asking the next step is."""
    match outcome:
        case Refused(text=text, errors=errors) if errors:
            # The App shows each of Django's messages next to its field.
            return error_result(text) | {"structuredContent": {"errors": dict(errors)}}
        case _:
            return wizard_rounds.result_of(tool, ctx, outcome)


def read_ui(tool: WizardTool, ctx: RequestContext, uri: str) -> dict[str, Any]:
    """The ``ui://`` resource: every step that may be asked, one shown at a time (spec §11.3)."""
    steps = [
        ui.FormStep(step, tool.get_step_title(step), _unbound(tool, ctx, step))
        for step in tool.steps
        if tool.condition_dict.get(step) is not False
    ]
    first = steps[0].form
    html = ui.render_form(
        first if isinstance(first, forms.BaseForm) else forms.Form(),  # the page's form-wide parts
        title=tool.get_title(),
        description=tool.get_message(),
        mode="app",
        submit=ui.submit_name(tool.name),
        steps=steps,
    )
    return ui.read_result(uri, html)


def _unbound(tool: WizardTool, ctx: RequestContext, step: str) -> Any:
    """``step``'s form as the page first shows it; a formset under the step's name, as formtools binds it."""
    kwargs = tool.form_kwargs_for(ctx, step)
    if step in tool.formsets:
        return tool.formsets[step](prefix=step, **kwargs)
    return tool.steps[step](**kwargs)


def _binding(tool: WizardTool) -> str:
    """What the App's states are bound to: no tool, prompt or resource binding starts so."""
    return f"app:{tool.name}"


def _heading(k: int, at_most: int, title: str) -> str:
    return f"Step {k} of at most {at_most}: {title}"


class _AppWalk(wizard_rounds.StepWalk):
    """The rounds' walk, with the App showing the step: the submitted step's values are all the user's,
    a step seen before is shown again on the way forward, and Back shows the active step before."""

    def __init__(self, tool: WizardTool, ctx: RequestContext, arguments: Any, *, back: bool = False) -> None:
        super().__init__(tool, ctx, arguments, None)
        state = ctx.request_state
        self.order = {step: index for index, step in enumerate(tool.steps)}
        self.seen = {step for step in state.pending[1:] if step in self.order} if state is not None else set()
        self.can_ask = True  # the App asks the user whatever is missing
        self.back = back
        # The active steps in the order the walk reached them: Back goes to the one before the shown one.
        self.visited: list[str] = []

    def _finished(self, step: str) -> bool:
        """The user went past ``step``: it comes before the one the App showed."""
        return self.pending is not None and self.order[step] < self.order[self.pending]

    def _shown_again(self, step: str) -> bool:
        return step in self.seen or (self.back and step == self.pending)

    def _values(self, step: str, fields: list[AutoFormField]) -> tuple[dict[str, Any], bool]:
        self.visited.append(step)
        if step != self.pending:
            return super()._values(step, fields)
        # The App showed every field of the step but hidden ones: what it sent replaces what was known,
        # and a field it left out was cleared.
        by_name = {auto.name: auto for auto in fields}
        values = {name: value for name, value in self.known.get(step, {}).items() if name in by_name}
        sent = argument_values(self.arguments, by_name)
        for auto in fields:
            if auto.type not in OTHER_PATH_TYPES:
                values.pop(auto.name, None)
                if auto.name in sent:
                    values[auto.name] = sent[auto.name]
        return values, not self.back

    def _rows(self, step: str) -> tuple[Any, bool]:
        self.visited.append(step)
        if step != self.pending:
            return super()._rows(step)
        sent = self.arguments.get(step) if isinstance(self.arguments, dict) else None
        return (sent if sent is not None else []), not self.back  # the App sends every row it shows

    def _ask_rows(
        self, step: str, rows: Any, errors: dict[str, list[str]], *, answered: bool, k: int, n: int
    ) -> WizardOutcome:
        fields = self.tool.step_fields(self.ctx, step)
        if answered and errors:  # the rows the user submitted are invalid: they correct them where they are
            problems = describe_row_problems(errors, prefix=step, fields=fields)
            return self._correct(step, problems, errors, k=k, n=n)
        if isinstance(rows, list):
            self.rows[step] = rows  # what was given (or typed before Back), shown again
        return self._ask(step, fields, {}, errors, answered=False, confirm=False, k=k, n=n)

    def _ask(
        self,
        step: str,
        fields: list[AutoFormField],
        values: dict[str, Any],
        errors: dict[str, list[str]],
        *,
        answered: bool,
        confirm: bool,
        k: int,
        n: int,
    ) -> WizardOutcome:
        if answered:  # the step the user submitted is invalid: they correct it where it is
            problems = describe_problems(errors, {auto.name: auto for auto in fields})
            return self._correct(step, problems, errors, k=k, n=n)
        if self.back and step == self.pending:
            self.known[step] = values  # not valid perhaps, but what the user typed: kept for their return
            if len(self.visited) > 1:
                earlier = self.visited[-2]
                k -= 1
                values = self.known.get(earlier, {})
                fields = self.tool.step_fields(self.ctx, earlier)
                step, errors = earlier, {}
            n = k + sum(1 for later in list(self.tool.steps)[self.order[step] + 1 :] if self._may_come(later))
        return self._show(step, fields, values, errors, k=k, n=n)

    def _correct(
        self, step: str, problems: list[str], errors: dict[str, list[str]], *, k: int, n: int
    ) -> Refused:
        """The shown step stays, with Django's ``errors`` for the App to put next to their inputs."""
        heading = _heading(k, n, self.tool.get_step_title(step))
        return Refused(f"{heading}\nPlease correct:\n- " + "\n- ".join(problems), errors=errors)

    def _may_come(self, step: str) -> bool:
        return self.tool.condition_dict.get(step) is not False

    def _show(
        self,
        step: str,
        fields: list[AutoFormField],
        values: dict[str, Any],
        errors: dict[str, list[str]],
        *,
        k: int,
        n: int,
    ) -> Asking:
        """The step as the App shows it: its fields, values and errors, where it is in the wizard, and the
        state its Next or Back sends back; the text is for the model."""
        tool, title = self.tool, self.tool.get_step_title(step)
        rows = step in tool.formsets
        shown = self.rows.get(step, []) if rows else values
        answers = {**self._ahead(), **self.known, **self.rows, step: shown}
        seen = sorted(self.seen | {step}, key=self.order.__getitem__)
        minting = replace(self.ctx, binding=_binding(tool), arguments={}, state_version=tool.digest)
        state = minting.mint_state(answers=answers, pending=(step, *seen))
        heading = _heading(k, n, title)
        result = ui.display_form(
            fields,
            tool.name,
            title=f"{tool.get_title()}, {heading[0].lower()}{heading[1:]}",
            submit=ui.submit_name(tool.name),
        )
        result["structuredContent"] |= {
            "title": tool.get_title(),
            "values": {step: to_json(shown)} if rows else to_json(values),
            # Only what someone gave is judged out loud: an empty step is not a list of errors.
            "errors": (
                dict(errors)
                if rows
                else {name: m for name, m in errors.items() if name in values or name == NON_FIELD}
            ),
            "step": {"name": step, "title": title, "k": k, "at_most": n, "can_go_back": k > 1},
            ui.STEP_STATE: state,
        }
        if self.ctx.stale_state:
            result["structuredContent"]["notice"] = STARTED_OVER
        return Asking(result)

    def _ahead(self) -> dict[str, Any]:
        """On the call, the model's arguments for the steps not reached yet: they prefill (or satisfy)
        those steps when the user gets there. Later submits carry only the shown step's values."""
        if self.ctx.request_state is not None or not self.arguments:
            return {}
        ahead: dict[str, Any] = {}
        for step in self.tool.steps:
            if step in self.tool.formsets:
                if isinstance(rows := self.arguments.get(step), list):
                    ahead[step] = rows
                continue
            by_name = {auto.name: auto for auto in self.tool.step_fields(self.ctx, step)}
            if given := argument_values(self.arguments, by_name):
                ahead[step] = given
        return ahead
