"""Multi-step forms: a ``WizardTool`` is a django-formtools-shaped wizard offered as one tool.

A wizard is ``form_list`` (form classes, or ``(step, form class)`` pairs, as formtools takes them) and
``condition_dict`` (which steps apply, decided from the steps before), with formtools' hooks taking the
request first. This module is the definition: its steps, their fields, the version every requestState of
the wizard is bound to, and the system checks. How a round asks one step and runs the handler once is
``mcpforms.wizard_rounds``; an existing formtools view becomes a ``WizardTool`` in
``mcpforms.wizard_views``.

The requestState carries the validated JSON answers of the finished steps, keyed by step, and the
pending step (first in ``pending``, then the fields asked); its version is a digest of the steps and
their fields, so a wizard changed mid-flow starts over. It is signed, not encrypted, like formtools'
``CookieStorage``: a step with a password or a file is filled on the URL-mode page and kept on the server
instead (``mcpforms.wizard_pages``).
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from functools import cached_property
from typing import Any, TypeAlias

from django import forms
from django.core.checks import CheckMessage, Error, Warning
from django.forms.formsets import BaseFormSet
from django.utils.text import camel_case_to_spaces, capfirst

import mcpforms.sealing as sealing
from mcpforms.conf import conf, install_extra
from mcpforms.fields import AutoFormField, declared_fields, form_fields
from mcpforms.protocol.context import RequestContext
from mcpforms.tool_checks import CheckedTool, FormToolChecks, field_errors
from mcpforms.tools import FormTool, RegistrationError, check_name
from mcpforms.wizard_formsets import is_formset, is_model_formset, row_form, rows_schema

#: ``condition(wizard_tool, request, cleaned)``: whether a step applies, given ``cleaned``, the cleaned data
#: of each active step before it, by step name (formtools' conditions take the view instead; a formset
#: step's is the list of its rows' cleaned data, as formtools gives it).
Condition = Callable[["WizardTool", RequestContext, Mapping[str, Any]], bool]
#: A step of ``form_list``: a form class, or a formset class (``formset_factory``, ``modelformset_factory``).
#: A string: BaseFormSet is generic for the type checker only (django-stubs), not at run time.
StepClass: TypeAlias = "type[forms.BaseForm] | type[BaseFormSet[Any]]"
STARTED_OVER = "This form changed while it was being filled in, so it starts over from the first step."


class WizardToolChecks(FormToolChecks):
    """A ``FormTool``'s checks, and what only a wizard can get wrong: more steps than a call's rounds, and
    ``FormTool`` options a wizard does not act on (set, they would be silently ignored)."""

    def check(self, tool: CheckedTool, **kwargs: Any) -> list[CheckMessage]:
        return [
            *super().check(tool, **kwargs),
            *self._check_rounds(tool),
            *self._check_unused_options(tool),
            *self._check_formsets(tool),
            *self._check_sealing(tool),
        ]

    def _check_sealing(self, tool: CheckedTool) -> list[CheckMessage]:
        if sealing.available() or not isinstance(tool, WizardTool):
            return []
        on_page = [step for step in tool.steps if is_page_step(tool.step_fields(None, step))]
        if not on_page:
            return []
        return [
            Error(
                f"The wizard's step {', '.join(map(repr, on_page))} has a password or a file, which the "
                "URL-mode page keeps, encrypted, until the flow ends; the encryption needs the cryptography "
                f"package, {sealing.CRYPTOGRAPHY_AT_LEAST} or later, which is not installed.",
                hint=install_extra("wizard-pages"),
                obj=tool,
                id="mcpforms.E417",
            )
        ]

    def _check_formsets(self, tool: CheckedTool) -> list[CheckMessage]:
        formsets = list(getattr(tool, "formsets", ()))
        if not formsets:
            return []
        return [
            Warning(
                f"The wizard's step {', '.join(map(repr, formsets))} is a formset: a form elicitation cannot "
                "ask for a list of rows, so only an MCP Apps host shows it, or the model passes it as an "
                "argument; any other client gets an error there.",
                hint="Keep it if your users' clients render MCP Apps; otherwise make the step a form.",
                obj=tool,
                id="mcpforms.W416",
            )
        ]

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

    #: The steps: form or formset classes (named "0", "1", ... as formtools names them) or ``(step, class)``
    #: pairs. A formset step is asked only in an MCP Apps host or taken from the model's arguments.
    form_list: Sequence[StepClass | tuple[str, StepClass]] = ()
    #: ``{step: bool | condition}``: a step whose condition is false is skipped (see ``Condition``).
    condition_dict: Mapping[str, bool | Condition] = {}
    #: Steps the user always answers, even when the arguments would fill them (a confirmation the model
    #: must not give for the user): the arguments only prefill them.
    always_ask: Collection[str] = ()
    checks_class: type[FormToolChecks] = WizardToolChecks

    def __init__(self) -> None:
        self.steps = _named_steps(type(self).__name__, self.form_list)
        for step, form_class in self.steps.items():
            _check_step(type(self).__name__, step, form_class)
        _check_unique_fields(type(self).__name__, self.steps)
        #: The formset steps, by name: each is one argument, a list of rows (``mcpforms.wizard_formsets``).
        self.formsets: dict[str, type[BaseFormSet[Any]]] = {
            step: form_class  # type: ignore[misc]
            for step, form_class in self.steps.items()
            if is_formset(form_class)
        }
        for option in ("condition_dict", "always_ask"):
            if unknown := set(getattr(self, option)) - set(self.steps):
                raise RegistrationError(
                    f"{type(self).__name__}.{option} names no step {', '.join(sorted(unknown))}; "
                    f"the steps are {', '.join(self.steps)}."
                )
        # What FormTool's own definition reads (the options' checks, the default permission) is the
        # first step's; the rest is overridden here.
        first = next(iter(self.steps.values()))
        self.form_class = row_form(first) if is_formset(first) else first
        self.name = self.name or default_name(type(self).__name__)
        check_name(self.name, kind="Tool")

    def check(self, **kwargs: Any) -> list[CheckMessage]:
        later = [
            field_errors(row_form(form_class) if is_formset(form_class) else form_class, obj=self)
            for form_class in list(self.steps.values())[1:]
        ]
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

    def describe_condition(self, step: str) -> str | None:
        """When ``step`` is asked, in words for a reader (``mcpforms_tools``, the admin): None for a step
        that is always asked; a callable condition is described by its docstring's first line, else its
        name."""
        condition = self.condition_dict.get(step, True)
        if condition is True:
            return None
        if not callable(condition):
            return "never" if not condition else None
        doc = inspect.getdoc(condition)
        if doc:
            return doc.splitlines()[0].rstrip(".")
        return f"when {getattr(condition, '__qualname__', repr(condition))}() is true"

    def form_kwargs_for(self, request: RequestContext, step: str) -> dict[str, Any]:
        kwargs = dict(self.get_form_kwargs(request, step))
        initial = self.get_form_initial(request, step)
        if initial:
            # A formset's initial data is a list, one mapping per row.
            kwargs["initial"] = list(initial) if step in self.formsets else dict(initial)
        instance = self.get_form_instance(request, step)
        if is_model_formset(self.steps[step]):
            # As formtools passes it; never the model's whole table, which would show every row to change.
            model = self.formsets[step].model  # type: ignore[attr-defined]
            kwargs["queryset"] = instance if instance is not None else model._default_manager.none()
        elif instance is not None and step not in self.formsets:
            kwargs["instance"] = instance
        return kwargs

    def step_fields(self, request: RequestContext | None, step: str) -> list[AutoFormField]:
        """``step``'s fields as ``request`` sees them; without one, those its form class declares."""
        if step in self.formsets:
            return declared_fields(row_form(self.formsets[step]))  # a row's, the same for every row
        if request is None:
            return declared_fields(self.steps[step])
        return form_fields(self.steps[step], **self.form_kwargs_for(request, step))

    def fields_for(self, request: RequestContext | None) -> list[AutoFormField]:
        """The fields the model passes as flat arguments: every form step's (a formset step is one list)."""
        steps = [step for step in self.steps if step not in self.formsets]
        return [auto for step in steps for auto in self.step_fields(request, step)]

    @cached_property
    def _listed_fields(self) -> tuple[dict[str, Any], bool]:
        schema = self._schema(self.fields_for(None))
        for step, formset_class in self.formsets.items():
            schema["properties"][step] = rows_schema(formset_class, self.step_fields(None, step))
        return schema, False

    @cached_property
    def digest(self) -> str:
        """The version every requestState of the wizard is bound to: its steps and their fields' types."""
        shape = [[step, [[a.name, a.type] for a in self.step_fields(None, step)]] for step in self.steps]
        return hashlib.sha256(json.dumps(shape).encode()).hexdigest()[:16]

    def default_annotations(self) -> dict[str, Any]:
        return {"title": self.get_title()}  # only the author knows what their handler does

    @cached_property
    def uses_app(self) -> bool:
        """MCP Apps hosts get the App, one step at a time (``mcpforms.wizard_app``), unless a step has a
        password or file, which only the URL-mode page collects, or a step is in ``always_ask``: the App's
        submit tool is one any caller may call, the model included (spec §11.2: the server cannot tell who
        calls), and such a step is the user's to answer. ``FormTool.uses_app`` rules out ``ask="always"``
        for the same reason; the step is asked by form elicitation or on the URL-mode page instead."""
        return not self.always_ask and not is_page_step(self.fields_for(None))

    @property
    def makes_tasks(self) -> bool:
        return False


def is_page_step(fields: Iterable[AutoFormField]) -> bool:
    """Whether a step with these fields is filled on the URL-mode page: it has a password or a file field,
    which only that page collects."""
    return any(auto.page_only for auto in fields)


def default_name(class_name: str) -> str:
    """``TravelRequestWizard`` → ``travel_request``; ``SurveyTool`` → ``survey``."""
    words = camel_case_to_spaces(class_name).split()
    while len(words) > 1 and words[-1] in ("tool", "wizard"):
        words.pop()
    return "_".join(words)


def _named_steps(owner: str, form_list: Sequence[Any]) -> dict[str, type[forms.BaseForm]]:
    # A formset step's class is here too (in ``WizardTool.formsets`` as well): every walk of the steps
    # meets it, and the code that binds one form checks ``formsets`` first.
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
    if is_formset(form_class):
        if page_only := [auto.name for auto in declared_fields(row_form(form_class)) if auto.page_only]:
            raise RegistrationError(
                f"{owner}: step {step!r} is a formset whose rows have {', '.join(page_only)} (a password or "
                "a file), which only the URL-mode page collects, and it shows no formset; a formset's rows "
                "must have fields a JSON list of objects can carry."
            )
        return
    if not (isinstance(form_class, type) and issubclass(form_class, forms.BaseForm)):
        raise RegistrationError(f"{owner}: step {step!r} must be a Django form class, not {form_class!r}.")


def _check_unique_fields(owner: str, steps: Mapping[str, Any]) -> None:
    seen: dict[str, str] = {}
    for step, form_class in steps.items():
        if is_formset(form_class):
            continue  # its rows' fields are inside its one argument, a list
        for name in getattr(form_class, "base_fields", {}):
            if name in seen:
                raise RegistrationError(
                    f"{owner}: the field {name!r} is in step {seen[name]!r} and step {step!r}; the model "
                    "passes fields as flat arguments, so each name may be in one step only."
                )
            seen[name] = step
    for step, form_class in steps.items():
        if is_formset(form_class) and step in seen:
            raise RegistrationError(
                f"{owner}: the formset step {step!r} has the name of a field of step {seen[step]!r}; the "
                "model passes the step's rows as the argument named after it: rename the step or the field."
            )


# The public names (docs/reference/api.md); the rest serve the package's other modules.
__all__ = ["WizardTool"]  # register_wizard is mcpforms.registry's, as register is
