"""Turn Django forms into MCP tools. The public API: what a project's ``mcp_tools.py`` and its own tools
need. The few other public names live in the modules the API reference lists (``docs/reference/api.md``;
``tests/test_public_api.py`` holds both to it); everything else is internal.

The names load on first use (PEP 562), so ``import mcpforms.schema`` brings in the schema and what it
needs, not the registry, the protocol core and pydantic.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpforms.answers import accepted_form_input, input_response, validate_with_form
    from mcpforms.fields import AutoFormField, Option, fields_for_form, fields_for_model
    from mcpforms.registry import register, register_prompt, register_wizard, tool
    from mcpforms.schema import form_input_request, form_schema
    from mcpforms.tools import FormTool
    from mcpforms.ui import display_form
    from mcpforms.wizards import WizardTool

_HOMES = {
    "AutoFormField": "mcpforms.fields",
    "FormTool": "mcpforms.tools",
    "Option": "mcpforms.fields",
    "WizardTool": "mcpforms.wizards",
    "accepted_form_input": "mcpforms.answers",
    "display_form": "mcpforms.ui",
    "fields_for_form": "mcpforms.fields",
    "fields_for_model": "mcpforms.fields",
    "form_input_request": "mcpforms.schema",
    "form_schema": "mcpforms.schema",
    "input_response": "mcpforms.answers",
    "register": "mcpforms.registry",
    "register_prompt": "mcpforms.registry",
    "register_wizard": "mcpforms.registry",
    "tool": "mcpforms.registry",
    "validate_with_form": "mcpforms.answers",
}

__all__ = [
    "AutoFormField",
    "FormTool",
    "Option",
    "WizardTool",
    "accepted_form_input",
    "display_form",
    "fields_for_form",
    "fields_for_model",
    "form_input_request",
    "form_schema",
    "input_response",
    "register",
    "register_prompt",
    "register_wizard",
    "tool",
    "validate_with_form",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'mcpforms' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value  # the next access is a plain module attribute
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
