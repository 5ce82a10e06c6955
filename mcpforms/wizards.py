"""Multi-step forms: a ``WizardTool`` asks one step of a django-formtools-shaped wizard per round.

A wizard is ``form_list`` (form classes, or ``(step, form class)`` pairs, as formtools takes them) and
``condition_dict`` (which steps apply, decided from the steps before). Each round of a call:

1. refuses early: no access, the user declined or cancelled, or the flow completed already (a replayed
   round, the final one or any earlier one, gets the recorded outcome: the flow id is the wizard's);
2. walks the steps in order, skipping those whose condition is false for the cleaned data of the active
   steps before them, and binds each to what is known of it: a finished step to its answers from the
   signed requestState, the step being asked to the arguments, its earlier answers and this round's;
3. asks the first step that is not valid: only its fields the arguments and earlier answers do not
   already satisfy, with Django's messages for what was wrong ("Step k of at most N: <title>");
4. when every active step is valid (all bound again in this very round, as formtools' ``render_done``
   revalidates them), records the flow and runs ``handle(request, form_list, form_dict)`` once, in one
   transaction (``running.complete``).

The requestState carries the validated JSON answers of the finished steps, keyed by step, and the
pending step (first in ``pending``, then the fields asked); its version is a digest of the steps and
their fields, so a wizard changed mid-flow starts over. It is signed, not encrypted, like formtools'
``CookieStorage``: steps with passwords or files, and formset steps, are refused at registration, until
the URL-mode page and the App UI can take a wizard's step.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property, partial
from typing import Any
from urllib.parse import urljoin, urlsplit

from django import forms
from django.core.checks import CheckMessage, Error, Warning
from django.forms.formsets import BaseFormSet
from django.http import HttpRequest, StreamingHttpResponse
from django.http.response import HttpResponseBase, HttpResponseRedirectBase
from django.template.response import SimpleTemplateResponse
from django.utils.text import camel_case_to_spaces, capfirst

import mcpforms.signals as signals
from mcpforms.answers import MISSING, InputResponse, input_response, validate_with_form
from mcpforms.conf import conf
from mcpforms.fields import AutoFormField, declared_fields, form_fields
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
from mcpforms.tool_checks import CheckedTool, FormToolChecks, field_errors
from mcpforms.tools import FormTool, RegistrationError, check_name

#: ``condition(wizard_tool, request, cleaned)``: whether a step applies, given ``cleaned``, the cleaned data
#: of each active step before it, by step name (formtools' conditions take the view instead).
Condition = Callable[["WizardTool", RequestContext, Mapping[str, Mapping[str, Any]]], bool]
STARTED_OVER = "This form changed while it was being filled in, so it starts over from the first step."


class WizardToolChecks(FormToolChecks):
    """A ``FormTool``'s checks, and what only a wizard can get wrong: more steps than a call's rounds, and
    ``FormTool`` options a wizard does not act on (set, they would be silently ignored)."""

    def check(self, tool: CheckedTool, **kwargs: Any) -> list[CheckMessage]:
        return [*super().check(tool, **kwargs), *self._check_rounds(tool), *self._check_unused_options(tool)]

    def _check_rounds(self, tool: CheckedTool) -> list[CheckMessage]:
        steps = len(getattr(tool, "steps", ()))
        if steps <= conf.MAX_ROUNDS:
            return []
        return [
            Warning(
                f"The wizard has {steps} steps and MCPFORMS['MAX_ROUNDS'] is {conf.MAX_ROUNDS}: each step "
                "asked is a round, so a call that has to ask them all can never finish.",
                hint=f"Merge steps, or raise MAX_ROUNDS to at least {steps}.",
                obj=tool,
                id="mcpforms.W413",
            )
        ]

    def _check_unused_options(self, tool: CheckedTool) -> list[CheckMessage]:
        unused = [
            f"{option}={value!r}"
            for option, value, default in (
                ("ask", tool.ask, "missing"),
                ("path", tool.path, "auto"),
                ("update", tool.update, False),
                ("approval", tool.approval, None),
                ("background", tool.background, False),
            )
            if value != default
        ]
        if not unused:
            return []
        return [
            Error(
                f"{', '.join(unused)}: a WizardTool does not act on these options yet; it asks for what is "
                "missing, one step per round, by form elicitation, and runs handle in the request.",
                hint="Remove them; set instances per step with get_form_instance(request, step).",
                obj=tool,
                id="mcpforms.E414",
            )
        ]


class WizardTool(FormTool):
    """A multi-step form offered as one tool, asked one step per round. Subclass it, set ``form_list`` (and
    ``condition_dict``), override the hooks whose default does not fit, and register it with
    ``mcpforms.register``, as a ``FormTool``.

    The hooks are formtools' with the request first: ``get_form_kwargs(request, step)``,
    ``get_form_initial(request, step)``, ``get_form_instance(request, step)`` and
    ``handle(request, form_list, form_dict)``. Field names must be unique across the steps: the model
    passes any step's fields as flat arguments.
    """

    #: The steps: form classes (named "0", "1", ... as formtools names them) or ``(step, form class)`` pairs.
    form_list: Sequence[type[forms.BaseForm] | tuple[str, type[forms.BaseForm]]] = ()
    #: ``{step: bool | condition}``: a step whose condition is false is skipped (see ``Condition``).
    condition_dict: Mapping[str, bool | Condition] = {}
    checks_class: type[FormToolChecks] = WizardToolChecks

    def __init__(self) -> None:
        self.steps = _named_steps(type(self).__name__, self.form_list)
        for step, form_class in self.steps.items():
            _check_step(type(self).__name__, step, form_class)
        _check_unique_fields(type(self).__name__, self.steps)
        if unknown := set(self.condition_dict) - set(self.steps):
            raise RegistrationError(
                f"{type(self).__name__}.condition_dict names no step {', '.join(sorted(unknown))}; "
                f"the steps are {', '.join(self.steps)}."
            )
        # What FormTool's own definition reads (the options' checks, the default permission) is the
        # first step's; the rest is overridden here.
        self.form_class = next(iter(self.steps.values()))
        self.name = self.name or _default_name(type(self).__name__)
        check_name(self.name, kind="Tool")

    def check(self, **kwargs: Any) -> list[CheckMessage]:
        later = [field_errors(form_class, obj=self) for form_class in list(self.steps.values())[1:]]
        return [*super().check(**kwargs), *(message for messages in later for message in messages)]

    # Overridable behaviour ------------------------------------------------------------------------------

    def get_description(self) -> str:
        doc = type(self).__doc__  # a class's own only: __doc__ is not inherited
        own = inspect.cleandoc(doc) if doc else ""
        described = self.description or own or f"Fill in the {self.get_title()} form."
        return f"{described} Missing details are asked from the user, one step at a time."

    def get_step_title(self, step: str) -> str:
        """What the user reads for ``step`` ("Step 2 of at most 4: <this>"); by default the step's name in
        words, or "Step <n>" for a step formtools named by its index."""
        return f"Step {int(step) + 1}" if step.isdigit() else capfirst(step.replace("_", " "))

    def get_form_kwargs(self, request: RequestContext, step: str) -> dict[str, Any]:  # type: ignore[override]
        """Extra keyword arguments for ``step``'s form (formtools' hook, with the request first)."""
        return {}

    def get_form_initial(self, request: RequestContext, step: str) -> Mapping[str, Any] | None:
        """The initial data of ``step``'s form: what the user sees prefilled when it is asked."""
        return None

    def get_form_instance(self, request: RequestContext, step: str) -> Any:
        """The object ``step``'s ModelForm changes; None adds one."""
        return None

    def handle(  # type: ignore[override]
        self, request: RequestContext, form_list: list[forms.BaseForm], form_dict: dict[str, forms.BaseForm]
    ) -> Any:
        """Run once, when every active step is valid, with the steps' forms in order and by step name
        (formtools' ``done``). By default return the cleaned data of all of them."""
        return {name: value for form in form_list for name, value in form.cleaned_data.items()}

    # The steps ------------------------------------------------------------------------------------------

    def is_active(self, request: RequestContext, step: str, cleaned: Mapping[str, Mapping[str, Any]]) -> bool:
        """Whether ``step`` applies, given the cleaned data of the active steps before it."""
        condition = self.condition_dict.get(step, True)
        return bool(condition(self, request, cleaned) if callable(condition) else condition)

    def form_kwargs_for(self, request: RequestContext, step: str) -> dict[str, Any]:
        kwargs = dict(self.get_form_kwargs(request, step))
        initial = self.get_form_initial(request, step)
        if initial:
            kwargs["initial"] = dict(initial)
        instance = self.get_form_instance(request, step)
        if instance is not None:
            kwargs["instance"] = instance
        return kwargs

    def step_fields(self, request: RequestContext | None, step: str) -> list[AutoFormField]:
        """``step``'s fields as ``request`` sees them; without one, those its form class declares."""
        if request is None:
            return declared_fields(self.steps[step])
        return form_fields(self.steps[step], **self.form_kwargs_for(request, step))

    def fields_for(self, request: RequestContext | None) -> list[AutoFormField]:
        return [auto for step in self.steps for auto in self.step_fields(request, step)]

    @cached_property
    def _listed_fields(self) -> tuple[dict[str, Any], bool]:
        return self._schema(self.fields_for(None)), False

    @cached_property
    def digest(self) -> str:
        """The version every requestState of the wizard is bound to: its steps and their fields' types."""
        shape = [[step, [[a.name, a.type] for a in self.step_fields(None, step)]] for step in self.steps]
        return hashlib.sha256(json.dumps(shape).encode()).hexdigest()[:16]

    def default_annotations(self) -> dict[str, Any]:
        return {"title": self.get_title()}  # only the author knows what their handler does

    @property
    def uses_app(self) -> bool:
        return False  # the App UI shows one form; a wizard's steps are a later step of mcpforms

    @property
    def makes_tasks(self) -> bool:
        return False


def _default_name(class_name: str) -> str:
    """``TravelRequestWizard`` → ``travel_request``; ``SurveyTool`` → ``survey``."""
    words = camel_case_to_spaces(class_name).split()
    while len(words) > 1 and words[-1] in ("tool", "wizard"):
        words.pop()
    return "_".join(words)


def _named_steps(owner: str, form_list: Sequence[Any]) -> dict[str, type[forms.BaseForm]]:
    steps: dict[str, type[forms.BaseForm]] = {}
    for index, entry in enumerate(form_list):
        step, form_class = entry if isinstance(entry, tuple) else (str(index), entry)
        if step in steps:
            raise RegistrationError(f"{owner}.form_list names the step {step!r} twice.")
        steps[str(step)] = form_class
    if not steps:
        raise RegistrationError(f"{owner}.form_list must list at least one form class.")
    return steps


def _check_step(owner: str, step: str, form_class: Any) -> None:
    if isinstance(form_class, type) and issubclass(form_class, BaseFormSet):
        raise RegistrationError(
            f"{owner}: step {step!r} is a formset, which a form elicitation cannot ask; formset steps are "
            "not supported yet."
        )
    if not (isinstance(form_class, type) and issubclass(form_class, forms.BaseForm)):
        raise RegistrationError(f"{owner}: step {step!r} must be a Django form class, not {form_class!r}.")
    kept_apart = [auto.name for auto in declared_fields(form_class) if auto.page_only]
    if kept_apart:
        raise RegistrationError(
            f"{owner}: step {step!r} ({form_class.__name__}) has password or file fields "
            f"({', '.join(kept_apart)}), which a wizard's signed, readable requestState may not carry; "
            "wizard steps with them are not supported yet."
        )


def _check_unique_fields(owner: str, steps: Mapping[str, type[forms.BaseForm]]) -> None:
    seen: dict[str, str] = {}
    for step, form_class in steps.items():
        for name in getattr(form_class, "base_fields", {}):
            if name in seen:
                raise RegistrationError(
                    f"{owner}: the field {name!r} is in step {seen[name]!r} and step {step!r}; the model "
                    "passes fields as flat arguments, so each name may be in one step only."
                )
            seen[name] = step


# An existing formtools view ---------------------------------------------------------------------------

#: What ``register_wizard`` takes besides the view: the options a wizard acts on, and ``handle``.
VIEW_OPTIONS = (
    "name",
    "title",
    "description",
    "message",
    "permission",
    "scope",
    "output_schema",
    "annotations",
)


class _McpView:
    """Mixed in before a formtools view: what it reads of the earlier steps comes from the round's walk (the
    cleaned data of the active steps validated so far), not from a storage backend."""

    mcp_cleaned: Mapping[str, Mapping[str, Any]] = {}

    def get_cleaned_data_for_step(self, step: str) -> Mapping[str, Any] | None:
        return self.mcp_cleaned.get(step)

    def get_all_cleaned_data(self) -> dict[str, Any]:
        return {name: value for cleaned in self.mcp_cleaned.values() for name, value in cleaned.items()}


class ViewWizardTool(WizardTool):
    """A ``WizardTool`` whose steps, conditions, hooks and ``done`` are an existing formtools
    ``WizardView``'s (``view_class``); ``register_wizard`` builds it. A condition, a hook and ``done`` get
    a view instance as formtools sets one up: its ``request`` carries the MCP caller as ``user``, and its
    ``get_cleaned_data_for_step(step)`` answers from the steps validated before, in this round."""

    view_class: type[Any]

    def __init__(self) -> None:
        super().__init__()
        self._round = threading.local()  # one round's view, per thread: a tool serves every call

    def view_for(
        self, request: RequestContext, cleaned: Mapping[str, Mapping[str, Any]] | None = None
    ) -> Any:
        """The view instance of this round. The walk passes ``cleaned`` (its own dict, filled as the steps
        validate) to every condition, and the hooks of the same round reuse the view it made."""
        current = getattr(self._round, "view", None)
        if (
            current is not None
            and self._round.request is request
            and (cleaned is None or current.mcp_cleaned is cleaned)
        ):
            return current
        view_class = self.view_class
        view = view_class(**view_class.get_initkwargs())
        view.setup(_django_request(request))
        view.prefix = view.get_prefix(view.request)
        view.mcp_cleaned = cleaned if cleaned is not None else {}
        self._round.view, self._round.request = view, request
        return view

    def is_active(self, request: RequestContext, step: str, cleaned: Mapping[str, Mapping[str, Any]]) -> bool:
        condition: Any = self.condition_dict.get(step, True)  # formtools': a bool, or a callable of the view
        return bool(condition(self.view_for(request, cleaned)) if callable(condition) else condition)

    def get_form_kwargs(self, request: RequestContext, step: str) -> dict[str, Any]:  # type: ignore[override]
        return dict(self.view_for(request).get_form_kwargs(step) or {})

    def get_form_initial(self, request: RequestContext, step: str) -> Mapping[str, Any] | None:
        initial: Mapping[str, Any] | None = self.view_for(request).get_form_initial(step)
        return initial

    def get_form_instance(self, request: RequestContext, step: str) -> Any:
        return self.view_for(request).get_form_instance(step)

    def handle(  # type: ignore[override]
        self, request: RequestContext, form_list: list[forms.BaseForm], form_dict: dict[str, forms.BaseForm]
    ) -> Any:
        view = self.view_for(request)
        view.mcp_cleaned = {step: form.cleaned_data for step, form in form_dict.items()}
        own = getattr(view, "handle", None)
        if callable(own):  # a handle(request, form_list, form_dict) on the view wins over its done()
            return own(request, form_list, form_dict)
        return done_value(view.done(form_list, form_dict=form_dict))


def wizard_tool_class(view_class: type[Any], **options: Any) -> type[ViewWizardTool]:
    """The ``ViewWizardTool`` subclass ``register_wizard(view_class, **options)`` stands for: the view's
    steps and conditions, the options as class attributes, and ``handle`` (a callable
    ``(request, form_list, form_dict)``) instead of the view's ``done``."""
    handle = options.pop("handle", None)
    if unknown := set(options) - set(VIEW_OPTIONS):
        valid = ", ".join(sorted((*VIEW_OPTIONS, "handle")))
        raise RegistrationError(f"Unknown option(s) {', '.join(sorted(unknown))}; valid: {valid}.")
    if not (isinstance(view_class, type) and callable(getattr(view_class, "get_initkwargs", None))):
        raise RegistrationError(f"register_wizard takes a formtools WizardView subclass, not {view_class!r}.")
    words = camel_case_to_spaces(view_class.__name__).split()
    while len(words) > 1 and words[-1] == "view":
        words.pop()
    attrs: dict[str, Any] = {
        "__doc__": view_class.__doc__,  # the view's own docstring describes the tool, as a form's does
        "view_class": type(
            view_class.__name__, (_McpView, view_class), {"__module__": view_class.__module__}
        ),
        # Read as formtools reads them, but without get_initkwargs, which refuses a file field before the
        # wizard's own registration error can say why.
        "form_list": list(getattr(view_class, "form_list", None) or ()),
        "condition_dict": dict(getattr(view_class, "condition_dict", None) or {}),
        "name": _default_name("".join(word.capitalize() for word in words)),
        **options,
    }
    if handle is not None:
        attrs["handle"] = lambda self, request, form_list, form_dict: handle(request, form_list, form_dict)
    return type(f"{view_class.__name__}Tool", (ViewWizardTool,), attrs)


def _django_request(request: RequestContext) -> HttpRequest:
    """What a formtools view reads of its request: who the caller is (``user``; ``mcp`` is the rest)."""
    from django.contrib.auth.models import AnonymousUser  # needs the app registry, loaded after this module

    django_request = HttpRequest()
    django_request.method = "POST"
    django_request.user = request.user if request.user is not None else AnonymousUser()
    django_request.mcp = request  # type: ignore[attr-defined]
    return django_request


def done_value(value: Any) -> Any:
    """What a view's ``done()`` returned, as a tool result: a redirect is "Done." and where it points (an
    absolute URL, on ``BASE_URL`` when it is set), another response its text; anything else as it is."""
    if isinstance(value, HttpResponseRedirectBase):
        return f"Done.\n{_absolute(value.url)}"
    if isinstance(value, StreamingHttpResponse):
        return b"".join(value.streaming_content).decode(value.charset)  # type: ignore[arg-type]
    if isinstance(value, HttpResponseBase):
        if isinstance(value, SimpleTemplateResponse) and not value.is_rendered:
            value.render()
        return value.content.decode(value.charset)  # type: ignore[attr-defined]
    return value


def _absolute(url: str) -> str:
    base = conf.BASE_URL
    if urlsplit(url).scheme or not isinstance(base, str) or not base:
        return url
    return base.rstrip("/") + url if url.startswith("/") else urljoin(base.rstrip("/") + "/", url)


# Serving --------------------------------------------------------------------------------------------------


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
    """Every active step is valid: run the handler once with ``forms`` (by step, in order)."""

    forms: dict[str, forms.BaseForm]


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
    if state is not None and (recorded := _recorded(state)) is not None:
        return Recorded(recorded)
    response = None if ctx.stale_state else input_response(ctx.input_responses, tool.name)
    if response is not None and response.action == "decline":
        return Declined("decline", f"The user declined to fill in {label}; nothing was submitted.")
    if response is not None and response.action == "cancel":
        return Declined("cancel", f"The user cancelled {label}; nothing was submitted.")
    return _Walk(tool, ctx, arguments, response).run()


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
            signals.send_declined(tool, ctx, action)
            return error_result(text)
        case Refused(text=text):
            return error_result(text)


def _recorded(state: RequestState) -> dict[str, Any] | None:
    from mcpforms.models import CompletedFlow  # models load after the app registry; this module before

    return CompletedFlow.outcome_of(state)


def _run_handler(tool: WizardTool, ctx: RequestContext, by_step: dict[str, forms.BaseForm]) -> dict[str, Any]:
    value = tool.handle(ctx, list(by_step.values()), dict(by_step))
    return handled(tool, ctx, _combined(by_step), value)


def _combined(by_step: Mapping[str, forms.BaseForm]) -> forms.BaseForm:
    """One form standing for all the steps, for what reads a completed form (``tool_completed``'s data)."""
    combined = forms.Form()
    combined.fields = {name: f for form in by_step.values() for name, f in form.fields.items()}
    combined.cleaned_data = {name: v for form in by_step.values() for name, v in form.cleaned_data.items()}
    return combined


class _Walk:
    """One round's walk through the steps: bind each active one to what is known, stop at the first that
    is not valid."""

    def __init__(
        self, tool: WizardTool, ctx: RequestContext, arguments: Any, response: InputResponse | None
    ) -> None:
        self.tool, self.ctx, self.arguments, self.response = tool, ctx, arguments, response
        state = ctx.request_state
        answers = state.answers if state is not None else {}
        self.pending = state.pending[0] if state is not None and state.pending else None
        self.asked = set(state.pending[1:]) if state is not None else set()
        # What earlier rounds proved, by step; the pending step's entry is what is known of it so far.
        self.known = {s: dict(v) for s, v in answers.items() if s in tool.steps and isinstance(v, dict)}
        self.can_ask = ctx.supports_elicitation("form")

    def run(self) -> WizardOutcome:
        cleaned: dict[str, Mapping[str, Any]] = {}
        valid: dict[str, forms.BaseForm] = {}
        steps = list(self.tool.steps)
        active = 0
        for index, step in enumerate(steps):
            if not self.tool.is_active(self.ctx, step, cleaned):
                continue
            active += 1
            fields = self.tool.step_fields(self.ctx, step)
            values, answered = self._values(step, fields)
            kwargs = self.tool.form_kwargs_for(self.ctx, step)
            judged = validate_with_form(self.tool.steps[step], values, **kwargs)
            if judged.is_valid:
                self.known[step] = values
                cleaned[step], valid[step] = judged.cleaned_data, judged.form
                continue
            at_most = active + sum(
                1 for later in steps[index + 1 :] if self.tool.condition_dict.get(later) is not False
            )
            return self._ask(step, fields, values, judged.errors, answered=answered, k=active, n=at_most)
        return Finished(valid)

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
        k: int,
        n: int,
    ) -> WizardOutcome:
        by_name = {auto.name: auto for auto in fields}
        title = self.tool.get_step_title(step)
        problems = describe_problems(errors, by_name)
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
        if NON_FIELD in errors:
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
        state = self.ctx.mint_state(answers=self.known | {step: values}, pending=pending)
        asked = [
            auto if values.get(auto.name) is None else replace(auto, default=values[auto.name])
            for auto in to_ask
        ]
        return Asking(form_input_request(asked, key=self.tool.name, message=message, request_state=state))


# The public names (the README's "The public API"); the rest serve the package's other modules.
__all__ = ["WizardTool"]  # register_wizard is mcpforms.registry's, as register is
