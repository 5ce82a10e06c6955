"""The write-once flow of a form tool: merge what is known, let the Django form judge, ask only for the rest.

``run`` takes one round in named steps, as Django's ``BaseForm.full_clean`` cleans a form (spec §6):

1. ``refuse_early``: what ends the round whatever the values say: the user declined or cancelled, or the
   form changed mid-flow and nobody can be asked to look at it again;
2. ``merge``: the arguments the model passed, the answers earlier rounds proved (the signed requestState)
   and the new answers, later ones winning;
3. ``bind``: the real Django form judges them;
4. ``decide``: valid (and confirmed, when the form asks always) → ``Ready``, and the caller runs its
   handler once; otherwise where the rest comes from: the URL-mode page (``NeedsPage``), the UI of an MCP
   Apps host (``Showing``), a form elicitation of just the missing and invalid fields (``Asking``), or
   nobody (``Refused``).

Nothing here writes: the flow only decides. Its caller turns the ``Outcome`` into a result in one place:
``serving.result_of`` for a tool, ``FormPrompt.get`` for a prompt. A new rule of a round (a wizard step
that asks one part of the form at a time) is a step of ``_Round``; a new way a round ends (a durable task)
is a new ``Outcome``, and one more case in each of those two places.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from django import forms
from django.utils.text import capfirst

from mcpforms.answers import MISSING, FormOutcome, accepted_value, input_response, validate_with_form
from mcpforms.fields import AutoFormField, form_fields
from mcpforms.protocol.context import RequestContext
from mcpforms.schema import OTHER_PATH_TYPES, form_input_request
from mcpforms.verdicts import Remembered, remember, remembered, verdict_key

# How a form gets filled, in one vocabulary. ``Ask``: when the user is asked. ``Way``: through what — the
# form UI of an MCP Apps host, a form elicitation, or the URL-mode page. ``Path``: the ways a tool allows,
# "auto" letting each request's client capabilities choose between the UI and a form elicitation.
Ask = Literal["missing", "always", "never"]
ASK_MODES: tuple[str, ...] = ("missing", "always", "never")
Way = Literal["app", "form", "url"]
Path = Literal["auto", "form", "url"]
PATHS: tuple[str, ...] = ("auto", "form", "url")
NON_FIELD = "__all__"
STALE_NOTE = "This form changed while it was being filled in; please check the answers again."
# What a model may pass as an argument for a field: JSON scalars, or a list of them for multi-selects.
_SCALARS = (str, int, float, bool)


@dataclass(frozen=True)
class FormFlow:
    """How one form is asked for: the form, the inputRequests key, the message and the ask policy."""

    form_class: type[forms.BaseForm]
    key: str
    message: str
    ask: Ask = "missing"
    form_kwargs: Callable[[RequestContext], Mapping[str, Any]] | None = None

    def kwargs_for(self, ctx: RequestContext, *, instance: Any = None) -> dict[str, Any]:
        """The keyword arguments the form is built with for this request (and the object it updates)."""
        kwargs = dict(self.form_kwargs(ctx)) if self.form_kwargs else {}
        if instance is not None:
            kwargs["instance"] = instance
        return kwargs


@dataclass(frozen=True)
class Ready:
    """The form is valid (and confirmed where that is required): run the handler with ``form``.

    ``values`` are what the form was bound to (JSON, as the requestState carries them): what a task keeps
    to bind the form again when staff decide, or a worker runs the handler.
    """

    form: forms.BaseForm
    values: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Asking:
    """Return ``result`` (input_required) to the client. ``values`` and ``pending`` are what its
    requestState carries: the values known so far (no passwords nor files) and the fields asked."""

    result: dict[str, Any]
    values: Mapping[str, Any] = field(default_factory=dict)
    pending: tuple[str, ...] = ()


@dataclass(frozen=True)
class Refused:
    """End the call with ``text`` as an ``isError`` result: the client cannot be asked what is missing,
    or the form cannot be filled this way.

    ``errors`` are Django's messages per field, for a UI that shows them next to the fields.
    """

    text: str
    errors: Mapping[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Declined:
    """The user declined (or cancelled) what was asked: end the call with ``text``; nothing ran."""

    action: Literal["decline", "cancel"]
    text: str


@dataclass(frozen=True)
class NeedsPage:
    """A password or file field is missing or invalid: only the URL-mode page can collect it (spec §7.3).

    ``values`` are the non-secret values known so far, to prefill the page.
    """

    values: dict[str, Any]
    #: Django's messages for what the page must collect; none when the page only confirms.
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class Showing:
    """Show the form UI of an MCP Apps host (spec §11.5), prefilled with ``values``; ``errors`` are Django's
    messages for the values the model passed, shown next to their fields."""

    fields: tuple[AutoFormField, ...]
    values: dict[str, Any]
    errors: dict[str, list[str]]


Outcome = Ready | Asking | Refused | Declined | NeedsPage | Showing


def run(
    flow: FormFlow,
    ctx: RequestContext,
    arguments: Any,
    *,
    instance: Any = None,
    confirm_label: str,
    app: bool = False,
) -> Outcome:
    """Take one round of the flow for ``flow.form_class``; ``confirm_label`` names the form in what the user
    and the model read ("the Signup form").

    With ``app`` the host renders the form UI: what is still needed is ``Showing`` rather than ``Asking``.
    """
    round_ = _Round(flow, ctx, instance=instance, label=confirm_label, app=app)
    if (refusal := round_.refuse_early()) is not None:
        return refusal
    merged = round_.merge(arguments)
    return round_.decide(merged, round_.bind(merged))


@dataclass(frozen=True)
class _Merged:
    """What a round knows once everything is merged, before the form judges it."""

    values: dict[str, Any]
    #: The part of ``values`` the model passed as arguments.
    given: dict[str, Any]
    #: The policy of this round: ``flow.ask``, but "always" for an update the model gave no changes for.
    ask: Ask
    #: Whether the user answered a form elicitation in this round.
    answered: bool

    @property
    def confirmed(self) -> bool:
        """Whether running now keeps the policy's promise: under "always", only on the user's answer."""
        return self.answered or self.ask != "always"


class _Round:
    """One round of a flow: the form as this request builds it, and who can be asked to fill it."""

    def __init__(self, flow: FormFlow, ctx: RequestContext, *, instance: Any, label: str, app: bool) -> None:
        self.flow, self.ctx, self.instance, self.label, self.app = flow, ctx, instance, label, app
        self.kwargs = flow.kwargs_for(ctx, instance=instance)
        self.fields = form_fields(flow.form_class, **self.kwargs)
        self.by_name = {auto.name: auto for auto in self.fields}
        self.askable = [auto for auto in self.fields if auto.type not in OTHER_PATH_TYPES]
        # Answers to an older version of the form are not answers to this one: start the form again.
        self.response = None if ctx.stale_state else input_response(ctx.input_responses, flow.key)
        self.can_ask = flow.ask != "never" and (app or ctx.supports_elicitation("form"))
        # The form changed mid-flow: the old answers do not count, and nothing runs before the user has seen
        # the new form, so a replayed final round of the old form asks again; it never submits.
        self.unseen = ctx.stale_state and flow.ask != "never"

    def refuse_early(self) -> Declined | Refused | None:
        """End the round before any value is read: the user said no, or nobody can see the changed form."""
        response = self.response
        if response is not None and response.action == "decline":
            return Declined("decline", f"The user declined to fill in {self.label}; nothing was submitted.")
        if response is not None and response.action == "cancel":
            return Declined("cancel", f"The user cancelled {self.label}; nothing was submitted.")
        if self.unseen and not self.can_ask:
            return Refused(f"{STALE_NOTE} Call the tool again; nothing was submitted.")
        return None

    def merge(self, arguments: Any) -> _Merged:
        """The values known so far: the object's current ones and the model's arguments in a first round,
        what earlier rounds proved in a later one, then this round's answer, which wins."""
        given = argument_values(arguments, self.by_name)
        # An update the model gave no changes for is the user's to make: show everything, as "always" does.
        updating_unchanged = self.instance is not None and not given and self.flow.ask == "missing"
        ask: Ask = "always" if updating_unchanged else self.flow.ask
        state = self.ctx.request_state
        if state is not None:
            # A later round: the state holds everything earlier rounds knew, the arguments and the object's
            # values included (the arguments are bound to it by their digest), less what the user cleared,
            # which the repeated arguments must not bring back.
            values = {name: value for name, value in state.answers.items() if name in self.by_name}
        else:
            # An update starts from the instance's current values (the unbound form's initial data).
            values = (_defaults(self.fields) if self.instance is not None else {}) | given
        content = self.response.content if self.response is not None else None
        if content is not None:
            self._take_answer(values, content)
        if not self.can_ask:
            # Nobody can be asked: a field the model left out takes the default its inputSchema declares, as
            # an HTML form would have submitted it prefilled. When the user is asked, they see it prefilled.
            values = _defaults(self.fields) | values
        return _Merged(values=values, given=given, ask=ask, answered=content is not None)

    def _take_answer(self, values: dict[str, Any], content: Mapping[str, Any]) -> None:
        # The user saw exactly the fields pending in the state (all askable ones when a client answers
        # without a state): their answer replaces what was there, and an omitted field was cleared.
        state = self.ctx.request_state
        asked = set(state.pending) if state is not None else {auto.name for auto in self.askable}
        for auto in self.askable:
            if auto.name not in asked:
                continue
            values.pop(auto.name, None)
            value = answer_value(auto, content.get(auto.name, MISSING))
            if value is not MISSING:
                values[auto.name] = value

    def bind(self, merged: _Merged) -> FormOutcome | Remembered:
        """Let the real Django form judge the values: it has the last word. A first round of a form built
        the same way every time may reuse what it said of the same values (``mcpforms.verdicts``)."""
        first = self.ctx.request_state is None and self.response is None and not self.ctx.stale_state
        key = verdict_key(self.flow.form_class, merged.values) if first and not self.kwargs else None
        if key is not None and (verdict := remembered(key)) is not None:
            return verdict
        judged = validate_with_form(self.flow.form_class, merged.values, **self.kwargs)
        if key is not None:
            remember(key, judged)
        return judged

    def decide(self, merged: _Merged, judged: FormOutcome | Remembered) -> Outcome:
        """Run when the form is valid and the policy is kept; otherwise find who can give the rest."""
        # Without a way to ask, valid arguments are enough: the tool works as a plain tool.
        if isinstance(judged, FormOutcome) and judged.is_valid and merged.confirmed and not self.unseen:
            return Ready(judged.form, merged.values)
        if judged.is_valid and not self.can_ask:
            return self._confirm_elsewhere(merged)
        return self._collect(merged, judged.errors)

    def _confirm_elsewhere(self, merged: _Merged) -> Outcome:
        # "always" promises that the user confirms before anything runs: the URL-mode page can still ask
        # them; with no way to ask at all, nothing runs.
        if self.ctx.supports_elicitation("url"):
            return NeedsPage(values=merged.values)
        return Refused(
            f"{capfirst(self.label)} needs the user's confirmation before it runs, and this client cannot "
            "ask the user (no form elicitation, no MCP Apps UI, no URL mode). Nothing was submitted."
        )

    def _collect(self, merged: _Merged, errors: dict[str, list[str]]) -> Outcome:
        """Where what is missing, invalid or unconfirmed comes from: the page, the UI, a form elicitation."""
        by_name = self.by_name
        problems = describe_problems(errors, by_name)
        on_page = any(name in by_name and by_name[name].page_only for name in errors)
        if on_page and self.flow.ask != "never":
            return NeedsPage(values=merged.values, problems=tuple(problems))
        if not self.can_ask:
            return Refused(
                f"Could not submit {self.label}; these fields are missing or invalid:\n- "
                + "\n- ".join(problems)
                + "\nPass valid values as arguments, or ask the user for them.",
                errors=errors,
            )
        if self.app:
            # Only what the model passed is judged out loud: an empty form is not a list of errors.
            judged = {name: messages for name, messages in errors.items() if name in merged.given}
            return Showing(fields=tuple(self.fields), values=merged.values, errors=judged)
        unaskable = [name for name in errors if name in by_name and by_name[name].type in OTHER_PATH_TYPES]
        if unaskable:
            kinds = ", ".join(f"{name} ({by_name[name].type})" for name in unaskable)
            return Refused(
                f"{capfirst(self.label)} needs {kinds}, which cannot be asked in a form elicitation: a "
                "hidden field must be passed as an argument.\n- " + "\n- ".join(problems)
            )
        return self._elicit(merged, errors)

    def _elicit(self, merged: _Merged, errors: dict[str, list[str]]) -> Outcome:
        """Ask for just the missing and invalid fields in a form elicitation, quoting Django's messages."""
        values = merged.values
        to_ask = _fields_to_ask(merged.ask, self.askable, errors, values, first_ask=not merged.answered)
        if self.unseen and not to_ask:
            to_ask = list(self.askable)  # everything is filled in: the user confirms the changed form
        # Only a form with nothing askable gets here: every field is a password, file or hidden.
        if not to_ask:
            return Refused(f"{capfirst(self.label)} has no field a form elicitation can ask.")
        asked_fields = [_with_default(auto, values.get(auto.name)) for auto in to_ask]
        # The state is readable by the client: passwords and files never go in.
        storable = {name: value for name, value in values.items() if not self.by_name[name].page_only}
        message = self._message(values, errors)
        pending = tuple(auto.name for auto in to_ask)
        request_state = self.ctx.mint_state(answers=storable, pending=pending)
        return Asking(
            form_input_request(asked_fields, key=self.flow.key, message=message, request_state=request_state),
            values=storable,
            pending=pending,
        )

    def _message(self, values: Mapping[str, Any], errors: Mapping[str, list[str]]) -> str:
        # An empty required field is asked for, not "corrected": only values someone gave are judged out loud.
        judged = {name: messages for name, messages in errors.items() if name in values or name == NON_FIELD}
        corrections = describe_problems(judged, self.by_name)
        message = self.flow.message
        if corrections:
            message = f"{message}\nPlease correct:\n- " + "\n- ".join(corrections)
        return f"{STALE_NOTE}\n{message}" if self.ctx.stale_state else message


def _defaults(fields: Sequence[AutoFormField]) -> dict[str, Any]:
    return {auto.name: auto.default for auto in fields if auto.default is not None}


def is_plain_json(value: Any) -> bool:
    return isinstance(value, _SCALARS) or (
        isinstance(value, list) and all(isinstance(item, _SCALARS) for item in value)
    )


def argument_values(arguments: Any, by_name: Mapping[str, AutoFormField]) -> dict[str, Any]:
    """Keep the model's arguments for known fields, as given: the Django form judges them, not us."""
    if not isinstance(arguments, dict):
        return {}
    values: dict[str, Any] = {}
    for name, value in arguments.items():
        auto = by_name.get(name)
        if auto is None or auto.page_only:  # secrets and files never come this way
            continue
        if is_plain_json(value):
            values[name] = value
    return values


def answer_value(auto: AutoFormField, raw: Any) -> Any:
    """The user's answer for one field: normalised when the schema allows it, else kept as sent when it is
    plain JSON, so the Django form can say what is wrong with it ("Enter a valid email address.") rather
    than "This field is required."; MISSING for anything else."""
    value = accepted_value(auto, raw)
    if value is not MISSING or raw is MISSING:
        return value
    return raw if is_plain_json(raw) else MISSING


def describe_problems(errors: Mapping[str, list[str]], by_name: Mapping[str, AutoFormField]) -> list[str]:
    """One line per problem, naming the field the way the user sees it and the way the model passes it."""
    return [
        f"{by_name[name].label} ({name}): {' '.join(messages)}" if name in by_name else " ".join(messages)
        for name, messages in errors.items()
    ]


def _fields_to_ask(
    ask: Ask,
    askable: Sequence[AutoFormField],
    errors: Mapping[str, list[str]],
    values: Mapping[str, Any],
    *,
    first_ask: bool,
) -> list[AutoFormField]:
    if ask == "always" and first_ask or NON_FIELD in errors:
        return list(askable)  # the user confirms everything, or fixes a combination of fields
    # The first time, show the whole form once: what is wrong plus the optional fields nobody filled.
    # After that, only what is still wrong, so the user is not walked through the form again.
    return [
        auto
        for auto in askable
        if auto.name in errors or (first_ask and not auto.required and auto.name not in values)
    ]


def _with_default(auto: AutoFormField, value: Any) -> AutoFormField:
    # The previous answer is offered as the default; form_schema drops it when it does not fit the type.
    return auto if value is None else replace(auto, default=value)
