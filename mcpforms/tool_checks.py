"""The system checks of a ``FormTool``'s options, as Django's admin checks a ``ModelAdmin``'s.

A bad option is reported by ``manage.py check`` under a stable id with a hint listing what is valid; it
never raises while ``mcp_tools.py`` is imported. ``FormTool.check()`` runs these checks, and a tool that
fails them is never served (``mcpforms.registry``), so a server started without ``check`` offers no tool
that would misbehave. Ids: ``mcpforms.E401``–``E406``.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from django import forms
from django.core.checks import CheckMessage, Error

from mcpforms.fields import converter_for, too_many_fields
from mcpforms.flow import ASK_MODES, PATHS

# RFC 6749 §3.3: scope tokens are printable ASCII but for '"' and '\\', separated by single spaces.
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
            hint="Valid choices: the field classes of the README's field table and their subclasses, or "
            "a class you map with @mcpforms.fields.register_converter.",
            obj=obj,
            id="mcpforms.E405",
        )
        for name, form_field in declared.items()
        if converter_for(type(form_field)) is None
    ]


# The public names (the README's "The public API"); the rest serve the package's other modules.
__all__ = ["FormToolChecks"]
