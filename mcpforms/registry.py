"""``register()``: existing Django forms become MCP tools (and prompts); ``mcp_tools.py`` modules are found
the way the admin finds ``admin.py``.

A registration is cheap: nothing reads the form until a client lists or calls the tool, so registering at
import time never touches the database.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, TypedDict, TypeVar, Unpack

from django import forms
from django.db import DatabaseError, models
from django.utils.module_loading import autodiscover_modules

from mcpforms import ui
from mcpforms.fields import FormConversionError, fields_for_form
from mcpforms.flow import Ask
from mcpforms.prompts import FormPrompt, form_prompt
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.errors import invalid_params
from mcpforms.protocol.primitives import Prompt, ResourceTemplate, Tool
from mcpforms.protocol.server import Server, default_server
from mcpforms.tools import FormTool, Handler, RegistrationError, find_form_tool, form_tool

H = TypeVar("H", bound=Handler)


class Registry:
    """The form tools and prompts of one server."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.tools: dict[str, FormTool] = {}
        self.prompts: dict[str, FormPrompt] = {}
        self._generation = 0
        server.add_tool_source(self._tools, version=lambda: self._generation)
        server.add_prompt_source(self._prompts, version=lambda: self._generation)
        # Spec §11.1/§11.3: advertise MCP Apps, and serve each form tool's UI, whether the tool was
        # registered in code or defined in the admin (looked up when read, so both are found).
        server.extensions.setdefault(ui.EXTENSION_ID, {})
        server.add_resource_template(
            ResourceTemplate(
                uri_template=ui.URI_PREFIX + "{tool}",
                name="mcpforms-form-ui",
                title="Form UI",
                description="The HTML form of a form tool, for MCP Apps hosts.",
                mime_type=ui.MIME_TYPE,
                handler=self._read_ui,
                meta=ui.RESOURCE_META,
            )
        )

    def _tools(self) -> list[Tool]:
        return [tool for form_tool in self.tools.values() for tool in form_tool.tools]

    def _read_ui(self, ctx: RequestContext, uri: str, variables: dict[str, str]) -> dict[str, Any]:
        form_tool = find_form_tool(self.server, variables["tool"])
        if form_tool is None or not form_tool.uses_app:
            raise invalid_params("Resource not found", {"uri": uri})
        return form_tool.read_ui(ctx, uri)

    def _prompts(self) -> list[Prompt]:
        return [form_prompt.prompt for form_prompt in self.prompts.values()]

    def _claim(self, name: str, taken: Mapping[str, Any], kind: str) -> None:
        if name in taken:
            raise RegistrationError(f"A {kind.lower()} named {name!r} is already registered.")

    def add_tool(self, form_tool: FormTool) -> None:
        self._claim(form_tool.name, self.tools, "Tool")
        self.tools[form_tool.name] = form_tool
        self._generation += 1

    def replace_tool(self, form_tool: FormTool) -> None:
        self.tools[form_tool.name] = form_tool
        self._generation += 1

    def add_prompt(self, form_prompt: FormPrompt) -> None:
        self._claim(form_prompt.name, self.prompts, "Prompt")
        self.prompts[form_prompt.name] = form_prompt
        self._generation += 1

    def unregister(self, name: str) -> None:
        """Remove a tool or prompt (tests and reloads)."""
        self.tools.pop(name, None)
        self.prompts.pop(name, None)
        self._generation += 1


_registries: dict[int, Registry] = {}


def registry_for(server: Server) -> Registry:
    if id(server) not in _registries:
        _registries[id(server)] = Registry(server)
    return _registries[id(server)]


class ToolOptions(TypedDict, total=False):
    """The options of ``register`` (see ``form_tool``)."""

    name: str
    title: str
    description: str
    message: str
    permission: str | None
    ask: Ask
    update: bool
    lookup: str
    queryset: Callable[[RequestContext], models.QuerySet[Any]]
    form_kwargs: Callable[[RequestContext], Mapping[str, Any]]
    output_schema: Mapping[str, Any]
    annotations: Mapping[str, Any]
    path: ui.Path


def register(
    form_class: type[forms.BaseForm],
    *,
    server: Server | None = None,
    **options: Unpack[ToolOptions],
) -> Callable[[H], H]:
    """Expose ``form_class`` as an MCP tool; decorate ``handler(request, form)`` to run your own code.

    Without a handler a ModelForm saves (``update=True`` changes the object named by ``lookup``) and any
    other form returns its cleaned data (or calls its ``save()``). The options are ``form_tool``'s: name,
    title, description, message, permission, ask, update, lookup, queryset, form_kwargs, output_schema,
    annotations, path.
    """
    registry = registry_for(server or default_server)
    built = form_tool(form_class, **options)
    registry.add_tool(built)

    def decorator(handler: H) -> H:
        registry.replace_tool(replace(built, handler=handler, custom_handler=True))
        return handler

    return decorator


def register_prompt(
    form_class: type[forms.BaseForm],
    *,
    template: str | Callable[[dict[str, Any]], str],
    server: Server | None = None,
    **options: str,
) -> FormPrompt:
    """Expose ``form_class`` as an MCP prompt whose messages are ``template`` filled with the form's data.

    ``template`` is a ``str.format`` string over the field names, or a function of the cleaned data; the
    options (name, title, description, message) are ``form_prompt``'s.
    """
    built = form_prompt(form_class, template=template, **options)
    registry_for(server or default_server).add_prompt(built)
    return built


def autodiscover() -> None:
    """Import every installed app's ``mcp_tools`` module, as the admin does with ``admin.py``."""
    autodiscover_modules("mcp_tools")


def convert_all(server: Server | None = None) -> list[tuple[str, FormConversionError]]:
    """Instantiate every registered form and return those that fail to convert (for the system check)."""
    registry = registry_for(server or default_server)
    failures = []
    for name, form_class in [(t.name, t.form_class) for t in registry.tools.values()] + [
        (p.name, p.form_class) for p in registry.prompts.values()
    ]:
        try:
            fields_for_form(form_class)
        except FormConversionError as error:
            failures.append((name, error))
        except DatabaseError:  # checks may run before the database exists: conversion is checked on use
            continue
    return failures
