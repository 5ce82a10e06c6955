"""Prefab HTML forms: one Django template for MCP Apps hosts (spec §11) and for the URL-mode page (§7.3).

``display_form`` mirrors the prefab API: the same field list becomes either a UI form the host renders or
an input_required request the client fills in natively, so both ask exactly the same thing. The HTML comes
from overridable templates through Django's own form rendering: ``mcpforms/form.html`` (the form, both
modes; each field from ``mcpforms/field.html``), ``mcpforms/url_done.html`` (the URL-mode page once
submitted), both extending ``mcpforms/base.html`` (the document and its styles).
"""

from __future__ import annotations

import datetime
import hashlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypedDict

from django import forms
from django.core.files import File
from django.db.models import Model, QuerySet
from django.forms.formsets import BaseFormSet
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.utils import formats, timezone

from mcpforms.fields import AutoFormField, fields_for_form
from mcpforms.flow import Way
from mcpforms.form_factory import form_factory
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.primitives import Resource
from mcpforms.schema import form_input_request

logger = logging.getLogger(__name__)

# Spec §11.1: the extension id a server advertises and the MIME type a host lists in its capabilities.
EXTENSION_ID = "io.modelcontextprotocol/ui"
MIME_TYPE = "text/html;profile=mcp-app"
# The postMessage dialect the page speaks (spec §11.4), versioned apart from the MCP revision.
UI_PROTOCOL_VERSION = "2026-01-26"
URI_PREFIX = "ui://mcpforms/"
TEMPLATE = "mcpforms/form.html"
# The URL-mode page once submitted: a confirmation for the user, never the raw tool result.
TEMPLATE_DONE = "mcpforms/url_done.html"
# A multi-step form's App sends each step with these arguments besides the step's values: the signed
# state the step was shown with, and whether the user went back rather than on.
STEP_STATE = "_mcpforms_state"
STEP_BACK = "_mcpforms_back"
# Everything is inline, so the App needs no origin at all (spec §11.3: hosts deny what is not declared).
RESOURCE_META: dict[str, Any] = {
    "ui": {"csp": {"connectDomains": [], "resourceDomains": []}, "prefersBorder": True}
}


def supports_apps(capabilities: Mapping[str, Any]) -> bool:
    """Tell whether a client declared MCP Apps: its ``mimeTypes`` list the App MIME type (spec §11.1)."""
    extensions = capabilities.get("extensions")
    settings = extensions.get(EXTENSION_ID) if isinstance(extensions, Mapping) else None
    mime_types = settings.get("mimeTypes") if isinstance(settings, Mapping) else None
    return isinstance(mime_types, list) and MIME_TYPE in mime_types


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


def _checkboxes(widget: forms.SelectMultiple) -> forms.CheckboxSelectMultiple:
    """The same choices as checkboxes: a list box hides what is picked and needs ctrl-click to pick more.
    The values submitted are the same (a list of the checked values under the field's name)."""
    boxes = forms.CheckboxSelectMultiple(attrs=widget.attrs)
    boxes.choices = widget.choices
    boxes.is_required = widget.is_required
    boxes.is_localized = widget.is_localized
    return boxes


@dataclass(frozen=True)
class ShownForm:
    """A form made ready to show: the bound fields in order, what the page's script needs to know of each
    (``name``, ``id`` and how to type its value, ``kind``), and which fields only a page may collect."""

    fields: list[forms.BoundField]
    config: list[dict[str, str]]
    page_only: frozenset[str]


class FormStep(NamedTuple):
    """One step of a multi-step form as its App shows it: its name, what the user reads, its form (or, for
    a formset step, its formset)."""

    name: str
    title: str
    form: forms.BaseForm | BaseFormSet[Any]


def show_form(form: forms.BaseForm, *, mode: Way) -> ShownForm:
    """Prepare ``form`` the way ``mcpforms/form.html`` shows it: native date pickers, checkboxes for
    multi-selects, each input described by its help text and its error box; in ``mode="app"`` without the
    password and file fields, which only the URL-mode page collects."""
    autos = {auto.name: auto for auto in fields_for_form(form)}
    page_only = frozenset(name for name, auto in autos.items() if auto.page_only)
    shown = []
    for bound in form.visible_fields():
        if mode == "app" and bound.name in page_only:
            continue
        widget = bound.field.widget
        auto = autos.get(bound.name)
        if auto is not None and auto.multiple and type(widget) is forms.SelectMultiple:
            widget = bound.field.widget = _checkboxes(widget)  # subclasses keep the widget they chose
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
    config = [
        {"name": b.html_name, "id": b.auto_id, "kind": _kind(autos[b.name]) if b.name in autos else "text"}
        for b in shown
    ]
    return ShownForm(fields=shown, config=config, page_only=page_only)


def _shown_step(step: FormStep, *, mode: Way) -> tuple[list[dict[str, str]], dict[str, Any], dict[str, Any]]:
    """One step of a multi-step form: its fields' entries in the script's config, its entry in the
    config's steps, and its entry in the template's (a formset step's rows under ``formset``)."""
    if isinstance(step.form, BaseFormSet):
        rows = _shown_rows(step.form, mode=mode)
        return (
            [],
            {"name": step.name, "fields": [], "formset": rows["config"]},
            {"name": step.name, "title": step.title, "formset": rows},
        )
    each = show_form(step.form, mode=mode)
    return (
        each.config,
        {"name": step.name, "fields": [entry["name"] for entry in each.config]},
        {"name": step.name, "title": step.title, "fields": each.fields, "hidden": step.form.hidden_fields()},
    )


def _shown_rows(formset: BaseFormSet[Any], *, mode: Way) -> dict[str, Any]:
    """A formset step as the page shows it: its rows (the formset's initial and extra forms, at least
    ``min_num``), an empty row the script copies for "Add a row", and what the script needs: the prefix,
    how many rows there may be, each row field's input name and id with ``__prefix__`` for the row."""
    empty = show_form(formset.empty_form, mode=mode)
    fields = [entry | {"field": bound.name} for entry, bound in zip(empty.config, empty.fields, strict=True)]
    return {
        "rows": [show_form(form, mode=mode).fields for form in formset.forms],
        "empty": empty.fields,
        "config": {
            "prefix": formset.prefix,
            "min": formset.min_num,
            "max": formset.max_num,
            "fields": fields,
        },
    }


def render_form(
    form: forms.BaseForm | None,
    *,
    title: str,
    mode: Way,
    description: str = "",
    submit: str = "",
    request: HttpRequest | None = None,
    result: str | None = None,
    notice: str | None = None,
    steps: Sequence[FormStep] = (),
) -> str:
    """Render ``mcpforms/form.html``: the App (``mode="app"``, submitting to the tool ``submit``) or the
    URL-mode page (``mode="url"``, an ordinary POST); ``result`` shows a completed submission instead, and
    ``notice`` a message (with no form: an expired link, say). With ``steps`` the App is a multi-step
    form's: every step is in the page, the one the server says is shown, with Back and Next."""
    shown = show_form(form, mode=mode) if form is not None and not steps else None
    config: dict[str, Any] = {
        "submit": submit,
        "protocolVersion": UI_PROTOCOL_VERSION,
        "fields": shown.config if shown is not None else [],
    }
    shown_steps = [_shown_step(step, mode=mode) for step in steps]
    if shown_steps:
        config["fields"] = [entry for fields, _, _ in shown_steps for entry in fields]
        config["steps"] = [entry for _, entry, _ in shown_steps]
        config["stepArguments"] = {"state": STEP_STATE, "back": STEP_BACK}
    context = {
        "form": form,
        "fields": shown.fields if shown is not None else [],
        "title": title,
        "description": description,
        "mode": mode,
        "config": config,
        "result": result,
        "notice": notice,
        "steps": [entry for _, _, entry in shown_steps],
    }
    return render_to_string(TEMPLATE, context, request=request)


def _readable(auto: AutoFormField, field: forms.Field, value: Any) -> str:
    """One submitted value as the user reads it: choice labels rather than keys, Yes or No, file names."""
    if value is None or value == "" or value == []:
        return ""
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, QuerySet | list | tuple):
        return ", ".join(_readable(auto, field, item) for item in value)
    if isinstance(value, Model):
        label_from_instance = getattr(field, "label_from_instance", str)
        return str(label_from_instance(value))
    if isinstance(value, File):
        return str(value.name)
    if auto.options:
        labels = {str(option.value): option.label for option in auto.options}
        return labels.get(str(value), str(value))
    if isinstance(value, datetime.datetime) and timezone.is_aware(value):
        value = timezone.localtime(value)
    return str(formats.localize(value))


def submitted_values(form: forms.BaseForm) -> list[tuple[str, str]]:
    """A valid form's values as (label, text) pairs in form order, secrets and hidden fields left out."""
    autos = fields_for_form(form)
    cleaned = getattr(form, "cleaned_data", {})
    return [
        (auto.label, _readable(auto, form.fields[auto.name], cleaned.get(auto.name)))
        for auto in autos
        if not auto.secret and auto.type != "hidden" and auto.name in form.fields
    ]


def render_done(
    form: forms.BaseForm,
    *,
    title: str,
    result: Mapping[str, Any] | None = None,
    note: str = "",
    request: HttpRequest | None = None,
) -> str:
    """Render ``mcpforms/url_done.html``, the URL-mode page once the form is submitted: what the user
    sent (never a password) and where to go next. ``result`` is the tool's CallToolResult, for templates
    that want to show it; the default one does not, since it is written for the model. ``note`` is what
    the user must know of what happens next ("Sent for approval as request #12…"), or nothing."""
    context = {
        "form": form,
        "title": title,
        "values": submitted_values(form),
        "result": result,
        "note": note,
        "mode": "url",
    }
    return render_to_string(TEMPLATE_DONE, context, request=request)


def read_result(uri: str, html: str) -> dict[str, Any]:
    """The ``resources/read`` result of a form UI (spec §11.3)."""
    return {"contents": [{"uri": uri, "mimeType": MIME_TYPE, "text": html, "_meta": RESOURCE_META}]}


def _form_class(fields: Sequence[AutoFormField] | type[forms.BaseForm], tool: str) -> type[forms.BaseForm]:
    return fields if isinstance(fields, type) else form_factory(tool, fields)


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
    asked = [field for field in fields if not field.page_only and field.type != "hidden"]
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
            "fields": [field_json(field) for field in fields if not field.page_only],
        },
        "_meta": {"ui": {"resourceUri": resource_uri(tool)}},
    }
