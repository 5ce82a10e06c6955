"""``register()`` and ``@tool``: Django forms become MCP tools (and prompts); ``mcp_tools.py`` modules are
found the way the admin finds ``admin.py``.

A ``Registry`` owns the ``FormTool``s of one ``Server``, as an ``AdminSite`` owns its ``ModelAdmin``s:
the ones registered in code, then those of its sources (the admin-defined forms), looked up in that order.
A registration is cheap: nothing reads the form until a client lists or calls the tool, so registering
at import time never touches the database. A bad option does not stop it: ``manage.py check`` reports it
(``check_form_tools``), and the tool is not served.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from functools import partial
from typing import Any, NoReturn, TypedDict, TypeVar, Unpack

from django import forms
from django.apps import AppConfig
from django.core.checks import CheckMessage
from django.db import DatabaseError, models
from django.utils.module_loading import autodiscover_modules

import mcpforms.serving as serving
import mcpforms.ui as ui
import mcpforms.wizard_app as wizard_app
import mcpforms.wizard_views as wizard_views
import mcpforms.wizards as wizards
from mcpforms.fields import FormConversionError, fields_for_form
from mcpforms.flow import Ask, Path
from mcpforms.prompts import FormPrompt, form_prompt
from mcpforms.protocol.catalog import Catalog, Deferred
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.errors import invalid_params
from mcpforms.protocol.methods import hidden
from mcpforms.protocol.primitives import Prompt, ResourceTemplate, Tool
from mcpforms.protocol.server import Server, default_server, server_for, servers
from mcpforms.tools import FormHandler, FormTool, RegistrationError, raise_for_check_errors, tool_class

H = TypeVar("H", bound=FormHandler)
FormTools = Callable[[], Iterable[FormTool]]


class Registry:
    """The form tools and prompts of one server."""

    def __init__(self, server: Server) -> None:
        # Weakly: the module's registries are keyed weakly by their server, and a registry that held its
        # server would keep it (and every tool of it) alive for as long as the process runs.
        self._server = weakref.ref(server)
        self._tools: dict[str, FormTool] = {}
        self._prompts: dict[str, FormPrompt] = {}
        self._generation = 0
        # Code-registered tools first, then each source's: a name taken in code wins, so that a row staff
        # type in the admin can never replace a tool the developers wrote, reviewed and deployed.
        self._sources: list[Catalog[FormTool]] = []
        self._source_functions: list[FormTools] = []
        server.add_tool_source(self._protocol_tools, version=self._version)
        server.add_prompt_source(self._protocol_prompts, version=self._version)
        # Spec §11.1/§11.3: advertise MCP Apps, and serve each form tool's UI, whether the tool was
        # registered in code or came from a source.
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

    @property
    def server(self) -> Server:
        server = self._server()
        assert server is not None, "a registry outlived its server"
        return server

    def _version(self) -> int:
        return self._generation

    def _protocol_tools(self) -> list[Deferred[Tool]]:
        return [slot for form_tool in self._tools.values() for slot in tool_slots(form_tool)]

    def _protocol_prompts(self) -> list[Prompt]:
        return [form_prompt.prompt for form_prompt in self._prompts.values()]

    def _read_ui(self, ctx: RequestContext, uri: str, variables: dict[str, str]) -> dict[str, Any]:
        form_tool = self.form_tool(variables["tool"])
        unknown = invalid_params("Resource not found", {"uri": uri})
        if form_tool is None or not form_tool.uses_app:
            raise unknown
        if not form_tool.may_use(ctx):
            raise hidden(ctx, f"the resource {uri!r}", unknown)  # as its tool would be
        raise_for_check_errors(form_tool)  # as its tool's definition: not served
        if isinstance(form_tool, wizards.WizardTool):
            return wizard_app.read_ui(form_tool, ctx, uri)  # every step, one shown at a time
        return serving.read_ui(form_tool, ctx, uri)

    # The tools ------------------------------------------------------------------------------------------

    def add_source(self, source: FormTools, *, version: Callable[[], Hashable]) -> None:
        """Serve the form tools ``source()`` returns after the code-registered ones, re-reading them only
        when ``version()`` moves; a code-registered tool wins a name clash."""

        tools: Catalog[FormTool] = Catalog(lambda form_tool: form_tool.name, kind="tool")
        tools.add_source(source, version=version)
        self._sources.append(tools)
        self._source_functions.append(source)

        def protocol_tools() -> list[Deferred[Tool]]:
            fresh = [form_tool for form_tool in tools.all() if form_tool.name not in self._tools]
            return [slot for form_tool in fresh for slot in tool_slots(form_tool)]

        self.server.add_tool_source(protocol_tools, version=version)

    def form_tool(self, name: str) -> FormTool | None:
        """The form tool named ``name``: registered in code, else from a source (whose version is read
        only then)."""
        found = self._tools.get(name)
        for tools in self._sources:
            if found is not None:
                break
            found = tools.get(name)
        return found

    @property
    def tools(self) -> Mapping[str, FormTool]:
        """The code-registered form tools, by name."""
        return self._tools

    def serves(self, source: FormTools) -> bool:
        """Whether ``source`` was added to this registry (``add_source``)."""
        return source in self._source_functions

    @property
    def sources(self) -> tuple[FormTools, ...]:
        """The sources added with ``add_source``, in the order their tools are looked up; a source added
        again (an app registry populated anew runs ``ready()`` again) adds nothing, and is listed once."""
        return tuple(dict.fromkeys(self._source_functions))

    def tools_of(self, source: FormTools) -> list[tuple[FormTool, str]]:
        """The form tools ``source`` offers now, each with why it is not served ("" when it is): a name
        registered in code, or offered by an earlier source, wins."""
        position = self._source_functions.index(source)
        earlier = {form_tool.name for tools in self._sources[:position] for form_tool in tools.all()}
        offered = []
        for form_tool in self._sources[position].all():
            reason = ""
            if form_tool.name in self._tools:
                reason = "a code-registered tool has this name and wins"
            elif form_tool.name in earlier:
                reason = "a tool of an earlier source has this name and wins"
            offered.append((form_tool, reason))
        return offered

    def add_tool(self, form_tool: FormTool) -> None:
        # Refused at once, as the admin raises AlreadyRegistered: the registry files one tool per name, so a
        # check run later would never see the other one, and which of the two callers reach would depend
        # on the order of imports.
        if form_tool.name in self._tools:
            raise RegistrationError(f"A tool named {form_tool.name!r} is already registered.")
        self._tools[form_tool.name] = form_tool
        self._generation += 1

    def add_prompt(self, form_prompt: FormPrompt) -> None:
        if form_prompt.name in self._prompts:
            raise RegistrationError(f"A prompt named {form_prompt.name!r} is already registered.")
        self._prompts[form_prompt.name] = form_prompt
        self._generation += 1

    @property
    def prompts(self) -> Mapping[str, FormPrompt]:
        return self._prompts

    def unregister(self, name: str) -> None:
        """Remove a tool or prompt (tests and reloads)."""
        self._tools.pop(name, None)
        self._prompts.pop(name, None)
        self._generation += 1

    # For the system checks ------------------------------------------------------------------------------

    def check(self) -> list[CheckMessage]:
        """The system check messages of every code-registered tool's options (``FormTool.check``)."""
        return [message for form_tool in self._tools.values() for message in form_tool.check()]

    def conversion_failures(self) -> list[tuple[str, FormConversionError]]:
        """Instantiate every registered form and return those that fail to convert."""
        failures = []
        # A tool whose own checks fail (an unmapped declared field is E405) is reported by them once.
        readers: list[tuple[str, Callable[[], object]]] = [
            (form_tool.name, partial(form_tool.fields_for, None))
            for form_tool in self._tools.values()
            if not any(message.is_serious() for message in form_tool.check())
        ]
        readers += [
            (prompt.name, partial(fields_for_form, prompt.form_class)) for prompt in self._prompts.values()
        ]
        for name, read in readers:
            try:
                read()
            except FormConversionError as error:
                failures.append((name, error))
            except DatabaseError:  # checks may run before the database exists: conversion is checked on use
                continue
        return failures


class _ToolSlot(Deferred[Tool]):
    """A form tool's protocol tool, named at registration and built (the form converted) when a listing
    or a call first reaches it. Who may see it is known before: the tool's ``visible`` is ``may_use``."""

    __slots__ = ("form_tool",)
    certain = True

    def __init__(self, key: str, form_tool: FormTool) -> None:
        super().__init__(key)
        self.form_tool = form_tool

    def build(self) -> Tool | None:
        raise_for_check_errors(self.form_tool)  # logged as "cannot be listed"; a call of it is -32603
        if isinstance(self.form_tool, wizards.WizardTool):
            return wizard_app.tool_of(self.form_tool)  # one step per round, or per screen of its App
        return serving.tool_of(self.form_tool)

    def visible_to(self, ctx: RequestContext) -> bool:
        return self.form_tool.may_use(ctx)


class _SubmitSlot(_ToolSlot):
    """The app-only submit tool of a form tool's UI, which a form without one turns out not to have. It
    exists only for hosts that declared MCP Apps (``serving.offered_to_apps``, spec §11.2): any other
    caller's listing passes over it without building it."""

    __slots__ = ()
    certain = False

    def build(self) -> Tool | None:
        raise_for_check_errors(self.form_tool)
        if isinstance(self.form_tool, wizards.WizardTool):
            return wizard_app.submit_tool_of(self.form_tool)  # the App's Next and Back
        return serving.submit_tool_of(self.form_tool)

    def visible_to(self, ctx: RequestContext) -> bool:
        return serving.offered_to_apps(ctx) and self.form_tool.may_use(ctx)


def tool_slots(form_tool: FormTool) -> tuple[Deferred[Tool], Deferred[Tool]]:
    """The protocol tools of ``form_tool`` (``serving.tool_of``, ``serving.submit_tool_of``), named now,
    built on first use."""
    return _ToolSlot(form_tool.name, form_tool), _SubmitSlot(ui.submit_name(form_tool.name), form_tool)


_registries: weakref.WeakKeyDictionary[Server, Registry] = weakref.WeakKeyDictionary()


def registry_for(server: Server) -> Registry:
    """The registry of ``server``, made on first use."""
    if server not in _registries:
        _registries[server] = Registry(server)
    return _registries[server]


def form_tool_of(server: str, name: str) -> FormTool | None:
    """The form tool ``name`` of the server whose key is ``server``, as a stored row names them (an
    approval request in the admin); None when no such server or tool is here now."""
    found = server_for(server)
    registry = _registries.get(found) if found is not None else None
    return registry.form_tool(name) if registry is not None else None


def check_form_tools(app_configs: Sequence[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """The options of every code-registered form tool, on every server (``mcpforms.tool_checks``).
    ``McpFormsConfig.ready`` registers it with Django's checks, as the admin registers its own."""
    return [message for _server, registry in registries() for message in registry.check()]


def registries() -> list[tuple[Server, Registry]]:
    """Every server that has a registry, with it, in the order the servers were built. The servers come
    along because a registry holds its own weakly: the list keeps each alive while a caller walks it."""
    return [(server, _registries[server]) for server in servers() if server in _registries]


class ToolOptions(TypedDict, total=False):
    """The options of ``register`` with a form class, and of ``@tool``: ``FormTool``'s class attributes,
    and the callables that stand for its methods."""

    name: str
    title: str
    description: str
    message: str
    permission: str | None
    ask: Ask
    path: Path
    update: bool
    lookup: str
    output_schema: Mapping[str, Any]
    annotations: Mapping[str, Any]
    scope: str | None
    approval: str | Callable[[Any, Any], bool] | None
    approval_requires_tasks: bool
    background: bool
    task_ttl: int | None
    queryset: Callable[[RequestContext], models.QuerySet[Any]]
    form_kwargs: Callable[[RequestContext], Mapping[str, Any]]


def register(
    form: type[FormTool] | type[forms.BaseForm],
    *,
    server: Server | None = None,
    **options: Unpack[ToolOptions],
) -> Registered:
    """Expose a form as an MCP tool, as ``admin.site.register`` exposes a model: a ``FormTool`` subclass
    as it is, or a form class with ``options`` (``FormTool``'s attributes), which builds the subclass. Its
    handler is the default one (a ModelForm saves, a plain form echoes its data); ``@tool`` gives it yours.
    """
    if issubclass(form, FormTool):
        if options:
            raise RegistrationError("Options belong on the FormTool subclass, as class attributes.")
        built = form
    else:
        built = tool_class(form, **options)
    made = built()
    registry = registry_for(server or default_server)
    registry.add_tool(made)
    return Registered(registry, made, form)


class Registered:
    """What ``register()`` returns: nothing to use, but a clear error for ``@register(Form)`` written
    above a function, the way ``@admin.register`` decorates a class — ``register`` registers at once and
    decorates nothing, so the function would silently not be the handler."""

    def __init__(self, registry: Registry, made: FormTool, form: type[Any]) -> None:
        self._registry, self._made, self._form = registry, made, form

    def __call__(self, decorated: Any) -> NoReturn:
        self._registry.unregister(self._made.name)  # nothing half-registered stays behind
        what = getattr(decorated, "__name__", repr(decorated))
        raise RegistrationError(
            f"mcpforms.register({self._form.__name__}) registers the form at once and decorates nothing, "
            f"so {what} would not be its handler. To make {what} the handler, decorate it with "
            f"@mcpforms.tool({self._form.__name__}) instead; to register a FormTool subclass, call "
            "mcpforms.register(YourTool) after the class."
        )


def tool(
    form_class: type[forms.BaseForm],
    *,
    server: Server | None = None,
    **options: Unpack[ToolOptions],
) -> Callable[[H], H]:
    """Decorate ``handler(request, form)`` to expose ``form_class`` as an MCP tool that runs it on the valid
    form, as ``@admin.register`` registers the class it decorates. The function names the tool unless
    ``name`` is given, as the SDKs' ``@tool`` does: ``def call_me_back`` is the tool ``call_me_back``,
    whatever its form is called."""

    def decorator(handler: H) -> H:
        named: dict[str, Any] = {"name": handler.__name__, **options}
        built = tool_class(form_class, handler=handler, **named)
        registry_for(server or default_server).add_tool(built())
        return handler

    return decorator


def register_wizard(view_class: type[Any], *, server: Server | None = None, **options: Any) -> None:
    """Expose an existing django-formtools ``WizardView`` subclass as a multi-step tool, asked one step per
    round (``mcpforms.wizard_views.ViewWizardTool``): its ``form_list``, ``condition_dict``, form hooks and
    ``done()``. ``options`` are a ``WizardTool``'s (name, title, description, message, permission, scope,
    output_schema, annotations) and ``handle(request, form_list, form_dict)``, which wins over ``done()``.
    The name is the view's (``TravelWizard`` → ``travel``)."""
    registry_for(server or default_server).add_tool(wizard_views.wizard_tool_class(view_class, **options)())


def register_prompt(
    form_class: type[forms.BaseForm],
    *,
    template: str | Callable[[dict[str, Any]], str],
    server: Server | None = None,
    **options: str,
) -> FormPrompt:
    """Expose ``form_class`` as an MCP prompt whose messages are ``template`` filled with the form's data.

    ``template`` is a ``str.format`` string over the field names, or a function of the cleaned data; the
    options (name, title, description, message, permission) are ``form_prompt``'s. Callers see the
    prompt as they see a tool: an anonymous one only where the server opens it, then the permission.
    """
    built = form_prompt(form_class, template=template, **options)
    registry_for(server or default_server).add_prompt(built)
    return built


def autodiscover() -> None:
    """Import every installed app's ``mcp_tools`` module, as the admin does with ``admin.py``."""
    autodiscover_modules("mcp_tools")
