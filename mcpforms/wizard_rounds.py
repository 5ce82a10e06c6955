"""Serving a ``WizardTool``: one round of a call, which asks one step or runs the handler once.

Each round verifies the state, walks the steps in order (a step whose condition is false for the cleaned
data of the active steps before it is skipped), binds each active step to what is known of it (a finished
step to its answers from the signed requestState, the step being asked to the arguments, its earlier
answers and this round's), and asks the first step that is not valid: only its fields the arguments and
earlier answers do not already satisfy. When every active step is valid, all bound again in this round as
formtools' ``render_done`` revalidates them, the flow is recorded and ``handle`` runs once, in one
transaction (``running.complete``); a replayed round, the final one or an earlier one, gets the recorded
outcome, because the flow id is the wizard's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from django import forms
from django.forms.formsets import BaseFormSet

import mcpforms.signals as signals
import mcpforms.wizard_pages as wizard_pages
from mcpforms.answers import MISSING, InputResponse, input_response, validate_with_form
from mcpforms.fields import AutoFormField
from mcpforms.flow import (
    NON_FIELD,
    Asking,
    Declined,
    Refused,
    answer_value,
    argument_values,
    describe_problems,
)
from mcpforms.output import error_result
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.primitives import Tool
from mcpforms.protocol.state import RequestState
from mcpforms.running import Refusal, check_access, complete, handled
from mcpforms.schema import OTHER_PATH_TYPES, form_input_request
from mcpforms.wizard_formsets import describe_row_problems, describe_rows, validate_rows
from mcpforms.wizards import STARTED_OVER, WizardTool


def tool_of(tool: WizardTool) -> Tool:
    """What ``tools/list`` shows for the wizard, and what ``tools/call`` runs."""
    return Tool(
        name=tool.name,
        title=tool.get_title(),
        description=tool.get_description(),
        input_schema=tool.input_schema,
        handler=partial(serve_call, tool),
        annotations=tool.tool_annotations,
        output_schema=tool.output_schema,
        state_version=partial(_digest, tool),
        visible=tool.may_use,
    )


def _digest(tool: WizardTool) -> str:
    return tool.digest


@dataclass(frozen=True)
class Finished:
    """Every active step is valid: run the handler once with ``forms`` (by step, in order; a formset step's
    is its bound formset)."""

    forms: dict[str, Any]


@dataclass(frozen=True)
class Recorded:
    """The flow completed in an earlier request: its recorded ``result``, whatever round is replayed."""

    result: dict[str, Any]


WizardOutcome = Finished | Recorded | Asking | Refused | Declined


def serve_call(tool: WizardTool, ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """Run one round of a wizard's ``tools/call``."""
    return result_of(tool, ctx, decide(tool, ctx, arguments))


def decide(tool: WizardTool, ctx: RequestContext, arguments: Any) -> WizardOutcome:
    """What this round comes to; nothing has run yet."""
    label = f"the {tool.get_title()} form"
    try:
        check_access(tool, ctx, arguments)
    except Refusal as refusal:
        return Refused(str(refusal))
    state = ctx.request_state
    if state is not None and (recorded := recorded_outcome(state)) is not None:
        return Recorded(recorded)
    response = None if ctx.stale_state else input_response(ctx.input_responses, tool.name)
    if response is not None and response.action == "decline":
        return Declined("decline", f"The user declined to fill in {label}; nothing was submitted.")
    if response is not None and response.action == "cancel":
        return Declined("cancel", f"The user cancelled {label}; nothing was submitted.")
    return StepWalk(tool, ctx, arguments, response).run()


def result_of(tool: WizardTool, ctx: RequestContext, outcome: WizardOutcome) -> dict[str, Any]:
    """The CallToolResult of a round's ``outcome``."""
    match outcome:
        case Finished(forms=by_step):
            return complete(tool, ctx, _combined(by_step), run=partial(_run_handler, tool, ctx, by_step))
        case Recorded(result=result):
            return result
        case Asking(result=result):
            return result
        case Declined(action=action, text=text):
            wizard_pages.forget(tool, ctx)  # nothing of a declined flow is kept
            signals.send_declined(tool, ctx, action)
            return error_result(text)
        case Refused(text=text):
            return error_result(text)


def recorded_outcome(state: RequestState) -> dict[str, Any] | None:
    """The result of the flow ``state`` belongs to, once it completed; None before."""
    from mcpforms.models import CompletedFlow  # models load after the app registry; this module before

    return CompletedFlow.outcome_of(state)


def _run_handler(tool: WizardTool, ctx: RequestContext, by_step: dict[str, Any]) -> dict[str, Any]:
    value = tool.handle(ctx, list(by_step.values()), dict(by_step))
    wizard_pages.forget(tool, ctx)  # the passwords and files of its page steps, in the handler's transaction
    return handled(tool, ctx, _combined(by_step), value)


def _combined(by_step: Mapping[str, Any]) -> forms.BaseForm:
    """One form standing for all the steps, for what reads a completed form (``tool_completed``'s data);
    a formset step's rows are its cleaned data under the step's name."""
    steps = {step: form for step, form in by_step.items() if isinstance(form, forms.BaseForm)}
    combined = forms.Form()
    combined.fields = {name: f for form in steps.values() for name, f in form.fields.items()}
    combined.cleaned_data = {name: v for form in steps.values() for name, v in form.cleaned_data.items()}
    combined.cleaned_data |= {step: rows.cleaned_data for step, rows in by_step.items() if step not in steps}
    return combined


class StepWalk:
    """One round's walk through the steps: bind each active one to what is known, stop at the first that
    is not valid."""

    def __init__(
        self, tool: WizardTool, ctx: RequestContext, arguments: Any, response: InputResponse | None
    ) -> None:
        self.tool, self.ctx, self.arguments, self.response = tool, ctx, arguments, response
        state = ctx.request_state
        answers = state.answers if state is not None else {}
        # The step the state was asking; a name that is no step of the wizard (only a key holder could
        # sign one) asks nothing, and the walk goes on from the answers the state proves.
        first = state.pending[0] if state is not None and state.pending else None
        self.pending = first if first in tool.steps else None
        self.asked = set(state.pending[1:]) if state is not None else set()
        # What earlier rounds proved, by step; the pending step's entry is what is known of it so far.
        form_steps = [step for step in tool.steps if step not in tool.formsets]
        self.known = {s: dict(v) for s, v in answers.items() if s in form_steps and isinstance(v, dict)}
        # A formset step's answer is its list of rows (``mcpforms.wizard_formsets``).
        self.rows = {s: list(v) for s, v in answers.items() if s in tool.formsets and isinstance(v, list)}
        self.can_ask = ctx.supports_elicitation("form")

    def run(self) -> WizardOutcome:
        wizard_pages.keep_flow(self.tool, self.ctx)  # this round's requestState: the pages' rows last as long
        cleaned: dict[str, Any] = {}
        valid: dict[str, Any] = {}
        steps = list(self.tool.steps)
        active = 0
        for index, step in enumerate(steps):
            if not self.tool.is_active(self.ctx, step, cleaned):
                continue
            active += 1
            if step in self.tool.formsets:
                judged_rows = self._rows_step(step, k=active, n=self._at_most(active, steps[index + 1 :]))
                if not isinstance(judged_rows, BaseFormSet):
                    return judged_rows
                cleaned[step], valid[step] = judged_rows.cleaned_data, judged_rows
                continue
            fields = self.tool.step_fields(self.ctx, step)
            kept = wizard_pages.kept_step(self.tool, self.ctx, step, fields)
            if kept is not None and kept.is_valid:
                # Filled on the page: its values stay in the page's row, never in the requestState.
                cleaned[step], valid[step] = kept.cleaned_data, kept.form
                continue
            on_page = kept is not None  # submitted on the page, with answers that no longer validate
            values, answered = self._values(step, fields)
            kwargs = self.tool.form_kwargs_for(self.ctx, step)
            user_answers = step in self.tool.always_ask or self._shown_again(step)
            if kwargs.get("instance") is not None and step != self.pending and not self._finished(step):
                # A step changing an object starts from its current values, as an update does: a field
                # left out is kept, never cleared; a step the model gave no change for is the user's.
                user_answers |= not values and self.can_ask
                values = {a.name: a.default for a in fields if a.default is not None} | values
            judged = validate_with_form(self.tool.steps[step], values, **kwargs)
            # A step in always_ask is the user's to answer: arguments that fill it only prefill it.
            unconfirmed = user_answers and not answered and not self._finished(step)
            if judged.is_valid and not unconfirmed and not on_page:
                self.known[step] = values
                cleaned[step], valid[step] = judged.cleaned_data, judged.form
                continue
            at_most = self._at_most(active, steps[index + 1 :])
            if on_page or wizard_pages.needs_page(
                self.ctx, fields, judged.errors, unconfirmed=unconfirmed, can_ask=self.can_ask
            ):
                return wizard_pages.ask_step(
                    self.tool,
                    self.ctx,
                    step,
                    values=values,
                    errors=judged.errors,
                    kept=kept,
                    answers={**self.known, **self.rows},
                    k=active,
                    n=at_most,
                )
            return self._ask(
                step,
                fields,
                values,
                judged.errors,
                answered=answered,
                confirm=unconfirmed,
                k=active,
                n=at_most,
            )
        return Finished(valid)

    def _at_most(self, active: int, later: list[str]) -> int:
        return active + sum(1 for step in later if self.tool.condition_dict.get(step) is not False)

    def _finished(self, step: str) -> bool:
        """Whether an earlier round validated ``step`` (the signed state carries its answers)."""
        return (step in self.known or step in self.rows) and step != self.pending

    def _rows_step(self, step: str, *, k: int, n: int) -> BaseFormSet[Any] | WizardOutcome:
        """A formset step: its bound, valid formset, or what this round does instead of going on."""
        rows, answered = self._rows(step)
        judged = None
        if rows is not None:
            kwargs = self.tool.form_kwargs_for(self.ctx, step)
            judged = validate_rows(self.tool.formsets[step], rows, prefix=step, **kwargs)
        user_answers = step in self.tool.always_ask or self._shown_again(step)
        unconfirmed = user_answers and not answered and not self._finished(step)
        if judged is not None and judged.is_valid and not unconfirmed:
            self.rows[step] = rows
            return judged.formset
        return self._ask_rows(step, rows, judged.errors if judged else {}, answered=answered, k=k, n=n)

    def _rows(self, step: str) -> tuple[Any, bool]:
        """What is known of a formset step's rows (None: nothing yet), and whether the user just sent them."""
        if step in self.rows and step != self.pending:
            return self.rows[step], False
        return (self.arguments.get(step) if isinstance(self.arguments, dict) else None), False

    def _ask_rows(
        self, step: str, rows: Any, errors: dict[str, list[str]], *, answered: bool, k: int, n: int
    ) -> WizardOutcome:
        """No form elicitation can ask for a list of rows: say how the model can pass them instead."""
        fields = self.tool.step_fields(self.ctx, step)
        text = (
            f"Step {step!r} ({self.tool.get_step_title(step)}) of the {self.tool.get_title()} form is a list "
            "of rows, which a form elicitation cannot ask. Pass "
            f"`{step}` as a list of objects with {describe_rows(fields)}, or use a client that renders MCP "
            "Apps. Nothing was submitted."
        )
        if errors:
            problems = describe_row_problems(errors, prefix=step, fields=fields)
            text += f"\nThe `{step}` passed is not valid:\n- " + "\n- ".join(problems)
        return Refused(text)

    def _shown_again(self, step: str) -> bool:
        """Whether ``step`` is shown although it is valid: never here; the App's walk shows again a step the
        user saw before going back (``mcpforms.wizard_app``)."""
        return False

    def _values(self, step: str, fields: list[AutoFormField]) -> tuple[dict[str, Any], bool]:
        by_name = {auto.name: auto for auto in fields}
        if step != self.pending and step in self.known:
            return {n: v for n, v in self.known[step].items() if n in by_name}, False  # a finished step
        values = argument_values(self.arguments, by_name)
        if step == self.pending:
            values |= {n: v for n, v in self.known.get(step, {}).items() if n in by_name}
            response = self.response
            if response is not None and response.content is not None:
                for auto in fields:
                    if auto.name in self.asked and auto.type not in OTHER_PATH_TYPES:
                        values.pop(auto.name, None)  # the user saw it: an omitted one was cleared
                        value = answer_value(auto, response.content.get(auto.name, MISSING))
                        if value is not MISSING:
                            values[auto.name] = value
                return values, True
        if not self.can_ask:
            # Nobody can be asked: a left-out field takes its declared default, as a prefilled form would.
            values = {a.name: a.default for a in fields if a.default is not None} | values
        return values, False

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
        by_name = {auto.name: auto for auto in fields}
        title = self.tool.get_step_title(step)
        problems = describe_problems(errors, by_name)
        if confirm and not errors and not self.can_ask:
            return Refused(
                f"Step {step!r} ({title}) of the {self.tool.get_title()} form is answered by the user "
                "themselves, and this client cannot ask the user (it declared no form elicitation). Nothing "
                "was submitted."
            )
        if not self.can_ask:
            return Refused(
                f"Could not submit step {step!r} ({title}) of the {self.tool.get_title()} form; these fields "
                "are missing or invalid:\n- " + "\n- ".join(problems) + "\nPass valid values as arguments, "
                "or ask the user for them."
            )
        askable = [auto for auto in fields if auto.type not in OTHER_PATH_TYPES]
        if hidden := [name for name in errors if name in by_name and by_name[name].type in OTHER_PATH_TYPES]:
            return Refused(
                f"Step {step!r} needs {', '.join(hidden)} (hidden), which must be passed as an argument.\n- "
                + "\n- ".join(problems)
            )
        first_ask = step != self.pending or not answered
        if NON_FIELD in errors or confirm:
            to_ask = askable
        else:
            to_ask = [
                auto
                for auto in askable
                if auto.name in errors or (first_ask and not auto.required and auto.name not in values)
            ]
        message = f"Step {k} of at most {n}: {title}"
        judged = {name: m for name, m in errors.items() if name in values or name == NON_FIELD}
        if judged:
            message += "\nPlease correct:\n- " + "\n- ".join(describe_problems(judged, by_name))
        if self.ctx.stale_state:
            message = f"{STARTED_OVER}\n{message}"
        pending = (step, *(auto.name for auto in to_ask))
        state = self.ctx.mint_state(answers={**self.known, **self.rows, step: values}, pending=pending)
        asked = [
            auto if values.get(auto.name) is None else replace(auto, default=values[auto.name])
            for auto in to_ask
        ]
        return Asking(form_input_request(asked, key=self.tool.name, message=message, request_state=state))
