"""Forms defined in the admin → ``FormTool``s, served exactly as code-registered ones are.

A ``FormDefinition`` becomes a real Django form class (``mcpforms.form_factory``) and a ``FormTool`` subclass
whose handler stores a ``Submission``, so admin-defined forms go through the same fields, schema, flow and
validation; a definition whose rows start steps (``mcpforms.definition_steps``) becomes a ``WizardTool``,
one form class per step, asked one step per round, storing one ``Submission`` of every step. The registry
reads them as a source whose version is one cheap SQL statement: edits made in any process show at once,
with no restart, and a call to a code-registered tool never reads it.
"""

from __future__ import annotations

import logging
from collections.abc import Hashable, Mapping, Sequence
from functools import cached_property
from typing import Any

from django import forms
from django.core.mail import send_mail
from django.db import connections, router, transaction

from mcpforms.definition_steps import Step, StepCondition, read_steps
from mcpforms.field_rows import auto_field_from_row
from mcpforms.fields import secret_names
from mcpforms.form_factory import form_factory
from mcpforms.models import FieldDefinition, FormDefinition, Submission
from mcpforms.output import to_json
from mcpforms.protocol.capabilities import client_implementation
from mcpforms.protocol.context import RequestContext
from mcpforms.signals import send_stored
from mcpforms.tools import FormTool, raise_for_check_errors
from mcpforms.wizards import Condition, WizardTool

logger = logging.getLogger(__name__)


class DefinitionTool(FormTool):
    """The tool of an admin-defined form: each completed flow stores one ``Submission``."""

    definition_id: int
    email_to: str = ""

    def handle(self, request: RequestContext, form: forms.BaseForm) -> dict[str, Any]:
        return self.store(request, [form])

    def store(self, request: RequestContext, forms_: Sequence[forms.BaseForm]) -> dict[str, Any]:
        """Store the cleaned data of ``forms_`` (one form, or every step's) as one ``Submission``."""
        data: dict[str, Any] = {}
        for form in forms_:
            secret = secret_names(form)  # passwords are never stored
            data |= {name: to_json(value) for name, value in form.cleaned_data.items() if name not in secret}
        user = request.user if getattr(request.user, "is_authenticated", False) else None
        submission = Submission.objects.create(
            definition_id=self.definition_id,
            tool_name=self.name,
            data=data,
            user=user,
            client_info=client_implementation(request.client_info),
        )
        send_stored(self, request, submission)
        if self.email_to:
            # After commit: a mail must not announce a submission that was rolled back, and a mail server
            # that is down must not lose the submission.
            title, to = self.get_title(), self.email_to
            transaction.on_commit(lambda: _mail(submission.pk, title, data, to))
        return {"submission": submission.pk, "form": self.name, "data": data}


class DefinitionWizard(WizardTool, DefinitionTool):
    """The tool of an admin-defined form with steps: asked one step per round, each step asked on its
    staff condition, every step's data stored as one ``Submission``."""

    step_titles: Mapping[str, str] = {}
    step_conditions: Mapping[str, StepCondition] = {}

    def get_step_title(self, step: str) -> str:
        return self.step_titles.get(step) or self.get_title()  # rows before the first titled one

    def describe_condition(self, step: str) -> str | None:
        condition = self.step_conditions.get(step)
        return None if condition is None else condition.describe()

    def handle(  # type: ignore[override]
        self, request: RequestContext, form_list: list[forms.BaseForm], form_dict: dict[str, forms.BaseForm]
    ) -> dict[str, Any]:
        return self.store(request, form_list)

    @cached_property
    def digest(self) -> str:
        # Every save in the admin is a new version: a flow begun before an edit starts over, even when
        # the edit left the steps' shape alone (a label, a condition).
        return f"{super().digest}-{self.version}"


def definition_form_class(definition: FormDefinition) -> type[forms.Form]:
    rows = list(definition.fields.all())
    return form_factory(
        definition.name, [auto_field_from_row(row) for row in rows], doc=definition.description
    )


def definition_tool(definition: FormDefinition, rows: Sequence[FieldDefinition] | None = None) -> FormTool:
    """The tool of one definition, as it is now (or with ``rows`` as its fields, unsaved: the admin's
    check); ``ImproperlyConfigured`` when it fails its checks (more fields than ``MAX_FORM_FIELDS``
    allows, saved under a higher limit), ``DefinitionError`` or ``RegistrationError`` for rows or steps
    no tool can be made of."""
    steps = read_steps(list(definition.fields.all()) if rows is None else rows)
    attrs: dict[str, object] = {
        "name": definition.name,
        "title": definition.title,
        "description": definition.description,
        "message": definition.message,
        "ask": definition.ask,
        "permission": definition.permission or None,
        "version": str(definition.version),
        "definition_id": definition.pk,
        "email_to": definition.email_to,
    }
    tool: FormTool
    if any(step.title for step in steps):
        if definition.ask == FormDefinition.Ask.ALWAYS:
            # "Always let the user confirm", one step per round: every step is the user's to answer, and
            # the model's arguments only prefill it. "Never ask" stays what the wizard refuses (E414).
            attrs |= {"ask": FormDefinition.Ask.MISSING, "always_ask": [step.name for step in steps]}
        tool = _wizard_class(definition, steps, attrs)()
    else:
        fields = [auto for step in steps for auto in step.fields]
        form_class = form_factory(definition.name, fields, doc=definition.description)
        tool = type(f"{form_class.__name__}Tool", (DefinitionTool,), {"form_class": form_class, **attrs})()
    raise_for_check_errors(tool)
    return tool


def _wizard_class(
    definition: FormDefinition, steps: Sequence[Step], attrs: dict[str, object]
) -> type[DefinitionWizard]:
    form_list = [
        (step.name, form_factory(f"{definition.name}_{step.name}", step.fields, doc=definition.description))
        for step in steps
    ]
    conditions = {step.name: step.condition for step in steps if step.condition is not None}
    condition_dict = {name: _condition_of(condition) for name, condition in conditions.items()}
    step_titles = {step.name: step.title for step in steps}
    wizard_attrs = {
        "form_list": form_list,
        "condition_dict": condition_dict,
        "step_titles": step_titles,
        "step_conditions": conditions,
    }
    class_name = form_factory(definition.name, []).__name__.removesuffix("Form")
    return type(f"{class_name}Wizard", (DefinitionWizard,), {**attrs, **wizard_attrs})


def _condition_of(condition: StepCondition) -> Condition:
    def holds(tool: WizardTool, request: RequestContext, cleaned: Mapping[str, Mapping[str, Any]]) -> bool:
        return condition.holds(cleaned)

    return holds


def _mail(pk: int, title: str, data: dict[str, Any], to: str) -> None:
    body = "\n".join(f"{name}: {value}" for name, value in data.items())
    try:
        send_mail(f"New submission #{pk}: {title}", body, None, [to])
    except Exception:  # the submission is stored; a failed notification is logged, not raised
        logger.exception("Could not e-mail submission %s to %s", pk, to)


def definition_tools() -> list[FormTool]:
    """The tools of every enabled definition; a broken one is logged and left out, never a broken list."""
    tools: list[FormTool] = []
    for definition in FormDefinition.objects.filter(enabled=True).prefetch_related("fields"):
        try:
            tools.append(definition_tool(definition))
        except Exception:
            logger.exception("The admin-defined form %r cannot be offered", definition.name)
    return tools


def left_out_definitions() -> list[tuple[FormDefinition, str]]:
    """The definitions ``definition_tools`` leaves out, by name, each with why: disabled, or broken."""
    left_out: list[tuple[FormDefinition, str]] = []
    for definition in FormDefinition.objects.order_by("name").prefetch_related("fields"):
        if not definition.enabled:
            left_out.append((definition, "disabled in the admin"))
            continue
        try:
            definition_tool(definition)
        except Exception as error:
            left_out.append((definition, f"{type(error).__name__}: {error}"))
    return left_out


def catalog_version() -> Hashable:
    """Changes whenever a definition is added, edited, enabled, disabled or deleted, in any process.

    Read whenever a listing or a lookup reaches the admin-defined forms, so it is one plain SQL statement:
    the ORM would spend more time compiling this aggregate than the database spends answering it.
    """
    connection = connections[router.db_for_read(FormDefinition)]
    table = connection.ops.quote_name(FormDefinition._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*), MAX(updated), SUM(version) FROM {table}")  # noqa: S608 (no input)
        row: tuple[Hashable, ...] = tuple(cursor.fetchone() or ())
    return row
