"""A Django form as an MCP tool: its definition on the wire, and one round of a call, on every path.

``FormTool`` is what ``register()`` and the admin's definitions build; the client's capabilities choose,
per request, between the form UI (MCP Apps), a form elicitation, the URL-mode page and the missing-fields
result, and every path ends in the same validation and the same handler, run once.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from django import forms
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.db import IntegrityError, models, transaction
from django.utils.text import camel_case_to_spaces

from mcpforms import pages, ui
from mcpforms.fields import PAGE_TYPES, _converter_for, fields_for_form, form_fields
from mcpforms.flow import ASK_MODES, Ask, Asking, FormFlow, NeedsPage, Ready, Refused, Showing, run
from mcpforms.output import error_result, to_json, tool_result
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.primitives import Tool
from mcpforms.protocol.server import Server
from mcpforms.schema import OTHER_PATH_TYPES, property_schema

# Stricter than the protocol's own pattern: no "/" so a name reads the same in every client.
TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
ASKS_LATER = "Missing details are asked from the user."

Handler = Callable[[RequestContext, Any], Any]  # (request, the valid bound form) -> result
DEFAULT_PERMISSION: Any = object()


class RegistrationError(ImproperlyConfigured):
    """A form could not be registered: bad or taken name, bad option, unconvertible field."""


def default_name(form_class: type[forms.BaseForm]) -> str:
    """``SignupForm`` → ``signup``; ``TicketCreateForm`` → ``ticket_create``."""
    words = camel_case_to_spaces(form_class.__name__).split()
    if len(words) > 1 and words[-1] == "form":
        words = words[:-1]
    return "_".join(words)


def _is_model_form(form_class: type[forms.BaseForm]) -> bool:
    return issubclass(form_class, forms.BaseModelForm)


def _save_or_echo(request: RequestContext, form: forms.BaseForm) -> Any:
    """The default handler: a ModelForm saves and returns the saved object; any other form with a ``save``
    method calls it; a plain form returns its cleaned data."""
    save = getattr(form, "save", None)
    if not callable(save):
        # A password never goes back into a tool result, where the model and the host's logs would see it.
        return {
            name: value
            for name, value in form.cleaned_data.items()
            if not isinstance(form.fields[name].widget, forms.PasswordInput)
        }
    saved = save()
    if isinstance(saved, models.Model):
        saved.refresh_from_db()  # report what the database stored (defaults, coercions), not what we sent
    return saved


def check_name(name: str, *, kind: str) -> None:
    """Raise ``RegistrationError`` unless ``name`` fits ``TOOL_NAME`` (prompts follow the same rule)."""
    if not TOOL_NAME.fullmatch(name):
        raise RegistrationError(f"{kind} name {name!r} must be 1-64 characters of A-Z a-z 0-9 _ . -")


def check_convertible(form_class: type[forms.BaseForm]) -> None:
    """Raise ``RegistrationError`` when a declared field has no mapping (without instantiating the form)."""
    declared: dict[str, forms.Field] = getattr(form_class, "base_fields", {})  # set by the form metaclass
    for name, form_field in declared.items():
        if _converter_for(type(form_field)) is None:
            raise RegistrationError(
                f"{form_class.__name__}.{name}: {type(form_field).__name__} has no mapping; register one "
                "with mcpforms.fields.register_converter"
            )


@dataclass(frozen=True)
class FormTool:
    """One registered form and how it runs as a tool."""

    name: str
    form_class: type[forms.BaseForm]
    handler: Handler
    title: str
    description: str
    message: str
    ask: Ask
    permission: str | None
    update: bool
    lookup: str
    queryset: Callable[[RequestContext], models.QuerySet[Any]] | None
    form_kwargs: Callable[[RequestContext], Mapping[str, Any]] | None
    output_schema: Mapping[str, Any] | None
    annotations: Mapping[str, Any] | None
    custom_handler: bool = False
    version: str | None = None
    path: ui.Path = "auto"

    @property
    def flow(self) -> FormFlow:
        return FormFlow(
            self.form_class, key=self.name, message=self.message, ask=self.ask, form_kwargs=self.form_kwargs
        )

    def input_schema(self) -> dict[str, Any]:
        """Full JSON Schema for the model: every field optional, so it passes only what it knows."""
        properties: dict[str, Any] = {}
        if self.update:
            properties[self.lookup] = {
                "type": ["string", "integer"],
                "description": f"The {self.lookup} of the object to change.",
            }
        for auto in fields_for_form(self.form_class):
            if auto.type in PAGE_TYPES:
                continue  # never through the model: URL mode or the HTML form collect these
            prop: dict[str, Any] = (
                property_schema(auto) if auto.type not in OTHER_PATH_TYPES else {"type": "string"}
            )
            prop.pop("default", None)  # a default here would read as "the model should send this"
            if auto.placeholder:
                prop["examples"] = [auto.placeholder]
            properties[auto.name] = prop
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if self.update:
            schema["required"] = [self.lookup]
        return schema

    def default_annotations(self) -> dict[str, Any]:
        annotations: dict[str, Any] = {"title": self.title}
        if self.custom_handler:
            return annotations  # only the author knows what their handler does
        if _is_model_form(self.form_class):
            # Saving creates (additive) or overwrites (destructive); saving twice creates twice.
            return annotations | {
                "readOnlyHint": False,
                "destructiveHint": self.update,
                "idempotentHint": self.update,
                "openWorldHint": False,
            }
        if not callable(getattr(self.form_class, "save", None)):
            return annotations | {"readOnlyHint": True, "openWorldHint": False}
        return annotations

    @cached_property
    def uses_app(self) -> bool:
        """Whether MCP Apps hosts get the form UI: not for forms whose passwords or files only the URL-mode
        page may collect, nor when the tool's path rules the App out, nor for ``ask="always"``: the UI's
        submit tool is one a client without MCP Apps shows the model, which could call it without the
        user (spec §11.2: the server cannot tell who calls), and "always" promises the user confirms."""
        declared: dict[str, forms.Field] = getattr(self.form_class, "base_fields", {})
        on_page = any(isinstance(f.widget, forms.PasswordInput | forms.FileInput) for f in declared.values())
        return self.path == "auto" and not on_page and self.ask != "always"

    @cached_property
    def tool(self) -> Tool:
        return Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=self.input_schema(),
            handler=self.call,
            annotations=self.annotations if self.annotations is not None else self.default_annotations(),
            output_schema=self.output_schema,
            meta=ui.tool_meta(self.name) if self.uses_app else None,
            state_version=None if self.version is None else lambda: self.version,
        )

    @cached_property
    def submit_tool(self) -> Tool:
        """The app-only tool the form UI calls with the field values as arguments (spec §11.5)."""
        return Tool(
            name=ui.submit_name(self.name),
            title=f"Submit {self.title}",
            description=f"Submit the {self.title} form from its UI, with the field values as arguments.",
            input_schema=self.input_schema(),
            handler=self.submit,
            annotations=self.annotations if self.annotations is not None else self.default_annotations(),
            meta=ui.tool_meta(self.name, app_only=True),
        )

    @property
    def tools(self) -> tuple[Tool, ...]:
        """What ``tools/list`` shows for this form: the tool, and the submit tool of its UI if it has one."""
        return (self.tool, self.submit_tool) if self.uses_app else (self.tool,)

    # Running -------------------------------------------------------------------------------------------

    def _instance(self, ctx: RequestContext, arguments: Mapping[str, Any]) -> models.Model | None:
        if not self.update:
            return None
        key = arguments.get(self.lookup)
        if isinstance(key, bool) or not isinstance(key, str | int):
            raise _ToolRefusal(
                f"Pass the {self.lookup} of the object to change as the {self.lookup!r} argument."
            )
        meta = self.form_class._meta  # type: ignore[attr-defined]
        queryset = self.queryset(ctx) if self.queryset else meta.model._default_manager.all()
        try:
            return queryset.get(**{self.lookup: key})  # type: ignore[no-any-return]
        except (queryset.model.DoesNotExist, ValidationError, ValueError, TypeError):
            raise _ToolRefusal(f"No {meta.model._meta.verbose_name} with {self.lookup} {key!r}.") from None

    def _permission(self) -> str | None:
        if self.permission is not DEFAULT_PERMISSION:
            return self.permission
        if self.update:
            opts = self.form_class._meta.model._meta  # type: ignore[attr-defined]
            return f"{opts.app_label}.change_{opts.model_name}"
        return None

    def permission_refusal(self, ctx: RequestContext) -> str | None:
        """Why this request may not use the tool, or None."""
        permission = self._permission()
        user = ctx.user
        if permission and not (user is not None and user.has_perm(permission)):
            return f"Permission denied: {self.name} needs the {permission!r} permission."
        return None

    def _admit(
        self, ctx: RequestContext, arguments: Mapping[str, Any]
    ) -> tuple[models.Model | None, dict[str, Any] | None]:
        """Check the permission and find the object to update: (instance, None), or (None, the refusal)."""
        if refusal := self.permission_refusal(ctx):
            return None, error_result(refusal)
        try:
            return self._instance(ctx, arguments), None
        except _ToolRefusal as refusal:
            return None, error_result(str(refusal))

    def call(self, ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
        """Run one round. The client's capabilities choose the path, per request: the form UI on an MCP Apps
        host, else a form elicitation, else the missing-fields result; passwords and files (and URL-only
        forms) go to the URL-mode page (spec §7.3, §11.5)."""
        instance, refused = self._admit(ctx, arguments)
        if refused is not None:
            return refused
        waiting = pages.pending_page(ctx)
        if waiting is not None:
            return pages.resume_page(ctx, waiting, form_tool=self)
        if self.path == "url":
            return pages.ask_page(ctx, form_tool=self, values=_given(arguments, self), problems=())
        route = ui.choose_route(ctx, "auto" if self.uses_app else "form")
        outcome = run(
            self.flow,
            ctx,
            arguments,
            instance=instance,
            confirm_label=f"the {self.title} form",
            app=route == "app",
        )
        if isinstance(outcome, Asking):
            return outcome.result
        if isinstance(outcome, Refused):
            return error_result(outcome.text)
        if isinstance(outcome, NeedsPage):
            return pages.ask_page(ctx, form_tool=self, values=outcome.values, problems=outcome.problems)
        if isinstance(outcome, Showing):
            return self._show(outcome)
        return self._complete(ctx, outcome)

    def _show(self, showing: Showing) -> dict[str, Any]:
        result = ui.display_form(
            list(showing.fields), self.name, title=self.title, submit=ui.submit_name(self.name)
        )
        # The UI prefills from these and shows the model's invalid values next to their fields.
        result["structuredContent"] |= {"values": to_json(showing.values), "errors": showing.errors}
        return result

    def submit(self, ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
        """The app-only submit tool: validate the UI's values with the form and run the handler once.

        Errors come back as ``isError`` with Django's messages per field in ``structuredContent.errors``,
        so the UI shows each next to its input (spec §11.5 step 4).
        """
        instance, refused = self._admit(ctx, arguments)
        if refused is not None:
            return refused
        # The user filled the form themselves: nothing is asked, the values are judged as they are.
        outcome = run(
            replace(self.flow, ask="never"),
            _silent(ctx),
            arguments,
            instance=instance,
            confirm_label=f"the {self.title} form",
        )
        if isinstance(outcome, Ready):
            return self._complete(ctx, outcome)
        if isinstance(outcome, Refused):
            result = error_result(outcome.text)
            result["structuredContent"] = {"errors": dict(outcome.errors)}
            return result
        return error_result(f"The {self.title} form could not be submitted from its UI.")

    def read_ui(self, ctx: RequestContext, uri: str) -> dict[str, Any]:
        """The ``ui://`` resource: the form rendered by ``mcpforms/form.html`` as an MCP App (spec §11.3)."""
        html = ui.render_form(
            self.form_class(**self.flow.kwargs_for(ctx)),
            title=self.title,
            description=self.message,
            mode="app",
            submit=ui.submit_name(self.name),
        )
        return ui.read_result(uri, html)

    def page_form(
        self, ctx: RequestContext, *, data: Any = None, files: Any = None, initial: Any = None
    ) -> forms.BaseForm:
        """The form of the URL-mode page, bound to the submitted ``data`` and ``files`` when given."""
        kwargs = self.flow.kwargs_for(ctx, instance=self._instance(ctx, ctx.arguments))
        if data is None:
            return self.form_class(initial=initial, **kwargs)
        return self.form_class(data=data, files=files, **kwargs)

    def run_handler(self, ctx: RequestContext, form: forms.BaseForm) -> dict[str, Any]:
        """Run the handler on a valid form and return the CallToolResult (the URL-mode page's submission)."""
        return tool_result(self.handler(ctx, form))

    def _complete(self, ctx: RequestContext, ready: Ready) -> dict[str, Any]:
        from mcpforms.models import CompletedFlow

        with transaction.atomic():
            if ctx.request_state is not None:
                # The last round of a flow may reach us twice (a client retry): run the handler once.
                try:
                    with transaction.atomic():
                        CompletedFlow.record(ctx.request_state)
                except IntegrityError:
                    return error_result(
                        f"This {self.title} form was already submitted; it was not submitted again."
                    )
            return self.run_handler(ctx, ready.form)


class _ToolRefusal(Exception):
    pass


def _silent(ctx: RequestContext) -> RequestContext:
    """The context as it is, minus any way to ask: the flow then only judges the values it has."""
    return replace(ctx, client_capabilities={}, input_responses=None, request_state=None)


def _given(arguments: Any, form_tool: FormTool) -> dict[str, Any]:
    known = {auto.name for auto in form_fields(form_tool.form_class) if auto.type not in PAGE_TYPES}
    return {k: v for k, v in arguments.items() if k in known} if isinstance(arguments, dict) else {}


def find_form_tool(server: Server, name: str) -> FormTool | None:
    """The FormTool behind the tool ``name`` of ``server``: registered in code or defined in the admin."""
    tool = server.tools.get(name)
    owner = getattr(tool.handler, "__self__", None) if tool is not None else None
    return owner if isinstance(owner, FormTool) else None


def describe_form(form_class: type[forms.BaseForm], description: str | None, title: str) -> str:
    # A class's own docstring only: __doc__ is not inherited, so Form's docstring never leaks in.
    text = description or (inspect.cleandoc(form_class.__doc__) if form_class.__doc__ else "")
    return text or f"Fill in the {title} form."


def form_tool(
    form_class: type[forms.BaseForm],
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    message: str | None = None,
    permission: str | None = DEFAULT_PERMISSION,
    ask: Ask = "missing",
    update: bool = False,
    lookup: str = "pk",
    queryset: Callable[[RequestContext], models.QuerySet[Any]] | None = None,
    form_kwargs: Callable[[RequestContext], Mapping[str, Any]] | None = None,
    output_schema: Mapping[str, Any] | None = None,
    annotations: Mapping[str, Any] | None = None,
    handler: Handler | None = None,
    version: str | None = None,
    path: ui.Path = "auto",
) -> FormTool:
    """Build (and check) the tool for ``form_class`` without registering it; ``register`` takes the same
    options. ``version`` names the form's current definition: a requestState minted for another is refused.
    ``path`` chooses how the user fills the form: ``"auto"`` (the form UI on MCP Apps hosts, else a form
    elicitation), ``"form"`` (never the UI) or ``"url"`` (always the URL-mode page).
    """
    if ask not in ASK_MODES:
        raise RegistrationError(f"ask={ask!r} is not one of {', '.join(ASK_MODES)}.")
    if path not in ui.PATHS:
        raise RegistrationError(f"path={path!r} is not one of {', '.join(ui.PATHS)}.")
    if update and not _is_model_form(form_class):
        raise RegistrationError(f"update=True needs a ModelForm; {form_class.__name__} is not one.")
    check_convertible(form_class)
    tool_name = default_name(form_class) if name is None else name
    check_name(tool_name, kind="Tool")
    tool_title = title or tool_name.replace("_", " ").capitalize()
    return FormTool(
        name=tool_name,
        form_class=form_class,
        handler=handler or _save_or_echo,
        title=tool_title,
        description=f"{describe_form(form_class, description, tool_title)} {ASKS_LATER}",
        message=message or f"Please fill in: {tool_title}",
        ask=ask,
        permission=permission,
        update=update,
        lookup=lookup,
        queryset=queryset,
        form_kwargs=form_kwargs,
        output_schema=output_schema,
        annotations=annotations,
        custom_handler=handler is not None,
        version=version,
        path=path,
    )
