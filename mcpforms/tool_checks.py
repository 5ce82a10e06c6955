"""The system checks of a ``FormTool``'s options, as Django's admin checks a ``ModelAdmin``'s.

A bad option is reported by ``manage.py check`` under a stable id with a hint listing what is valid; it
never raises while ``mcp_tools.py`` is imported. ``FormTool.check()`` runs these checks, and a tool that
fails them is never served (``mcpforms.registry``), so a server started without ``check`` offers no tool
that would misbehave. Ids: ``mcpforms.E401``–``E411``, ``W412``, ``E418``.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from django import forms
from django.core.checks import CheckMessage, Error, Warning
from django.core.exceptions import FieldDoesNotExist

import mcpforms.task_store as task_store
from mcpforms.conf import conf, docs_page, install_extra
from mcpforms.fields import converter_for, declared_fields, too_many_fields
from mcpforms.flow import ASK_MODES, PATHS

# RFC 6749 §3.3: scope tokens are printable ASCII but for '"' and '\\', separated by single spaces.
_PERMISSION = re.compile(r"[\w.-]+\.[\w.-]+")
_SCOPE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*")


class CheckedTool(Protocol):
    """What the checks read of a ``FormTool``: its options (the tool module imports this one)."""

    @property
    def form_class(self) -> type[forms.BaseForm]: ...
    @property
    def ask(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def scope(self) -> str | None: ...
    @property
    def update(self) -> bool: ...
    @property
    def approval(self) -> object: ...
    @property
    def background(self) -> bool: ...
    @property
    def result_fields(self) -> object: ...


class FormToolChecks:
    """Each ``_check_*`` method returns the messages of one option. Subclass it and set a tool's
    ``checks_class`` to check options of your own."""

    def check(self, tool: CheckedTool, **kwargs: Any) -> list[CheckMessage]:
        return [
            *self._check_ask(tool),
            *self._check_path(tool),
            *self._check_scope(tool),
            *self._check_update(tool),
            *self._check_fields(tool),
            *self._check_approval(tool),
            *self._check_tasks(tool),
            *self._check_result_fields(tool),
        ]

    def _check_ask(self, tool: CheckedTool) -> list[CheckMessage]:
        return _one_of(tool, "ask", tool.ask, ASK_MODES, check_id="mcpforms.E401")

    def _check_path(self, tool: CheckedTool) -> list[CheckMessage]:
        return _one_of(tool, "path", tool.path, PATHS, check_id="mcpforms.E402")

    def _check_scope(self, tool: CheckedTool) -> list[CheckMessage]:
        if tool.scope is None or (isinstance(tool.scope, str) and _SCOPE.fullmatch(tool.scope)):
            return []
        return [
            Error(
                f"scope={tool.scope!r} must be OAuth scope names separated by single spaces "
                "(RFC 6749 §3.3: printable ASCII without '\"' or '\\'), or None.",
                hint="Valid choices: None, or names such as 'billing' or 'forms.read forms.write'.",
                obj=tool,
                id="mcpforms.E403",
            )
        ]

    def _check_update(self, tool: CheckedTool) -> list[CheckMessage]:
        if not tool.update or issubclass(tool.form_class, forms.BaseModelForm):
            return []
        return [
            Error(
                f"update=True needs a ModelForm; {tool.form_class.__name__} is not one.",
                hint="Valid choices: update=False, or a forms.ModelForm as form_class.",
                obj=tool,
                id="mcpforms.E404",
            )
        ]

    def _check_fields(self, tool: CheckedTool) -> list[CheckMessage]:
        return field_errors(tool.form_class, obj=tool)

    def _check_approval(self, tool: CheckedTool) -> list[CheckMessage]:
        approval = tool.approval
        if approval is None:
            return []
        if not (callable(approval) or (isinstance(approval, str) and _PERMISSION.fullmatch(approval))):
            return [
                Error(
                    f"approval={approval!r} must be a permission ('app_label.codename') or a callable "
                    "(approver, task) -> bool.",
                    hint="Valid choices: None, 'billing.approve_refund', or a function.",
                    obj=tool,
                    id="mcpforms.E407",
                )
            ]
        # The values wait in the database until staff decide: no password nor file may be among them.
        kept_apart = [auto.name for auto in declared_fields(tool.form_class) if auto.page_only]
        if kept_apart:
            return [
                Error(
                    f"approval= cannot be set on {tool.form_class.__name__}: its fields "
                    f"{', '.join(kept_apart)} (passwords or files) would wait in the database until the "
                    "request is decided.",
                    hint="Leave those fields out of the form that needs approval.",
                    obj=tool,
                    id="mcpforms.E408",
                )
            ]
        if tool.path == "url":
            return [
                Error(
                    "approval= cannot be set with path='url': every call would go to the URL-mode page, "
                    "which answers a person, so no client could follow the approval request as a task.",
                    hint="Valid choices: path='auto' or path='form' for a tool that needs approval.",
                    obj=tool,
                    id="mcpforms.E409",
                )
            ]
        return []

    def _check_tasks(self, tool: CheckedTool) -> list[CheckMessage]:
        if tool.approval is None and not tool.background:
            return []
        if conf.TASK_STORE is None:
            return [
                Error(
                    "approval= and background= make tasks, and MCPFORMS['TASK_STORE'] is None.",
                    hint="Remove TASK_STORE from MCPFORMS to keep tasks in the database.",
                    obj=tool,
                    id="mcpforms.E410",
                )
            ]
        if not tool.background or tool.approval is not None:
            return []
        if task_store.turn_job is None:
            return [
                Error(
                    "background=True needs Django's tasks framework: Django 6.0 or later, or the "
                    "django-tasks package on Django 5.2.",
                    hint=f"{install_extra('background')}, and set TASKS to a backend with a worker.",
                    obj=tool,
                    id="mcpforms.E411",
                )
            ]
        if task_store.default_backend_runs_inline():
            return [
                Warning(
                    "background=True, but the default TASKS backend runs every task in the request that "
                    "enqueues it: the call waits for the handler.",
                    hint="Set TASKS to a backend with a worker (django-tasks-db's DatabaseBackend, say).",
                    obj=tool,
                    id="mcpforms.W412",
                )
            ]
        return []

    def _check_result_fields(self, tool: CheckedTool) -> list[CheckMessage]:
        chosen = tool.result_fields
        if chosen is None or chosen == "__all__":
            return []
        names = list(chosen) if isinstance(chosen, list | tuple) else None
        model = getattr(getattr(tool.form_class, "_meta", None), "model", None)
        if names is None or not all(isinstance(name, str) for name in names):
            what = "it must be a list of field names"
        elif model is None:
            return []  # a plain form's handler may return any model: nothing to hold the names to
        elif unknown := [name for name in names if not _is_field(model, name)]:
            what = f"{', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} no field of {model.__name__}"
        else:
            return []
        return [
            Error(
                f"result_fields={chosen!r}: {what}.",
                hint="Valid choices: None (the pk and the form's fields), '__all__', or a list of the "
                "model's field names.",
                obj=tool,
                id="mcpforms.E418",
            )
        ]


def _is_field(model: Any, name: str) -> bool:
    try:
        model._meta.get_field(name)
    except FieldDoesNotExist:
        return False
    return True


def _one_of(
    tool: CheckedTool, option: str, value: object, choices: tuple[str, ...], *, check_id: str
) -> list[CheckMessage]:
    if value in choices:
        return []
    return [
        Error(
            f"{option}={value!r} is not one of {', '.join(choices)}.",
            hint=f"Valid choices: {', '.join(map(repr, choices))}.",
            obj=tool,
            id=check_id,
        )
    ]


def field_errors(form_class: type[forms.BaseForm], *, obj: object = None) -> list[CheckMessage]:
    """What keeps the fields ``form_class`` declares from being offered: too many of them, or one without a
    converter. Read from the class, without instantiating it (``mcpforms.E101`` checks the instance)."""
    declared: dict[str, forms.Field] = getattr(form_class, "base_fields", {})  # set by the form metaclass
    if problem := too_many_fields(len(declared)):
        return [
            Error(
                f"{form_class.__name__} has {problem}; split the form or raise the limit.",
                hint="Valid choices: a form of at most MCPFORMS['MAX_FORM_FIELDS'] fields.",
                obj=obj,
                id="mcpforms.E406",
            )
        ]
    return [
        Error(
            f"{form_class.__name__}.{name}: {type(form_field).__name__} has no mapping; register one "
            "with mcpforms.fields.register_converter",
            hint=f"Valid choices: the field classes of the field table at {docs_page('reference/fields')} "
            "and their subclasses, or a class you map with @mcpforms.fields.register_converter.",
            obj=obj,
            id="mcpforms.E405",
        )
        for name, form_field in declared.items()
        if converter_for(type(form_field)) is None
    ]


# The public names (docs/reference/api.md); the rest serve the package's other modules.
__all__ = ["FormToolChecks"]
