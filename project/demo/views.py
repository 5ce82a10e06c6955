"""The demo's home page: every tool the endpoint serves, each as a real form that calls it over MCP.

The tools come from the real registry (code-registered and admin-defined alike), so what the page shows is
what ``tools/list`` offers. Each form is rendered by mcpforms' own field template (``mcpforms/field.html``,
prepared by ``mcpforms.ui.show_form``); its submit button sends a 2026-07-28 ``tools/call`` to the MCP
endpoint from the browser (``static/demo/home.js``), as the signed-in user or anonymously.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from django import forms
from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.middleware.csrf import get_token
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.urls import reverse
from django.views.decorators.csrf import ensure_csrf_cookie

from mcpforms import form_schema, ui
from mcpforms.conf import conf
from mcpforms.definitions import DefinitionTool
from mcpforms.fields import FormConversionError
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.server import default_server
from mcpforms.protocol.versions import VERSION_2026
from mcpforms.registry import registry_for
from mcpforms.tools import FormTool
from mcpforms.ways import ways_to_fill
from mcpforms.wizards import WizardTool
from project.demo.management.commands.seed_demo import (
    FINANCE_PASSWORD,
    FINANCE_USERNAME,
    STAFF_PASSWORD,
    STAFF_USERNAME,
)

logger = logging.getLogger(__name__)

MCP_PATH = "/mcp"  # where project/urls.py mounts mcpforms.api
TOKEN_COMMAND = f".venv/bin/python manage.py mcpforms_token create {STAFF_USERNAME}"
OAUTH = "mcpforms.oauth.OAuth2Auth"
# The stdio bridge desktop hosts start (tests/e2e/test_oauth_clients.py signs in through it).
MCP_REMOTE = "npx -y mcp-remote@0.15.1"
WAY_NAMES = {"app": "MCP Apps UI", "form": "Form elicitation", "url": "URL-mode page"}
ASK_MODES = {
    "missing": "Asks the user for what is missing",
    "always": "The user confirms every call",
    "never": "Never asks: a plain tool",
}


@dataclass
class StepCard:
    """One step of a multi-step tool, as its card shows it: its name, title, whether an earlier answer
    decides if it is asked, and its fields."""

    name: str
    title: str
    conditional: bool
    fields: list[forms.BoundField]


@dataclass
class ToolCard:
    """One tool as the page shows it."""

    name: str
    title: str
    description: str
    source: str  # "code" or "admin"
    paths: list[str]
    ask: str
    anonymous: bool
    usable: bool
    reason: str = ""
    approval: bool = False  # a call waits for staff to approve it in the admin before its handler runs
    background: bool = False  # with the tasks extension, its handler runs on `make run`'s worker
    admin_url: str = ""
    fields: list[forms.BoundField] = field(default_factory=list)
    page_only: frozenset[str] = frozenset()
    hidden: list[forms.BoundField] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    schema_json: str = ""
    definition_json: str = ""
    broken: str = ""
    steps: list[StepCard] = field(default_factory=list)  # a WizardTool's, in order; empty for one form


def _paths(form_tool: FormTool) -> list[str]:
    """The ways some client may have the form filled, as the README's table names them."""
    return [WAY_NAMES[way] for way in ways_to_fill(form_tool)]


def _card(request: HttpRequest, form_tool: FormTool, entry: dict[str, Any]) -> ToolCard:
    name = form_tool.name
    signed_in = request.user.is_authenticated
    anonymous = bool(conf.ALLOW_ANONYMOUS) and form_tool.may_use(
        RequestContext.for_tool(name, user=AnonymousUser())
    )
    viewer = RequestContext.for_tool(name, user=request.user)
    usable = (signed_in or anonymous) and form_tool.may_use(viewer)
    reason = ""
    if not usable:
        reason = "needs-permission" if signed_in else "sign-in"
    card = ToolCard(
        name=name,
        title=form_tool.get_title(),
        description=form_tool.get_description(),  # as tools/list has it: what it says of asking holds
        source="admin" if isinstance(form_tool, DefinitionTool) else "code",
        paths=[],
        ask=ASK_MODES.get(form_tool.ask, form_tool.ask),
        anonymous=anonymous,
        usable=usable,
        reason=reason,
        approval=form_tool.approval is not None,
        background=form_tool.background,
        definition_json=json.dumps(entry, indent=2),
    )
    if isinstance(form_tool, DefinitionTool):
        card.admin_url = reverse("admin:mcpforms_formdefinition_change", args=[form_tool.definition_id])
    try:
        card.paths = _paths(form_tool)
        if isinstance(form_tool, WizardTool):
            return _wizard_card(card, form_tool, viewer)
        # Each form gets ids of its own: several tools have an "email" field, and the page shows them all.
        form = form_tool.form_class(auto_id=f"{name}-%s", **form_tool.get_form_kwargs(viewer))
        shown = ui.show_form(form, mode="url")
        card.schema_json = json.dumps(form_schema(form_tool.fields_for(viewer)), indent=2)
    except FormConversionError as error:
        card.broken = str(error)
        return card
    except Exception:  # one broken form must not take the storefront down with it
        logger.exception("The home page cannot show the form of %r", name)
        card.broken = "its form could not be built (the server log says why)."
        return card
    card.fields = shown.fields
    card.page_only = shown.page_only
    card.hidden = list(form.hidden_fields())
    # The page's script sends every field it can read, typed; passwords and files stay on the URL page.
    hidden = [{"name": b.html_name, "id": b.auto_id, "kind": "text"} for b in card.hidden]
    card.config = {
        "tool": name,
        "title": form_tool.get_title(),
        "fields": [entry for entry in shown.config if entry["name"] not in shown.page_only] + hidden,
        "pageOnly": sorted(shown.page_only),
        "approval": card.approval,
    }
    return card


def _wizard_card(card: ToolCard, wizard: WizardTool, viewer: RequestContext) -> ToolCard:
    """A multi-step tool's card: its steps in order, each with its fields. The page's script walks them as a
    client does (``static/demo/home.js``): it calls with form elicitation and nothing as arguments, shows
    the one step each round asks, and answers it, until the result; the tool decides which step comes
    next, so a step whose condition is false is never shown."""
    config_fields: list[dict[str, Any]] = []
    config_steps: list[dict[str, Any]] = []
    for step in wizard.steps:
        form = wizard.steps[step](auto_id=f"{card.name}-%s", **wizard.form_kwargs_for(viewer, step))
        shown = ui.show_form(form, mode="url")
        conditional = wizard.condition_dict.get(step, True) is not True
        card.steps.append(StepCard(step, wizard.get_step_title(step), conditional, shown.fields))
        card.hidden += list(form.hidden_fields())
        config_fields += shown.config
        config_steps.append({"name": step, "fields": [entry["name"] for entry in shown.config]})
    card.schema_json = json.dumps(form_schema(wizard.fields_for(viewer)), indent=2)
    hidden = [{"name": b.html_name, "id": b.auto_id, "kind": "text"} for b in card.hidden]
    card.config = {
        "tool": card.name,
        "title": wizard.get_title(),
        "fields": config_fields + hidden,
        "pageOnly": [],  # a wizard's steps have no password or file fields (wizards.py refuses them)
        "approval": card.approval,
        "steps": config_steps,
        # Passed as the call's arguments, the same in every round; the steps' fields are answers.
        "arguments": [entry["name"] for entry in hidden],
    }
    return card


def tool_cards(request: HttpRequest) -> tuple[list[ToolCard], list[dict[str, Any]]]:
    """Every tool of the default server: form tools as cards, in ``tools/list`` order, and the others."""
    registry = registry_for(default_server)
    cards, others = [], []
    for tool in default_server.tools.all():
        ui_meta = (tool.meta or {}).get("ui")
        if isinstance(ui_meta, dict) and ui_meta.get("visibility") == ["app"]:
            continue  # a form's app-only submit tool: the form's card stands for it
        form_tool = registry.form_tool(tool.name)
        if form_tool is None:
            others.append(
                {"name": tool.name, "title": tool.title or tool.name, "description": tool.description}
            )
            continue
        cards.append(_card(request, form_tool, tool.entry))
    # What the visitor can try comes first; otherwise tools/list order.
    cards.sort(key=lambda card: not card.usable)
    return cards, others


def _curl(endpoint: str) -> str:
    """A copyable ``tools/call`` of ``signup``, with the headers and ``_meta`` 2026-07-28 asks for."""
    arguments = json.dumps({"email": "ada@example.com", "plan": "pro"})
    return "\n".join(
        [
            f"curl -s {endpoint} \\",
            "  -H 'Content-Type: application/json' \\",
            f"  -H 'MCP-Protocol-Version: {VERSION_2026}' \\",
            "  -H 'Mcp-Method: tools/call' -H 'Mcp-Name: signup' \\",
            """  -d '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {""",
            """    "name": "signup",""",
            f"""    "arguments": {arguments},""",
            f"""    "_meta": {{"io.modelcontextprotocol/protocolVersion": "{VERSION_2026}",""",
            """              "io.modelcontextprotocol/clientCapabilities": {}}}}'""",
        ]
    )


def _client_config(endpoint: str) -> str:
    """The ``mcpServers`` entry most clients (Claude Desktop, Cursor, VS Code…) read."""
    server = {"type": "http", "url": endpoint, "headers": {"Authorization": "Bearer <token>"}}
    return json.dumps({"mcpServers": {"mcpforms-demo": server}}, indent=2)


def _oauth_endpoint(endpoint: str) -> str:
    """The endpoint under ``BASE_URL``: tokens are bound to that URL, whatever host the page was read on."""
    base = conf.BASE_URL
    return f"{base.rstrip('/')}{MCP_PATH}" if isinstance(base, str) and base else endpoint


@ensure_csrf_cookie
def home(request: HttpRequest) -> HttpResponse:
    """The demo's storefront: how to connect, and every tool as a form that calls it over MCP."""
    endpoint = request.build_absolute_uri(MCP_PATH)
    cards, others = tool_cards(request)
    page = {
        "endpoint": MCP_PATH,
        "protocolVersion": VERSION_2026,
        "csrfToken": get_token(request),
        "signedIn": request.user.is_authenticated,
        "tools": {card.name: card.config for card in cards if card.config},
    }
    context = {
        "cards": cards,
        "others": others,
        "code_count": sum(card.source == "code" for card in cards),
        "admin_count": sum(card.source == "admin" for card in cards),
        "anonymous_count": sum(card.anonymous for card in cards),
        "endpoint": endpoint,
        "protocol_version": VERSION_2026,
        "token_command": TOKEN_COMMAND,
        "fastmcp_command": f".venv/bin/fastmcp call {endpoint} signup",
        # Clients can sign in themselves when the endpoint takes OAuth tokens, as the demo's does.
        "oauth_sign_in": OAUTH in conf.AUTHENTICATION,
        "mcp_remote_command": f"{MCP_REMOTE} {_oauth_endpoint(endpoint)}",
        "curl": _curl(endpoint),
        "client_config": _client_config(endpoint),
        "staff_username": STAFF_USERNAME,
        "staff_password": STAFF_PASSWORD,
        "finance_username": FINANCE_USERNAME,
        "finance_password": FINANCE_PASSWORD,
        "page_config": page,
    }
    return render(request, "demo/home.html", context)


def favicon(request: HttpRequest) -> HttpResponseBase:
    """Browsers ask every page of the site for /favicon.ico, the admin's and the URL-mode page's too."""
    return redirect(static("demo/favicon.svg"), permanent=True)
