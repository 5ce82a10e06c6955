"""Turn Django forms into MCP tools. The public API; everything else lives in the module that owns it."""

from mcpforms.answers import accepted_form_input, input_response, validate_with_form
from mcpforms.fields import AutoFormField, Option, fields_for_form, fields_for_model
from mcpforms.registry import register
from mcpforms.schema import form_input_request, form_schema
from mcpforms.ui import display_form

__all__ = [
    "AutoFormField",
    "Option",
    "accepted_form_input",
    "display_form",
    "fields_for_form",
    "fields_for_model",
    "form_input_request",
    "form_schema",
    "input_response",
    "register",
    "validate_with_form",
]
