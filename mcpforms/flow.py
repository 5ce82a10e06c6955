"""The write-once flow of a form tool: merge what is known, let the Django form judge, ask only for the rest.

Every round runs the same steps (spec §6, the seeds' "write-once handler"):

1. merge the arguments the model passed, the answers earlier rounds proved (the signed requestState) and the
   new answers, later ones winning;
2. bind them to the real Django form;
3. valid (and confirmed, when the form asks always) → ``Ready``; the caller runs its handler once;
   otherwise → ``Ask`` for just the missing and invalid fields, quoting Django's messages, or ``Refused``
   when the user declined or the client cannot be asked.

Nothing here writes: the flow only decides. Transport and tool plumbing stay with the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from django import forms

from mcpforms.answers import MISSING, accepted_value, input_response, validate_with_form
from mcpforms.fields import AutoFormField, form_fields
from mcpforms.protocol.context import RequestContext
from mcpforms.schema import OTHER_PATH_TYPES, form_input_request

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
    """The form is valid (and confirmed where that is required): run the handler with ``form``."""

    form: forms.BaseForm


@dataclass(frozen=True)
class Asking:
    """Return ``result`` (input_required) to the client."""

    result: dict[str, Any]


@dataclass(frozen=True)
class Refused:
    """End the call with ``text`` as an ``isError`` result: declined, cancelled, or not askable.

    ``errors`` are Django's messages per field, for a UI that shows them next to the fields.
    """

    text: str
    errors: Mapping[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class NeedsPage:
    """A password or file field is missing or invalid: only the URL-mode page can collect it (spec §7.3).

    ``values`` are the non-secret values known so far, to prefill the page.
    """

    values: dict[str, Any]
    problems: tuple[str, ...]


@dataclass(frozen=True)
class Showing:
    """Show the form UI of an MCP Apps host (spec §11.5), prefilled with ``values``; ``errors`` are Django's
    messages for the values the model passed, shown next to their fields."""

    fields: tuple[AutoFormField, ...]
    values: dict[str, Any]
    errors: dict[str, list[str]]


Outcome = Ready | Asking | Refused | NeedsPage | Showing


def _is_plain_json(value: Any) -> bool:
    return isinstance(value, _SCALARS) or (
        isinstance(value, list) and all(isinstance(item, _SCALARS) for item in value)
    )


def _argument_values(arguments: Any, by_name: Mapping[str, AutoFormField]) -> dict[str, Any]:
    """Keep the model's arguments for known fields, as given: the Django form judges them, not us."""
    if not isinstance(arguments, dict):
        return {}
    values: dict[str, Any] = {}
    for name, value in arguments.items():
        field = by_name.get(name)
        if field is None or field.page_only:  # secrets and files never come this way
            continue
        if _is_plain_json(value):
            values[name] = value
    return values


def _answer_value(field: AutoFormField, raw: Any) -> Any:
    """The user's answer for one field: normalised when the schema allows it, else kept as sent when it is
    plain JSON, so the Django form can say what is wrong with it ("Enter a valid email address.") rather
    than "This field is required."; MISSING for anything else."""
    value = accepted_value(field, raw)
    if value is not MISSING or raw is MISSING:
        return value
    return raw if _is_plain_json(raw) else MISSING


def _describe(errors: Mapping[str, list[str]], by_name: Mapping[str, AutoFormField]) -> list[str]:
    """One line per problem, naming the field the way the user sees it and the way the model passes it."""
    return [
        f"{by_name[name].label} ({name}): {' '.join(messages)}" if name in by_name else " ".join(messages)
        for name, messages in errors.items()
    ]


def run(
    flow: FormFlow,
    ctx: RequestContext,
    arguments: Any,
    *,
    instance: Any = None,
    confirm_label: str = "the form",
    app: bool = False,
) -> Outcome:
    """Take one round of the flow for ``flow.form_class``.

    With ``app`` the host renders the form UI: what is still needed is ``Showing`` rather than ``Asking``.
    """
    kwargs = flow.kwargs_for(ctx, instance=instance)
    fields = form_fields(flow.form_class, **kwargs)
    by_name = {field.name: field for field in fields}
    askable = [field for field in fields if field.type not in OTHER_PATH_TYPES]

    # Answers to an older version of the form are not answers to this one: start the form again.
    response = None if ctx.stale_state else input_response(ctx.input_responses, flow.key)
    if response is not None and response.action == "decline":
        return Refused(f"The user declined to fill in {confirm_label}; nothing was submitted.")
    if response is not None and response.action == "cancel":
        return Refused(f"The user cancelled {confirm_label}; nothing was submitted.")

    # An update starts from the instance's current values (the unbound form's initial data).
    values: dict[str, Any] = (
        {field.name: field.default for field in fields if field.default is not None}
        if instance is not None
        else {}
    )
    given = _argument_values(arguments, by_name)
    values |= given
    # An update the model gave no changes for is the user's to make: show everything, as ask="always" does.
    ask = "always" if instance is not None and not given and flow.ask == "missing" else flow.ask
    # The form changed mid-flow: the old answers do not count, and nothing runs before the user has seen
    # the new form, so a replayed final round of the old form asks again; it never submits.
    unseen = ctx.stale_state and ask != "never"
    state = ctx.request_state
    if state is not None:
        values |= {name: value for name, value in state.answers.items() if name in by_name}
    answered = response is not None and response.content is not None
    if answered:
        assert response is not None and response.content is not None
        # The user saw exactly the fields pending in the state (all askable ones when a client answers
        # without a state): their answer replaces what was there, and an omitted field was cleared.
        asked = set(state.pending) if state is not None else {field.name for field in askable}
        for field in askable:
            if field.name not in asked:
                continue
            values.pop(field.name, None)
            value = _answer_value(field, response.content.get(field.name, MISSING))
            if value is not MISSING:
                values[field.name] = value

    can_ask = ask != "never" and (app or ctx.supports_elicitation("form"))
    if not can_ask:
        # Nobody can be asked: a field the model left out takes the default its inputSchema declares,
        # as an HTML form would have submitted it prefilled. When the user is asked, they see it prefilled.
        values = {field.name: field.default for field in fields if field.default is not None} | values
    outcome = validate_with_form(flow.form_class, values, **kwargs)
    if unseen and not can_ask:
        return Refused(f"{STALE_NOTE} Call the tool again; nothing was submitted.")
    if outcome.is_valid and ask == "always" and not answered and not can_ask:
        # "always" promises that the user confirms before anything runs: the URL-mode page can still ask
        # them; with no way to ask at all, nothing runs.
        if ctx.supports_elicitation("url"):
            return NeedsPage(values=values, problems=())
        return Refused(
            f"{confirm_label[:1].upper()}{confirm_label[1:]} needs the user's confirmation before it runs, "
            "and this client cannot ask the user (no form elicitation, no MCP Apps UI, no URL mode). "
            "Nothing was submitted."
        )
    # Without a way to ask, valid arguments are enough: the tool works as a plain tool.
    if outcome.is_valid and (answered or ask != "always") and not unseen:
        return Ready(outcome.form)

    problems = _describe(outcome.errors, by_name)
    on_page = [name for name in outcome.errors if name in by_name and by_name[name].page_only]
    if on_page and ask != "never":
        return NeedsPage(values=values, problems=tuple(problems))
    if app and can_ask:
        # Only what the model passed is judged out loud: an empty form is not a list of errors.
        judged = {name: messages for name, messages in outcome.errors.items() if name in given}
        return Showing(fields=tuple(fields), values=values, errors=judged)
    if not can_ask:
        return Refused(
            f"Could not submit {confirm_label}; these fields are missing or invalid:\n- "
            + "\n- ".join(problems)
            + "\nPass valid values as arguments, or ask the user for them.",
            errors=outcome.errors,
        )
    unaskable = [
        name for name in outcome.errors if name in by_name and by_name[name].type in OTHER_PATH_TYPES
    ]
    if unaskable:
        kinds = ", ".join(f"{name} ({by_name[name].type})" for name in unaskable)
        return Refused(
            f"{confirm_label[:1].upper()}{confirm_label[1:]} needs {kinds}, which cannot be asked in a form "
            "elicitation: a hidden field must be passed as an argument.\n- " + "\n- ".join(problems)
        )

    to_ask = _fields_to_ask(ask, askable, outcome.errors, values, first_ask=not answered)
    if unseen and not to_ask:
        to_ask = list(askable)  # everything is filled in: the user confirms the changed form
    if not to_ask:  # only a form with nothing askable gets here: every field is a password, file or hidden
        return Refused(
            f"{confirm_label[:1].upper()}{confirm_label[1:]} has no field a form elicitation can ask."
        )
    asked_fields = [_with_default(field, values.get(field.name)) for field in to_ask]
    # An empty required field is asked for, not "corrected": only values someone gave are judged out loud.
    judged = {
        name: messages for name, messages in outcome.errors.items() if name in values or name == NON_FIELD
    }
    corrections = _describe(judged, by_name)
    message = (
        flow.message if not corrections else f"{flow.message}\nPlease correct:\n- " + "\n- ".join(corrections)
    )
    if ctx.stale_state:
        message = f"{STALE_NOTE}\n{message}"
    # The state is readable by the client: passwords and files never go in.
    storable = {name: value for name, value in values.items() if not by_name[name].page_only}
    request_state = ctx.mint_state(answers=storable, pending=[field.name for field in to_ask])
    return Asking(
        form_input_request(asked_fields, key=flow.key, message=message, request_state=request_state)
    )


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
        field
        for field in askable
        if field.name in errors or (first_ask and not field.required and field.name not in values)
    ]


def _with_default(field: AutoFormField, value: Any) -> AutoFormField:
    # The previous answer is offered as the default; form_schema drops it when it does not fit the type.
    return field if value is None else replace(field, default=value)
