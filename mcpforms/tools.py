"""``FormTool``: a Django form as an MCP tool, declared the way a ``ModelAdmin`` is.

Options are class attributes, behaviour is overridable methods::

    class SignupTool(mcpforms.FormTool):
        form_class = SignupForm
        ask = "missing"

        def handle(self, request, form):
            return {"created": True}

    mcpforms.register(SignupTool)

``mcpforms.register(SignupForm, **options)`` builds such a subclass, as ``AdminSite.register`` does, and
``@mcpforms.tool(SignupForm, **options)`` makes the function it decorates the subclass's ``handle``. Bad
options are system checks (``mcpforms.tool_checks``), as a ``ModelAdmin``'s are. This module is the tool's
*definition*: its name, its schema for the model, its permission and the object it updates. Running a
round of it (routing, the UI, the URL-mode page, run-once) is ``mcpforms.serving``'s.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from typing import Any

from django import forms
from django.core.checks import CheckMessage
from django.core.exceptions import ImproperlyConfigured
from django.db import models
from django.utils.text import camel_case_to_spaces

from mcpforms.fields import AutoFormField, declared_fields, fields_for_form, form_fields, secret_names
from mcpforms.flow import Ask, Path
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.primitives import NAME_PATTERN, NAME_RULE
from mcpforms.protocol.server import anonymous_may_use
from mcpforms.protocol.state import ANONYMOUS
from mcpforms.schema import OTHER_PATH_TYPES, property_schema
from mcpforms.tool_checks import FormToolChecks, field_errors

_NAME = re.compile(NAME_PATTERN)
# The methods that list what a caller may use (rather than use it).
_LISTINGS = frozenset({"tools/list", "prompts/list"})
# What the description promises the model about asking the user: each sentence must hold for every call
# of a tool with that policy, since the model plans its arguments (and what it tells the user) from it.
_ASK_PROMISES: Mapping[str, str] = {
    "missing": "Missing details are asked from the user.",
    "always": "The user reviews and confirms the details before every call runs.",
    "never": "Pass every required argument: the user is never asked for anything.",
}
# path="url" sends every call to the URL-mode page, whatever ``ask`` says.
_ON_THE_PAGE = "The user fills in the form on a web page before every call runs; arguments prefill it."

# What a form tool's handler is: handler(request, the valid bound form) -> result. Not a protocol handler
# (ToolHandler takes the arguments): it runs once, on a valid form, as FormTool.handle.
FormHandler = Callable[[RequestContext, Any], Any]
_DEFAULT_PERMISSION: Any = object()  # "the change permission of the model for updates, else none"
#: ``result_fields`` for every field of the row, in the spelling of a ``ModelForm``'s ``fields``.
ALL_FIELDS = "__all__"


class RegistrationError(ImproperlyConfigured):
    """A form could not be registered: no form class, a bad or taken name, or a call with unknown options.
    Bad option values are system checks instead (``mcpforms.tool_checks``)."""


def default_name(form_class: type[forms.BaseForm]) -> str:
    """``SignupForm`` → ``signup``; ``TicketCreateForm`` → ``ticket_create``."""
    words = camel_case_to_spaces(form_class.__name__).split()
    if len(words) > 1 and words[-1] == "form":
        words = words[:-1]
    return "_".join(words)


def check_name(name: str, *, kind: str) -> None:
    """Raise ``RegistrationError`` unless ``name`` follows the one name rule of tools and prompts."""
    if not _NAME.fullmatch(name):
        raise RegistrationError(f"{kind} name {name!r} must be {NAME_RULE}")


def check_convertible(form_class: type[forms.BaseForm]) -> None:
    """Raise ``RegistrationError`` when the form has too many fields or a declared field has no mapping
    (without instantiating the form): what a form tool reports as ``mcpforms.E405`` or ``E406``."""
    for error in field_errors(form_class):
        raise RegistrationError(error.msg)


def describe_form(form_class: type[forms.BaseForm], description: str, title: str) -> str:
    # A class's own docstring only: __doc__ is not inherited, so Form's docstring never leaks in.
    text = description or (inspect.cleandoc(form_class.__doc__) if form_class.__doc__ else "")
    return text or f"Fill in the {title} form."


def _ask_promise(ask: str, path: str) -> str:
    """The sentence a tool's description ends with: what happens when the model calls it. Nothing for an
    ``ask`` that fails its check (``mcpforms.E401``): ``manage.py mcpforms_tools`` still describes it."""
    return _ON_THE_PAGE if path == "url" else _ASK_PROMISES.get(ask, "")


def anonymous_shut_out(request: RequestContext, name: str) -> bool:
    """Whether ``request`` comes from a caller nobody authenticated, to whom its server does not open the
    tool or prompt ``name`` (``Offering.anonymous_policy``).

    Except in a listing for a caller who may sign in (OAuth at the edge): a listing then shows them
    what signing in opens, so that the model may call it and the call ask them to sign in (a 401, on
    which hosts offer sign-in; a tool nobody lists is one the model never tries, and its user is never
    asked). What also needs a permission stays out of it (``has_permission``): signing in opens that to
    some users only, and the listing would show every stranger its name and schema.
    """
    if request.principal != ANONYMOUS or anonymous_may_use(request.server, name):
        return False
    return not (request.may_sign_in and request.method in _LISTINGS)


def holds(request: RequestContext, permission: str | None) -> bool:
    """Whether the user of ``request`` has ``permission`` (``app_label.codename``); None needs none."""
    user = request.user
    return not permission or (user is not None and user.has_perm(permission))


def _is_model_form(form_class: type[forms.BaseForm]) -> bool:
    return issubclass(form_class, forms.BaseModelForm)


class FormTool:
    """One form offered as a tool. Subclass it, set ``form_class`` and the options you need, override the
    methods whose default does not fit, and register the subclass with ``mcpforms.register``.

    Options are read where they are needed, through the ``get_*`` methods, and never rewritten: a bad
    one is a system check (``checks_class``), not an exception."""

    #: The Django form (a ``Form`` or a ``ModelForm``) the tool asks for and validates with.
    form_class: type[forms.BaseForm]
    #: The tool's name; empty means the form's (``SignupForm`` → ``signup``).
    name: str = ""
    #: What hosts show; by default the name in words (``get_title``).
    title: str = ""
    #: What the model reads; by default the form's docstring (``get_description`` adds the ask policy).
    description: str = ""
    #: What the user reads above the form; by default "Please fill in: <title>" (``get_message``).
    message: str = ""
    #: When to ask the user: for what is ``"missing"`` or invalid, ``"always"`` (to confirm), or ``"never"``.
    ask: Ask = "missing"
    #: Which ways the user may fill the form: ``"auto"`` (the UI of an MCP Apps host, else a form
    #: elicitation), ``"form"`` (never the UI) or ``"url"`` (always the URL-mode page).
    path: Path = "auto"
    #: The permission a caller needs, as ``app_label.codename``; None for none. By default updates need
    #: the model's change permission and everything else none.
    permission: str | None = _DEFAULT_PERMISSION
    #: A ModelForm tool that changes the object named by the ``lookup`` argument instead of adding one.
    update: bool = False
    #: The field an update looks the object up by, passed as an argument of the same name.
    lookup: str = "pk"
    #: The tool's ``outputSchema``, for a handler that returns ``structuredContent``; None for none.
    output_schema: Mapping[str, Any] | None = None
    #: The tool's annotations; by default what the default handler does (see ``default_annotations``).
    annotations: Mapping[str, Any] | None = None
    #: The version of the form's definition, bound into every requestState (admin-defined forms).
    version: str | None = None
    #: OAuth scopes (space-separated) an access token must carry to call the tool, besides the
    #: endpoint's own (``OAUTH_SCOPES``); checked in addition to ``permission``, which still decides.
    #: Personal access tokens and sessions carry every scope.
    scope: str | None = None
    #: Who must approve a call before ``handle`` runs: a permission (``app_label.codename``) staff hold,
    #: or a callable ``(approver, task) -> bool``. The form is gathered and validated as usual; its final
    #: round becomes a task that waits for a decision in the admin (``mcpforms.approvals``).
    approval: str | Callable[[Any, Any], bool] | None = None
    #: What a client that cannot follow a task (no tasks extension, or the 2025 era) gets from an
    #: ``approval`` tool: False (the default) queues the request all the same and says so in the result;
    #: True answers -32021 naming the extension instead.
    approval_requires_tasks: bool = False
    #: Run ``handle`` through Django's tasks framework for a client that follows tasks (the call answers
    #: with a task, polled until the handler is done); other clients get the result in the request.
    background: bool = False
    #: What the result carries of a model instance the handler returns (the saved object, by default):
    #: None for its pk and the form's own fields (never a password), a list of model field names, or
    #: ``"__all__"`` for every field of the row. The result reaches the model and the host's logs.
    result_fields: Sequence[str] | str | None = None
    #: How long (seconds) a task of the tool lives; by default ``MCPFORMS["TASK_TTL"]``.
    task_ttl: int | None = None
    #: What checks the options (``manage.py check``, and before the tool is served).
    checks_class: type[FormToolChecks] = FormToolChecks

    def __init__(self) -> None:
        # The form class and the name are what the registry files the tool under, so they are settled
        # here, once; every other option is checked by check().
        form_class = getattr(self, "form_class", None)
        if not (isinstance(form_class, type) and issubclass(form_class, forms.BaseForm)):
            raise RegistrationError(f"{type(self).__name__}.form_class must be a Django form class.")
        self.name = self.name or default_name(form_class)
        check_name(self.name, kind="Tool")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"

    def check(self, **kwargs: Any) -> list[CheckMessage]:
        """The system check messages of the tool's options (``mcpforms.E401`` and on)."""
        return self.checks_class().check(self, **kwargs)

    # Overridable behaviour ------------------------------------------------------------------------------

    def get_title(self) -> str:
        """What hosts show for the tool: ``title``, or the name in words (``call_me_back`` → "Call me
        back")."""
        return self.title or self.name.replace("_", " ").capitalize()

    def get_description(self) -> str:
        """What the model reads: ``description`` or the form's docstring, then what the ask policy does."""
        described = describe_form(self.form_class, self.description, self.get_title())
        return f"{described} {_ask_promise(self.ask, self.path)}".rstrip()

    def get_message(self) -> str:
        """What the user reads above the form: ``message``, or "Please fill in: <title>"."""
        return self.message or f"Please fill in: {self.get_title()}"

    def required_permission(self) -> str | None:
        if self.permission is not _DEFAULT_PERMISSION:
            return self.permission
        if self.update:
            opts = self.form_class._meta.model._meta  # type: ignore[attr-defined]
            return f"{opts.app_label}.change_{opts.model_name}"
        return None

    @property
    def required_scopes(self) -> tuple[str, ...]:
        """The scopes of ``scope``, which a caller's access token must all carry to call the tool."""
        return tuple(self.scope.split()) if self.scope else ()

    def may_use(self, request: RequestContext) -> bool:
        """Whether this request may see and use the tool, its submit tool and its ``ui://`` form: an
        anonymous caller only where its server lets anonymous callers use the tool
        (``Offering.anonymous_policy``), then ``has_permission``."""
        return not anonymous_shut_out(request, self.name) and self.has_permission(request)

    def has_permission(self, request: RequestContext) -> bool:
        """Whether this request may use the tool; by default, whether its user has ``permission``."""
        return holds(request, self.required_permission())

    def may_approve(self, approver: Any, task: Any) -> bool:
        """Whether ``approver`` (a user) may decide the approval request ``task`` (a ``ToolTask``): they
        hold the ``approval`` permission, or the ``approval`` callable says so."""
        if self.approval is None or approver is None or not getattr(approver, "is_active", False):
            return False
        # Read as declared: a function set as a class attribute would otherwise be called as a method.
        rule = inspect.getattr_static(self, "approval")
        rule = rule.__func__ if isinstance(rule, staticmethod) else rule
        if callable(rule):
            return bool(rule(approver, task))
        return bool(approver.has_perm(rule))

    @property
    def makes_tasks(self) -> bool:
        """Whether a call may become a task: it waits for approval, or its handler runs in the background."""
        return self.approval is not None or self.background

    def get_result_fields(self, form: forms.BaseForm) -> tuple[str, ...] | None:
        """The model fields a result shows of a saved object besides its pk, None for all of them:
        ``result_fields``, or by default the fields of the valid ``form`` but its passwords."""
        if self.result_fields == ALL_FIELDS:
            return None
        if self.result_fields is not None:
            return tuple(self.result_fields)
        secret = secret_names(form)
        return tuple(name for name in form.fields if name not in secret)

    def get_queryset(self, request: RequestContext) -> models.QuerySet[Any]:
        """The objects an update may change (``update=True``); by default all of the model's."""
        model: type[models.Model] = self.form_class._meta.model  # type: ignore[attr-defined]
        return model._default_manager.all()

    def get_form_kwargs(self, request: RequestContext) -> dict[str, Any]:
        """Extra keyword arguments for the form's ``__init__`` (the user, say); by default none."""
        return {}

    def handle(self, request: RequestContext, form: forms.BaseForm) -> Any:
        """Run on the valid form, once per completed call; return the result (text, a dict, a model
        instance or a CallToolResult). By default a ModelForm saves and returns the saved object, any other
        form with a ``save`` method calls it, and a plain form returns its cleaned data."""
        save = getattr(form, "save", None)
        if not callable(save):
            # A password never goes back into a tool result, where the model and the host's logs see it.
            secret = secret_names(form)
            return {name: value for name, value in form.cleaned_data.items() if name not in secret}
        saved = save()
        if isinstance(saved, models.Model):
            saved.refresh_from_db()  # report what the database stored (defaults, coercions), not what we sent
        return saved

    # The fields -----------------------------------------------------------------------------------------

    def fields_for(self, request: RequestContext | None) -> list[AutoFormField]:
        """The form's fields as ``request`` sees them (its ``get_form_kwargs``). Without a request (a
        listing, a system check), a form that needs ``get_form_kwargs`` shows the fields its class
        declares: building it without them could fail, or show another caller's choices."""
        if request is not None:
            return form_fields(self.form_class, **self.get_form_kwargs(request))
        if type(self).get_form_kwargs is not FormTool.get_form_kwargs:
            return declared_fields(self.form_class)
        return fields_for_form(self.form_class)

    # The definition on the wire -------------------------------------------------------------------------

    @property
    def has_own_handler(self) -> bool:
        return type(self).handle is not FormTool.handle

    @cached_property
    def _listed_fields(self) -> tuple[dict[str, Any], bool]:
        """What a listing needs of the fields, read once per tool, when a listing or a call first needs
        it: the input schema, and whether a field is one only the URL-mode page collects."""
        fields = self.fields_for(None)
        return self._schema(fields), any(auto.page_only for auto in fields)

    @property
    def input_schema(self) -> dict[str, Any]:
        """Full JSON Schema for the model: every field optional, so it passes only what it knows."""
        return self._listed_fields[0]

    def _schema(self, fields: list[AutoFormField]) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        if self.update:
            properties[self.lookup] = {
                "type": ["string", "integer"],
                "description": f"The {self.lookup} of the object to change.",
            }
        for auto in fields:
            if auto.page_only:
                continue  # never through the model: URL mode or the HTML form collect these
            prop: dict[str, Any] = (
                property_schema(auto) if auto.type not in OTHER_PATH_TYPES else {"type": "string"}
            )
            # The same default the user sees prefilled; a field the model leaves out takes it when
            # nobody can be asked (JSON Schema: the value assumed when absent).
            if auto.placeholder:
                prop["examples"] = [auto.placeholder]
            properties[auto.name] = prop
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if self.update:
            schema["required"] = [self.lookup]
        return schema

    def default_annotations(self) -> dict[str, Any]:
        annotations: dict[str, Any] = {"title": self.get_title()}
        if self.has_own_handler:
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
    def tool_annotations(self) -> dict[str, Any]:
        return dict(self.annotations) if self.annotations is not None else self.default_annotations()

    @cached_property
    def uses_app(self) -> bool:
        """Whether MCP Apps hosts get the form UI: not for forms whose passwords or files only the URL-mode
        page may collect, nor when the tool's path rules the App out, nor for ``ask="always"``: the UI's
        submit tool is one a client without MCP Apps shows the model, which could call it without the
        user (spec §11.2: the server cannot tell who calls), and "always" promises the user confirms."""
        # An approval request is made by a call of the tool, never by its UI's submit tool, which a host
        # calls without the tasks extension.
        if self.approval is not None:
            return False
        # The options first: a tool they rule out has its form read no sooner than a listing needs it.
        return self.path == "auto" and self.ask != "always" and not self._listed_fields[1]


def raise_for_check_errors(form_tool: FormTool) -> None:
    """Raise ``ImproperlyConfigured`` with the first error of the tool's checks: a tool whose options fail
    them is never served, by a server that was started without ``manage.py check`` too."""
    for message in form_tool.check():
        if message.is_serious():
            raise ImproperlyConfigured(f"{form_tool!r} ({message.id}): {message.msg}")


def tool_class(
    form_class: type[forms.BaseForm],
    *,
    handler: FormHandler | None = None,
    queryset: Callable[[RequestContext], models.QuerySet[Any]] | None = None,
    form_kwargs: Callable[[RequestContext], Mapping[str, Any]] | None = None,
    **options: Any,
) -> type[FormTool]:
    """Build the ``FormTool`` subclass ``register(form_class, **options)`` and ``@tool`` stand for, as
    ``AdminSite.register`` builds a ``ModelAdmin``: options become class attributes, and the callables
    (``handler``, ``queryset``, ``form_kwargs``) the methods they stand for."""
    if unknown := set(options) - set(_OPTIONS):
        valid = ", ".join(sorted(_CALLABLES + _OPTIONS))
        raise RegistrationError(f"Unknown option(s) {', '.join(sorted(unknown))}; valid: {valid}.")
    if "name" in options:
        check_name(options["name"], kind="Tool")  # given, so never derived: "" is a bad name, not "default"
    attrs: dict[str, Any] = {"form_class": form_class, **options}
    if handler is not None:
        attrs["handle"] = lambda self, request, form: handler(request, form)
    if queryset is not None:
        attrs["get_queryset"] = lambda self, request: queryset(request)
    if form_kwargs is not None:
        attrs["get_form_kwargs"] = lambda self, request: dict(form_kwargs(request))
    return type(f"{form_class.__name__}Tool", (FormTool,), attrs)


_OPTIONS = (
    "name",
    "title",
    "description",
    "message",
    "ask",
    "path",
    "permission",
    "update",
    "lookup",
    "output_schema",
    "annotations",
    "version",
    "scope",
    "approval",
    "approval_requires_tasks",
    "background",
    "task_ttl",
    "result_fields",
)
_CALLABLES = ("handler", "queryset", "form_kwargs")

# The public names (docs/reference/api.md); the rest serve the package's other modules.
__all__ = ["FormTool", "RegistrationError"]
