"""Prefab HTML forms: one Django template for MCP Apps hosts (spec §11) and for the URL-mode page (§7.3).

``display_form`` mirrors the prefab API: the same field list becomes either a UI form the host renders or
an input_required request the client fills in natively, so both ask exactly the same thing. The HTML comes
from the overridable template ``mcpforms/form.html`` through Django's own form rendering.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from django import forms
from django.core import signing
from django.core.exceptions import ValidationError
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from mcpforms.answers import input_response
from mcpforms.conf import conf
from mcpforms.fields import AutoFormField, fields_for_form
from mcpforms.output import error_result, to_json
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.primitives import Resource
from mcpforms.schema import form_input_request

if TYPE_CHECKING:
    from mcpforms.models import UrlElicitation
    from mcpforms.tools import FormTool

logger = logging.getLogger(__name__)

# Spec §11.1: the extension id a server advertises and the MIME type a host lists in its capabilities.
EXTENSION_ID = "io.modelcontextprotocol/ui"
MIME_TYPE = "text/html;profile=mcp-app"
# The postMessage dialect the page speaks (spec §11.4), versioned apart from the MCP revision.
UI_PROTOCOL_VERSION = "2026-01-26"
URI_PREFIX = "ui://mcpforms/"
TEMPLATE = "mcpforms/form.html"
# Form mode must not carry secrets and cannot carry files (spec §7.2), and an App would have to send them
# through the host's tools/call: these fields are only ever entered on the URL-mode page.
PAGE_TYPES: frozenset[str] = frozenset({"password", "file"})
# Everything is inline, so the App needs no origin at all (spec §11.3: hosts deny what is not declared).
RESOURCE_META: dict[str, Any] = {
    "ui": {"csp": {"connectDomains": [], "resourceDomains": []}, "prefersBorder": True}
}

Path = Literal["auto", "form", "url"]
PATHS: tuple[str, ...] = ("auto", "form", "url")
Route = Literal["app", "form", "none"]
Mode = Literal["app", "page"]


def supports_apps(capabilities: Mapping[str, Any]) -> bool:
    """Tell whether a client declared MCP Apps: its ``mimeTypes`` list the App MIME type (spec §11.1)."""
    extensions = capabilities.get("extensions")
    settings = extensions.get(EXTENSION_ID) if isinstance(extensions, Mapping) else None
    mime_types = settings.get("mimeTypes") if isinstance(settings, Mapping) else None
    return isinstance(mime_types, list) and MIME_TYPE in mime_types


def choose_route(ctx: RequestContext, path: Path = "auto") -> Route:
    """Pick how this request asks: the App UI, a form elicitation, or neither (spec §11.5)."""
    if path == "auto" and supports_apps(ctx.client_capabilities):
        return "app"
    if ctx.supports_elicitation("form"):
        return "form"
    return "none"


def resource_uri(tool: str) -> str:
    return f"{URI_PREFIX}{tool}"


def submit_name(tool: str) -> str:
    """Name the app-only tool the form of ``tool`` submits to, within the 64 characters a name may have."""
    name = f"{tool}_submit"
    if len(name) <= 64:
        return name
    digest = hashlib.sha256(tool.encode()).hexdigest()[:8]
    return f"{tool[:47]}_{digest}_submit"


def tool_meta(tool: str, *, app_only: bool = False) -> dict[str, Any]:
    """The ``_meta`` linking a tool to the form UI of ``tool`` (spec §11.2)."""
    uri = resource_uri(tool)
    ui: dict[str, Any] = {"resourceUri": uri}
    if app_only:
        ui["visibility"] = ["app"]  # the host never shows it to the model
    # The flat key is deprecated, but hosts older than the nested form read only it.
    return {"ui": ui, "ui/resourceUri": uri}


def _kind(field: AutoFormField) -> str:
    """How the page's script types a value before sending it, so arguments match the inputSchema."""
    if field.options:
        return "multiple" if field.multiple else "text"
    if field.type in ("boolean", "checkbox"):
        return "boolean"
    if field.type == "integer":
        return "integer"
    if field.type in ("number", "range"):
        return "number"
    return "text"


# Browsers offer pickers for these input types; the formats are the ISO ones the inputs exchange.
_PICKERS: tuple[tuple[type[forms.Widget], str, str], ...] = (
    (forms.DateTimeInput, "datetime-local", "%Y-%m-%dT%H:%M"),
    (forms.DateInput, "date", "%Y-%m-%d"),
    (forms.TimeInput, "time", "%H:%M"),
)


def _prepare(form: forms.BaseForm, types: Mapping[str, str], *, mode: Mode) -> list[forms.BoundField]:
    """Return the bound fields to show, each input described by its help text and its error box."""
    shown = []
    for bound in form.visible_fields():
        if mode == "app" and types.get(bound.name) in PAGE_TYPES:
            continue
        widget = bound.field.widget
        for widget_class, input_type, date_format in _PICKERS:
            if type(widget) is widget_class:  # subclasses may have their own idea of the format
                widget.input_type = input_type  # type: ignore[attr-defined]
                widget.format = date_format  # type: ignore[attr-defined]
        # Always point at the error box, even empty: the App fills it in later and the link must exist.
        described = [f"{bound.auto_id}_error"]
        if bound.help_text:
            described.insert(0, f"{bound.auto_id}_helptext")
        widget.attrs["aria-describedby"] = " ".join(described)
        shown.append(bound)
    return shown


def render_form(
    form: forms.BaseForm | None,
    *,
    title: str,
    mode: Mode,
    description: str = "",
    submit: str = "",
    request: HttpRequest | None = None,
    result: str | None = None,
    notice: str | None = None,
) -> str:
    """Render ``mcpforms/form.html``: the App (``mode="app"``, submitting to the tool ``submit``) or the
    URL-mode page (``mode="page"``, an ordinary POST); ``result`` shows a completed submission instead, and
    ``notice`` a message (with no form: an expired link, say)."""
    autos = fields_for_form(form) if form is not None else []
    fields = _prepare(form, {auto.name: auto.type for auto in autos}, mode=mode) if form is not None else []
    kinds = {auto.name: _kind(auto) for auto in autos}
    config = {
        "submit": submit,
        "protocolVersion": UI_PROTOCOL_VERSION,
        "fields": [{"name": b.html_name, "id": b.auto_id, "kind": kinds.get(b.name, "text")} for b in fields],
    }
    context = {
        "form": form,
        "fields": fields,
        "title": title,
        "description": description,
        "mode": mode,
        "config": config,
        "result": result,
        "notice": notice,
    }
    return render_to_string(TEMPLATE, context, request=request)


def read_result(uri: str, html: str) -> dict[str, Any]:
    """The ``resources/read`` result of a form UI (spec §11.3)."""
    return {"contents": [{"uri": uri, "mimeType": MIME_TYPE, "text": html, "_meta": RESOURCE_META}]}


def _form_class(fields: Sequence[AutoFormField] | type[forms.BaseForm], tool: str) -> type[forms.BaseForm]:
    if isinstance(fields, type):
        return fields
    from mcpforms.definitions import form_class_for  # the admin's field factory: AutoFormField → Django

    return form_class_for(tool, fields)


def form_resource(
    fields: Sequence[AutoFormField] | type[forms.BaseForm],
    *,
    tool: str,
    title: str,
    submit: str | None = None,
    description: str = "",
) -> Resource:
    """Return the ``ui://`` resource of a ``display_form`` UI, to add with ``server.add_resource``.

    The form submits to ``submit`` (default: ``tool``) with the field values as arguments.
    """
    form_class = _form_class(fields, tool)
    uri = resource_uri(tool)

    def read(ctx: RequestContext, uri: str) -> dict[str, Any]:
        html = render_form(
            form_class(), title=title, mode="app", description=description, submit=submit or tool
        )
        return read_result(uri, html)

    return Resource(
        uri=uri, name=f"{tool} form", handler=read, mime_type=MIME_TYPE, title=title, meta=RESOURCE_META
    )


class ElicitOptions(TypedDict, total=False):
    """Options of the elicitation path: the ``inputRequests`` key, the message, a signed requestState."""

    key: str
    message: str
    request_state: str


def fallback_text(fields: Sequence[AutoFormField], *, title: str, tool: str) -> str:
    """What a host without MCP Apps (and the model) reads: the form's fields and how to pass them."""
    lines = [f"{title}: the form is shown to the user, who submits it there."]
    asked = [field for field in fields if field.type not in PAGE_TYPES and field.type != "hidden"]
    if asked:
        # The model-visible tool, never an app-only submit tool the model cannot see (spec §11.2).
        lines.append(f"Without the form, call {tool} with these arguments:")
    for field in asked:
        details = [field.label]
        if field.required:
            details.append("required")
        if field.options:
            details.append("one of: " + ", ".join(option.value for option in field.options))
        lines.append(f"- {field.name} ({', '.join(details)})")
    return "\n".join(lines)


def field_json(field: AutoFormField) -> dict[str, Any]:
    """One field as the UI's structuredContent describes it."""
    entry: dict[str, Any] = {
        "name": field.name,
        "label": field.label,
        "type": field.type,
        "required": field.required,
    }
    if field.options:
        entry["options"] = [{"value": option.value, "label": option.label} for option in field.options]
        entry["multiple"] = field.multiple
    return entry


def display_form(
    fields: Sequence[AutoFormField],
    tool: str,
    *,
    title: str,
    elicit: bool | ElicitOptions = False,
    submit: str | None = None,
) -> dict[str, Any]:
    """Ask for ``fields`` through the form UI of ``tool``, or with ``elicit`` as an input_required request.

    The UI path returns a tool result linking ``ui://mcpforms/<tool>`` (serve it with ``form_resource``),
    whose form submits to ``submit`` (default: ``tool``); its text content is the fallback for hosts that
    render no UI. ``elicit=True``, or a dict of ``key``, ``message`` and ``request_state``, returns the
    form elicitation instead. Both derive from the same ``fields``.
    """
    if elicit:
        options: Mapping[str, Any] = elicit if isinstance(elicit, Mapping) else {}
        return form_input_request(
            fields,
            key=options.get("key", tool),
            message=options.get("message", title),
            request_state=options.get("request_state"),
        )
    target = submit or tool
    return {
        "content": [{"type": "text", "text": fallback_text(fields, title=title, tool=tool)}],
        "structuredContent": {
            "form": tool,
            "title": title,
            "submit": target,
            "fields": [field_json(field) for field in fields if field.type not in PAGE_TYPES],
        },
        "_meta": {"ui": {"resourceUri": resource_uri(tool)}},
    }


# ---- URL mode (spec §7.3) ------------------------------------------------------------------------------

# One salt per purpose: a page token can never pass for a requestState, nor the other way round.
PAGE_SALT = "mcpforms.ui.page"
# 2026-07-28 has no elicitationId: the page's row travels in the requestState's pending list.
PENDING_PREFIX = "url:"


def _binding(tool: str, principal: str) -> str:
    return hashlib.sha256(f"{tool}\n{principal}".encode()).hexdigest()[:32]


@dataclass(frozen=True)
class PageClaim:
    """What a verified page token names: the elicitation row, and a digest of the tool and principal."""

    elicitation: str
    binding: str

    def binds(self, *, tool: str, principal: str) -> bool:
        """Tell whether the token was minted for this tool and this principal."""
        return self.binding == _binding(tool, principal)


class InvalidPageToken(Exception):
    """A page token that is tampered, truncated or expired; the reason is logged, never shown."""

    def __init__(self, reason: str, *, expired: bool = False) -> None:
        super().__init__("Invalid or expired link")
        self.reason = reason
        self.expired = expired


def dump_page_token(*, elicitation: str, tool: str, principal: str) -> str:
    """Sign the link to one URL-mode page, bound to the principal and the tool.

    Signed data is readable, and a URL must not carry anything about the user (spec §7.3): the token holds
    the row's random id and a digest of what it is bound to, never the principal itself.
    """
    return signing.dumps({"e": elicitation, "b": _binding(tool, principal)}, salt=PAGE_SALT)


def load_page_token(token: str) -> PageClaim:
    """Verify a page token (signature and ``URL_MODE_MAX_AGE``); raise ``InvalidPageToken`` otherwise."""
    try:
        payload = signing.loads(token, salt=PAGE_SALT, max_age=conf.URL_MODE_MAX_AGE)
    except signing.SignatureExpired as error:
        raise InvalidPageToken(f"expired: {error}", expired=True) from None
    except (signing.BadSignature, ValueError, UnicodeDecodeError) as error:
        raise InvalidPageToken(f"bad signature or encoding: {error}") from None
    if not isinstance(payload, dict):
        raise InvalidPageToken("malformed payload")
    elicitation, binding = payload.get("e"), payload.get("b")
    if not (isinstance(elicitation, str) and isinstance(binding, str)):
        raise InvalidPageToken("malformed payload")
    return PageClaim(elicitation, binding)


def pending_page(ctx: RequestContext) -> str | None:
    """The id of the URL-mode page this call's verified requestState is waiting on, if any."""
    state = ctx.request_state
    if state is None:
        return None
    for item in state.pending:
        if item.startswith(PENDING_PREFIX):
            return item.removeprefix(PENDING_PREFIX)
    return None


def _page_kinds(form_tool: FormTool) -> str:
    kinds = {auto.type for auto in fields_for_form(form_tool.form_class) if auto.type in PAGE_TYPES}
    return " and ".join(sorted({"password": "a password", "file": "a file"}[kind] for kind in kinds))


def ask_page(
    ctx: RequestContext,
    *,
    form_tool: FormTool,
    values: Mapping[str, Any],
    problems: Sequence[str],
    elicitation: UrlElicitation | None = None,
) -> dict[str, Any]:
    """Ask the user to fill the form on its Django page: a URL-mode elicitation (spec §7.3).

    ``values`` (never a password or a file: those only come from the page) prefill the page.
    """
    from mcpforms.models import UrlElicitation

    what = _page_kinds(form_tool)
    why = (
        f"it asks for {what}, which is never sent through the conversation"
        if what
        else "it is filled on a web page"
    )
    if not ctx.supports_elicitation("url"):
        details = "".join(f"\n- {problem}" for problem in problems)
        return error_result(
            f"The {form_tool.title} form cannot be filled here: {why}, and this client does not support "
            "URL-mode elicitation (it did not declare elicitation.url). Use a client that supports it."
            + details
        )
    base = conf.BASE_URL
    if not isinstance(base, str) or not base:
        logger.warning(
            "URL-mode elicitation for %r needs MCPFORMS['BASE_URL'] to build its link", form_tool.name
        )
        return error_result(
            f"The {form_tool.title} form needs a web page, but this server has no address for it."
        )
    if elicitation is None:
        # Rows a retry can no longer reach (its requestState expired) are pruned as new ones come.
        horizon = max(conf.STATE_MAX_AGE, conf.URL_MODE_MAX_AGE)
        UrlElicitation.objects.filter(created__lt=timezone.now() - timedelta(seconds=horizon)).delete()
        secret = {auto.name for auto in fields_for_form(form_tool.form_class) if auto.type in PAGE_TYPES}
        arguments = ctx.arguments if isinstance(ctx.arguments, dict) else {}
        elicitation = UrlElicitation.objects.create(
            tool=form_tool.name,
            principal=ctx.principal,
            arguments=to_json({name: value for name, value in arguments.items() if name not in secret}),
            values=to_json({name: value for name, value in values.items() if name not in secret}),
        )
    token = dump_page_token(elicitation=str(elicitation.pk), tool=form_tool.name, principal=ctx.principal)
    try:
        url = base.rstrip("/") + reverse("mcpforms_ui:page", args=[token])
    except NoReverseMatch:
        logger.warning("URL-mode elicitation needs mcpforms.urls in the URLconf (namespace 'mcpforms_ui')")
        return error_result(
            f"The {form_tool.title} form needs a web page, but this server does not serve it."
        )
    state = ctx.mint_state(fields=(), answers={}, pending=[f"{PENDING_PREFIX}{elicitation.pk}"])
    return {
        "resultType": "input_required",
        "inputRequests": {
            form_tool.name: {
                "method": "elicitation/create",
                "params": {
                    "mode": "url",
                    "message": f"Please open this page to fill in the {form_tool.title} form: {why}.",
                    "url": url,
                },
            }
        },
        "requestState": state,
    }


def resume_page(ctx: RequestContext, elicitation_id: str, *, form_tool: FormTool) -> dict[str, Any]:
    """The retry after a URL-mode elicitation: the page's outcome once it is submitted, else ask again.

    ``accept`` only means the user agreed to open the page (spec §7.3): the row says whether they finished.
    """
    from mcpforms.models import UrlElicitation

    response = input_response(ctx.input_responses, form_tool.name)
    if response is not None and response.action in ("decline", "cancel"):
        verb = "declined" if response.action == "decline" else "cancelled"
        return error_result(f"The user {verb} the {form_tool.title} form; nothing was submitted.")
    try:
        row = UrlElicitation.objects.filter(
            pk=elicitation_id, tool=form_tool.name, principal=ctx.principal
        ).first()
    except ValidationError:  # not a UUID: only a requestState signed by an older scheme could say so
        row = None
    if row is None:
        return error_result(f"The page of the {form_tool.title} form has expired; call the tool again.")
    if row.result is not None:
        return dict(row.result)
    return ask_page(ctx, form_tool=form_tool, values=row.values, problems=(), elicitation=row)
