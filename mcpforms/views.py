"""The URL-mode page: the form of a tool as an ordinary web form, reached through a signed link (spec §7.3).

The link is single-use, expires after ``URL_MODE_MAX_AGE``, and is bound to the principal, the server and
the tool of the MCP call that asked for it: a signed-in principal must be the one who opens it (the spec's
phishing defence). Submitting runs the form's own validation and the tool's handler once; the tool's
retry then returns the stored outcome. A wizard's step is kept for the wizard's next round instead
(``mcpforms.wizard_pages``). Every failure is a friendly page, never a traceback.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.clickjacking import xframe_options_deny
from django.views.decorators.http import require_http_methods

import mcpforms.form_tasks as form_tasks
import mcpforms.output as output
import mcpforms.running as running
import mcpforms.serving as serving
import mcpforms.ui as ui
import mcpforms.url_mode as url_mode
import mcpforms.wizard_pages as wizard_pages
from mcpforms.models import UrlElicitation
from mcpforms.protocol.budgets import OverBudget, address_scope
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.server import server_for
from mcpforms.protocol.state import ANONYMOUS, principal_for
from mcpforms.registry import registry_for
from mcpforms.tools import FormTool
from mcpforms.wizards import WizardTool

logger = logging.getLogger(__name__)


def _notice(request: HttpRequest, title: str, text: str, *, status: int) -> HttpResponse:
    html = ui.render_form(None, title=title, mode="url", notice=text, request=request)
    return HttpResponse(html, status=status)


NOT_FRAMED = "frame-ancestors 'none'"
_CSP_MIDDLEWARE = "django.middleware.csp.ContentSecurityPolicyMiddleware"  # Django 6.0+


def _forbid_frame_ancestors(response: HttpResponse) -> None:
    """Forbid framing in the CSP too (``X-Frame-Options`` is the legacy spelling, CSP Level 2 §7.7).

    A project with Django 6's CSP middleware and ``SECURE_CSP`` keeps its policy on this page, with
    ``frame-ancestors`` added: the middleware builds the header (with its nonce) from the config a view
    leaves on the response, the way ``csp_override`` does, and a header set here would replace it.
    """
    policy = getattr(settings, "SECURE_CSP", None)
    if _CSP_MIDDLEWARE in settings.MIDDLEWARE and isinstance(policy, dict) and policy:
        response._csp_config = {**policy, "frame-ancestors": ["'none'"]}  # type: ignore[attr-defined]
    elif "Content-Security-Policy" not in response:
        response["Content-Security-Policy"] = NOT_FRAMED


def _unframeable(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """The page takes passwords: no other site may frame it to trick a click or a keystroke
    (clickjacking), whether or not the project installed ``XFrameOptionsMiddleware``."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = view(request, *args, **kwargs)
        _forbid_frame_ancestors(response)
        return response

    denied: Callable[..., HttpResponse] = xframe_options_deny(wrapper)
    return denied


# Outermost, so that every answer of the page carries it: the form, its notices, the 405 of a wrong verb.
@_unframeable
@never_cache
@require_http_methods(["GET", "POST"])
def page(request: HttpRequest, token: str) -> HttpResponse:
    try:
        claim = url_mode.load_page_token(token)
    except url_mode.InvalidPageToken as error:
        logger.info("Refused a URL-mode link: %s", error.reason)
        if error.expired:
            return _notice(
                request, "Link expired", "This link has expired. Ask your assistant again.", status=410
            )
        return _notice(request, "Invalid link", "This link is not valid.", status=400)
    try:
        row = UrlElicitation.objects.filter(pk=claim.elicitation).first()
    except ValidationError:  # a validly signed id that is not a UUID: never minted by us
        row = None
    if row is None or not claim.binds(server=row.server, tool=row.tool, principal=row.principal):
        return _notice(request, "Invalid link", "This link is no longer valid.", status=404)
    # The tool of the server that minted the link, never a same-named tool of another server.
    server = server_for(row.server)
    form_tool = registry_for(server).form_tool(row.tool) if server is not None else None
    if form_tool is None:
        return _notice(request, "Invalid link", "This link is no longer valid.", status=404)
    if row.completed is not None:
        return _notice(
            request,
            form_tool.get_title(),
            "This form was already submitted: the link works once.",
            status=410,
        )
    # A link minted for a signed-in user only opens for that user; an anonymous endpoint binds nobody.
    if row.principal != ANONYMOUS and principal_for(getattr(request, "user", None)) != row.principal:
        return _notice(
            request,
            form_tool.get_title(),
            "This link belongs to another user: sign in as the user who asked.",
            status=403,
        )
    # The page acts as the principal the link was minted for, never as whoever opens it: a link an
    # anonymous caller obtained must not run as the signed-in visitor it was sent to (spec §7.3, phishing).
    user = getattr(request, "user", None) if row.principal != ANONYMOUS else AnonymousUser()
    ctx = RequestContext.for_tool(
        form_tool.name, user=user, principal=row.principal, server=row.server, arguments=row.arguments
    )
    if row.principal == ANONYMOUS:  # what the page makes counts against its address's budget too
        ctx = replace(ctx, address=address_scope(request.META.get("REMOTE_ADDR")))
    try:
        running.check_access(form_tool, ctx, row.arguments)  # the permission, and the object to update
    except running.Refusal as refusal:
        return _notice(request, form_tool.get_title(), str(refusal), status=403)
    try:
        if isinstance(form_tool, WizardTool):
            return _wizard_step(request, ctx, form_tool, row)
        if request.method == "POST":
            return _submit(request, ctx, form_tool, row)
        form = serving.page_form(form_tool, ctx, initial=row.values)
    except Exception:
        logger.exception("The URL-mode page of %r failed", form_tool.name)
        return _notice(
            request, form_tool.get_title(), "Something went wrong; nothing was submitted.", status=500
        )
    return HttpResponse(
        ui.render_form(
            form,
            title=form_tool.get_title(),
            description=form_tool.get_message(),
            mode="url",
            request=request,
        )
    )


def _submit(
    request: HttpRequest, ctx: RequestContext, form_tool: FormTool, row: UrlElicitation
) -> HttpResponse:
    form = serving.page_form(form_tool, ctx, data=request.POST, files=request.FILES)
    if not form.is_valid():
        html = ui.render_form(
            form,
            title=form_tool.get_title(),
            description=form_tool.get_message(),
            mode="url",
            request=request,
        )
        return HttpResponse(html, status=400)
    try:
        return _run_once(request, ctx, form_tool, row, form)
    except OverBudget as over:
        # The claim rolled back with the refusal: the link still works once the budget allows.
        refused = _notice(
            request,
            form_tool.get_title(),
            f"{over.message}. Nothing was sent; submit this page again later.",
            status=429,
        )
        refused["Retry-After"] = str(over.retry_after)
        return refused


def _run_once(
    request: HttpRequest, ctx: RequestContext, form_tool: FormTool, row: UrlElicitation, form: Any
) -> HttpResponse:
    with transaction.atomic():
        # Single use: whoever claims the row first runs the handler; the claim rolls back if it fails.
        claimed = UrlElicitation.objects.filter(pk=row.pk, completed__isnull=True).update(
            completed=timezone.now()
        )
        if not claimed:
            return _notice(
                request,
                form_tool.get_title(),
                "This form was already submitted: the link works once.",
                status=410,
            )
        if form_tool.approval is not None:
            # The page confirms what the user asks for; staff decide whether it runs (the approval gate
            # holds on this path as on a call's final round).
            result = form_tasks.start_from_page(form_tool, ctx, form, elicitation=str(row.pk))
            note = output.result_text(result)
        else:
            result, note = running.run_handler(form_tool, ctx, form), ""
        UrlElicitation.objects.filter(pk=row.pk).update(result=result)
    # The user reads a confirmation of what they sent (``mcpforms/url_done.html``); the tool's result is
    # written for the model, which gets it on the client's retry.
    html = ui.render_done(form, title=form_tool.get_title(), result=result, note=note, request=request)
    return HttpResponse(html)


def _wizard_step(
    request: HttpRequest, ctx: RequestContext, wizard: WizardTool, row: UrlElicitation
) -> HttpResponse:
    """A wizard's step with a password or a file: the user fills that one step here, and the wizard goes
    on in the conversation, which runs the handler at its end (``mcpforms.wizard_pages``)."""
    step_row = wizard_pages.step_of(wizard, row)
    if step_row is None:  # the wizard changed since the link was minted: the step is gone
        return _notice(request, "Invalid link", "This link is no longer valid.", status=404)
    title = f"{wizard.get_title()}: {wizard.get_step_title(step_row.step)}"
    if request.method != "POST":
        form = wizard_pages.page_form(wizard, ctx, step_row)
    else:
        form = wizard_pages.page_form(wizard, ctx, step_row, data=request.POST, files=request.FILES)
        if form.is_valid():
            if wizard_pages.keep_submitted(step_row, form, data=request.POST, files=request.FILES):
                return _notice(request, title, wizard_pages.STEP_DONE, status=200)
            used = "This step was already submitted: the link works once."
            return _notice(request, title, used, status=410)
    html = ui.render_form(form, title=title, description=wizard.get_message(), mode="url", request=request)
    return HttpResponse(html, status=400 if form.is_bound else 200)
