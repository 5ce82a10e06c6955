"""An existing django-formtools ``WizardView`` served as a multi-step tool (``mcpforms.register_wizard``).

The view's own ``form_list``, ``condition_dict``, form hooks and ``done()`` are reused: each round makes
one instance of the view, whose request is the MCP caller and whose "storage" is the round's walk (the
cleaned data of the steps validated so far), and the hooks are asked through it. formtools itself is only
imported by the view being adapted: this module needs nothing of it.
"""

from __future__ import annotations

import importlib.metadata
import itertools
import threading
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

from django import forms
from django.core.checks import CheckMessage, Error
from django.http import HttpRequest, StreamingHttpResponse
from django.http.response import HttpResponseBase, HttpResponseRedirectBase
from django.template.response import SimpleTemplateResponse
from django.utils.text import camel_case_to_spaces

from mcpforms.conf import conf, install_extra
from mcpforms.protocol.context import RequestContext
from mcpforms.tool_checks import CheckedTool, FormToolChecks
from mcpforms.tools import RegistrationError
from mcpforms.wizards import WizardTool, WizardToolChecks, default_name

#: What ``register_wizard`` takes besides the view: the options a wizard acts on, and ``handle``.
VIEW_OPTIONS = (
    "name",
    "title",
    "description",
    "message",
    "permission",
    "scope",
    "output_schema",
    "annotations",
    "always_ask",
)


class _McpView:
    """Mixed in before a formtools view: what it reads of the earlier steps comes from the round's walk (the
    cleaned data of the active steps validated so far), not from a storage backend."""

    mcp_cleaned: Mapping[str, Mapping[str, Any]] = {}

    def get_cleaned_data_for_step(self, step: str) -> Mapping[str, Any] | None:
        return self.mcp_cleaned.get(step)

    def get_all_cleaned_data(self) -> dict[str, Any]:
        return {name: value for cleaned in self.mcp_cleaned.values() for name, value in cleaned.items()}


#: The first django-formtools release ``register_wizard`` is proven with (the ``mcpforms[wizards]`` extra).
FORMTOOLS_AT_LEAST = (2, 7)


class ViewWizardToolChecks(WizardToolChecks):
    """A wizard's checks, and the django-formtools the adapted view is written for."""

    def check(self, tool: CheckedTool, **kwargs: Any) -> list[CheckMessage]:
        return [*super().check(tool, **kwargs), *_check_formtools(tool)]


def _check_formtools(tool: CheckedTool) -> list[CheckMessage]:
    try:
        installed: str | None = importlib.metadata.version("django-formtools")
    except importlib.metadata.PackageNotFoundError:
        installed = None
    if installed is not None and _release(installed) >= FORMTOOLS_AT_LEAST:
        return []
    wanted = ".".join(map(str, FORMTOOLS_AT_LEAST))
    found = f"django-formtools {installed} is installed" if installed else "django-formtools is not installed"
    return [
        Error(
            f"register_wizard adapts a django-formtools view, and {found}; mcpforms needs {wanted} or later.",
            hint=install_extra("wizards"),
            obj=tool,
            id="mcpforms.E415",
        )
    ]


def _release(version: str) -> tuple[int, ...]:
    """``"2.7.1"`` → ``(2, 7, 1)``; a pre-release's suffix is dropped (``"2.8rc1"`` → ``(2, 8)``)."""
    numbers = []
    for part in version.split("."):
        digits = "".join(itertools.takewhile(str.isdigit, part))
        if not digits:
            break
        numbers.append(int(digits))
    return tuple(numbers)


class ViewWizardTool(WizardTool):
    """A ``WizardTool`` whose steps, conditions, hooks and ``done`` are an existing formtools
    ``WizardView``'s (``view_class``); ``register_wizard`` builds it. A condition, a hook and ``done`` get
    a view instance as formtools sets one up: its ``request`` carries the MCP caller as ``user``, and its
    ``get_cleaned_data_for_step(step)`` answers from the steps validated before, in this round."""

    view_class: type[Any]
    checks_class: type[FormToolChecks] = ViewWizardToolChecks

    def __init__(self) -> None:
        super().__init__()
        self._round = threading.local()  # one round's view, per thread: a tool serves every call

    def view_for(
        self, request: RequestContext, cleaned: Mapping[str, Mapping[str, Any]] | None = None
    ) -> Any:
        """The view instance of this round. The walk passes ``cleaned`` (its own dict, filled as the steps
        validate) to every condition, and the hooks of the same round reuse the view it made."""
        current = getattr(self._round, "view", None)
        if (
            current is not None
            and self._round.request is request
            and (cleaned is None or current.mcp_cleaned is cleaned)
        ):
            return current
        view_class = self.view_class
        view = view_class(**view_class.get_initkwargs())
        view.setup(_django_request(request))
        view.prefix = view.get_prefix(view.request)
        view.mcp_cleaned = cleaned if cleaned is not None else {}
        self._round.view, self._round.request = view, request
        return view

    def is_active(self, request: RequestContext, step: str, cleaned: Mapping[str, Mapping[str, Any]]) -> bool:
        condition: Any = self.condition_dict.get(step, True)  # formtools': a bool, or a callable of the view
        return bool(condition(self.view_for(request, cleaned)) if callable(condition) else condition)

    def get_form_kwargs(self, request: RequestContext, step: str) -> dict[str, Any]:  # type: ignore[override]
        return dict(self.view_for(request).get_form_kwargs(step) or {})

    def get_form_initial(self, request: RequestContext, step: str) -> Mapping[str, Any] | None:
        initial: Mapping[str, Any] | None = self.view_for(request).get_form_initial(step)
        return initial

    def get_form_instance(self, request: RequestContext, step: str) -> Any:
        return self.view_for(request).get_form_instance(step)

    def handle(  # type: ignore[override]
        self, request: RequestContext, form_list: list[forms.BaseForm], form_dict: dict[str, forms.BaseForm]
    ) -> Any:
        view = self.view_for(request)
        view.mcp_cleaned = {step: form.cleaned_data for step, form in form_dict.items()}
        own = getattr(view, "handle", None)
        if callable(own):  # a handle(request, form_list, form_dict) on the view wins over its done()
            return own(request, form_list, form_dict)
        return done_value(view.done(form_list, form_dict=form_dict))


def wizard_tool_class(view_class: type[Any], **options: Any) -> type[ViewWizardTool]:
    """The ``ViewWizardTool`` subclass ``register_wizard(view_class, **options)`` stands for: the view's
    steps and conditions, the options as class attributes, and ``handle`` (a callable
    ``(request, form_list, form_dict)``) instead of the view's ``done``."""
    handle = options.pop("handle", None)
    if unknown := set(options) - set(VIEW_OPTIONS):
        valid = ", ".join(sorted((*VIEW_OPTIONS, "handle")))
        raise RegistrationError(f"Unknown option(s) {', '.join(sorted(unknown))}; valid: {valid}.")
    if not (isinstance(view_class, type) and callable(getattr(view_class, "get_initkwargs", None))):
        raise RegistrationError(f"register_wizard takes a formtools WizardView subclass, not {view_class!r}.")
    words = camel_case_to_spaces(view_class.__name__).split()
    while len(words) > 1 and words[-1] == "view":
        words.pop()
    attrs: dict[str, Any] = {
        "__doc__": view_class.__doc__,  # the view's own docstring describes the tool, as a form's does
        "view_class": type(
            view_class.__name__, (_McpView, view_class), {"__module__": view_class.__module__}
        ),
        # Read as formtools reads them, but without get_initkwargs, which refuses a file field before the
        # wizard's own registration error can say why.
        "form_list": list(getattr(view_class, "form_list", None) or ()),
        "condition_dict": dict(getattr(view_class, "condition_dict", None) or {}),
        "name": default_name("".join(word.capitalize() for word in words)),
        **options,
    }
    if handle is not None:
        attrs["handle"] = lambda self, request, form_list, form_dict: handle(request, form_list, form_dict)
    return type(f"{view_class.__name__}Tool", (ViewWizardTool,), attrs)


def _django_request(request: RequestContext) -> HttpRequest:
    """What a formtools view reads of its request: who the caller is (``user``; ``mcp`` is the rest)."""
    from django.contrib.auth.models import AnonymousUser  # needs the app registry, loaded after this module

    django_request = HttpRequest()
    django_request.method = "POST"
    django_request.user = request.user if request.user is not None else AnonymousUser()
    django_request.mcp = request  # type: ignore[attr-defined]
    return django_request


def done_value(value: Any) -> Any:
    """What a view's ``done()`` returned, as a tool result: a redirect is "Done." and where it points (an
    absolute URL, on ``BASE_URL`` when it is set), another response its text; anything else as it is."""
    if isinstance(value, HttpResponseRedirectBase):
        return f"Done.\n{_absolute(value.url)}"
    if isinstance(value, StreamingHttpResponse):
        return b"".join(value.streaming_content).decode(value.charset)  # type: ignore[arg-type]
    if isinstance(value, HttpResponseBase):
        if isinstance(value, SimpleTemplateResponse) and not value.is_rendered:
            value.render()
        return value.content.decode(value.charset)  # type: ignore[attr-defined]
    return value


def _absolute(url: str) -> str:
    base = conf.BASE_URL
    if urlsplit(url).scheme or not isinstance(base, str) or not base:
        return url
    return base.rstrip("/") + url if url.startswith("/") else urljoin(base.rstrip("/") + "/", url)
