"""A wizard's step with a password or a file: asked on the URL-mode page, its values kept server-side.

A wizard's requestState is signed, not encrypted: the client reads it. So a step whose form has a password
or a file field (``AutoFormField.page_only``) is neither asked by form elicitation nor carried in the
state. The walk (``mcpforms.wizard_rounds``) sends the user to the URL-mode page (spec §7.3) for that one
step, as it does a step the user answers themselves (``always_ask``) for a client that shows no form
elicitation. The page (``mcpforms.views``) validates it with the step's Django form and keeps what was
submitted in a ``WizardPageStep`` row of the flow, sealed for a key only the flow's requestState carries
(``mcpforms.wizard_kept``, ``mcpforms.sealing``), as formtools' ``SessionWizardView`` keeps its steps on
the server; every later round opens it and binds the step again. The handler runs in the final round
with the real password and file, as for any wizard; the flow's rows go in its transaction (their files
once it commits), when the user declines, or once no requestState of the flow verifies any more: each
round of the flow puts that off by ``STATE_MAX_AGE``, and the requests that ask, submit or go on with a
page step delete the rows of every flow past it (``mcpforms_cleanup`` does too).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django import forms
from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.utils import timezone
from django.utils.datastructures import MultiValueDict
from django.utils.text import capfirst

import mcpforms.sealing as sealing
from mcpforms.answers import FormOutcome
from mcpforms.conf import conf
from mcpforms.fields import AutoFormField
from mcpforms.flow import NON_FIELD, Asking, Refused, describe_problems
from mcpforms.output import to_json
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.state import load_state
from mcpforms.url_mode import PENDING_PREFIX, NoPage, page_kinds, page_url, pending_page
from mcpforms.wizard_kept import open_submission, seal_submission
from mcpforms.wizards import STARTED_OVER, WizardTool, is_page_step

if TYPE_CHECKING:
    from mcpforms.models import UrlElicitation, WizardPageStep

logger = logging.getLogger(__name__)

#: What the page says once the step is submitted: the wizard goes on in the conversation.
STEP_DONE = "This step is done. Return to your assistant to go on with the form."


def needs_page(
    ctx: RequestContext,
    fields: list[AutoFormField],
    errors: Mapping[str, list[str]],
    *,
    unconfirmed: bool,
    can_ask: bool,
) -> bool:
    """Whether what the step lacks only the page can collect: a password or a file is missing or invalid,
    or the user must answer the step themselves and a form elicitation could not show all of it, or this
    client shows no form elicitation (``can_ask``) but opens pages, where a form tool's ``ask="always"``
    is confirmed too."""
    page_only = {auto.name for auto in fields if auto.page_only}
    if page_only and (unconfirmed or any(name in page_only for name in errors)):
        return True
    return unconfirmed and not can_ask and ctx.supports_elicitation("url") and sealing.available()


# The rounds -----------------------------------------------------------------------------------------------


def kept_step(
    tool: WizardTool, ctx: RequestContext, step: str, fields: list[AutoFormField]
) -> FormOutcome | None:
    """The step (with these ``fields``) as the user submitted it on the page in this flow, bound again to
    its form, whose validation may now fail (formtools' ``render_done`` revalidates too); None for a step
    not filled on the page, or not submitted there yet."""
    state = ctx.request_state
    if not (is_page_step(fields) or step in tool.always_ask) or state is None or state.flow_key is None:
        return None  # no page was asked in this flow: it has no key to seal with
    rows = _rows_of_flow(tool, ctx)
    row = rows.filter(step=step, page__completed__isnull=False).order_by("-page__completed").first()
    if row is None:
        return None
    try:
        submitted = open_submission(row, state.flow_key)
    except sealing.Unsealable as error:  # the step is asked again, on a new page
        logger.warning("What the page kept of step %r of %r cannot be read: %s", step, tool.name, error)
        return None
    form = tool.steps[step](data=submitted.data, files=submitted.files, **tool.form_kwargs_for(ctx, step))
    if form.is_valid():
        return FormOutcome(form, cleaned_data=dict(form.cleaned_data))
    errors = {
        name: [str(e["message"]) for e in entries] for name, entries in form.errors.get_json_data().items()
    }
    return FormOutcome(form, errors=errors)


def ask_step(
    tool: WizardTool,
    ctx: RequestContext,
    step: str,
    *,
    values: Mapping[str, Any],
    errors: Mapping[str, list[str]],
    kept: FormOutcome | None,
    answers: Mapping[str, Any],
    k: int,
    n: int,
) -> Asking | Refused:
    """Send the user to the page for ``step``: a URL-mode elicitation whose requestState carries
    ``answers`` (the finished steps' values, never this step's) and names the page's row.

    ``values`` (the step's non-secret values from the arguments) prefill the page; ``errors`` are
    Django's for them, or ``kept``'s, when what the user submitted on an earlier page no longer validates.
    """
    from mcpforms.models import UrlElicitation, WizardPageStep, sweep

    fields = tool.step_fields(ctx, step)
    by_name = {auto.name: auto for auto in fields}
    title = tool.get_step_title(step)
    kinds = page_kinds(fields)
    if kinds:
        why = f"it asks for {kinds}, which is never sent through the conversation"
    else:  # a step the user answers themselves, for a client that shows no form elicitation
        why = "the user answers it themselves, and this client cannot show them a form"
    if kept is not None and not kept.is_valid:
        corrections = describe_problems(kept.errors, by_name)
    else:
        given = {name: m for name, m in errors.items() if name in values or name == NON_FIELD}
        corrections = describe_problems(given, by_name)
    label = capfirst(f"step {step!r} ({title}) of the {tool.get_title()} form")
    if not sealing.available():  # mcpforms.E417 keeps such a wizard from being served
        return Refused(
            f"{label} needs the URL-mode page, and what it keeps there is encrypted with the cryptography "
            "package, which is not installed (mcpforms[wizard-pages]); nothing was submitted."
        )
    if not ctx.supports_elicitation("url"):
        return Refused(
            f"{label} cannot be filled here: {why}, and this client does not support "
            "URL-mode elicitation (it did not declare elicitation.url). Use a client that supports it; "
            "nothing was submitted." + "".join(f"\n- {line}" for line in corrections)
        )
    waiting = _waiting_page(tool, ctx, step)
    page_id = waiting.pk if waiting is not None else uuid.uuid4()
    try:
        url = page_url(ctx, tool=tool.name, elicitation=str(page_id))
    except NoPage as missing:
        return Refused(f"{label} needs a web page, but {missing}.")
    message = f"Step {k} of at most {n}: {title}\nPlease open this page to fill in this step: {why}."
    if corrections:
        message += "\nPlease correct:\n- " + "\n- ".join(corrections)
    if ctx.stale_state:
        message = f"{STARTED_OVER}\n{message}"
    pending = (step, f"{PENDING_PREFIX}{page_id}")
    # What the page keeps is sealed for this flow's key, which only its requestStates carry.
    flow_key = ctx.request_state.flow_key if ctx.request_state is not None else None
    flow_key = flow_key or sealing.new_flow_key()
    # The same page asked again (the user has not submitted it yet) is no new round.
    state = ctx.mint_state(answers=answers, pending=pending, again=waiting is not None, flow_key=flow_key)
    if waiting is None:
        _delete_expired()
        sweep(UrlElicitation.expired)
        flow = ctx.request_state.flow if ctx.request_state is not None else _flow_of(ctx, state)
        prefill = {
            name: value for name, value in values.items() if name in by_name and not by_name[name].page_only
        }
        with transaction.atomic():
            # One page per step of a flow: one asked again (its earlier answers no longer valid) replaces
            # the earlier one, and what was submitted there goes with it.
            earlier = WizardPageStep.objects.filter(flow=flow, step=step).values("page")
            _pages_of(tool, ctx).filter(pk__in=earlier).delete()
            page = UrlElicitation.objects.create(
                id=page_id,
                server=ctx.server,
                tool=tool.name,
                principal=ctx.principal,
                arguments=to_json(_known_arguments(tool, ctx)),
                values=to_json(prefill),
            )
            # The link and the requestState naming the page are good for this long; a round of the flow
            # puts it off (keep_flow).
            lasts = timedelta(seconds=max(conf.STATE_MAX_AGE, conf.URL_MODE_MAX_AGE))
            WizardPageStep.objects.create(
                page=page,
                flow=flow,
                step=step,
                public_key=sealing.public_key(flow_key),
                expires=timezone.now() + lasts,
            )
    result = {
        "resultType": "input_required",
        "inputRequests": {
            tool.name: {
                "method": "elicitation/create",
                "params": {"mode": "url", "message": message, "url": url},
            }
        },
        "requestState": state,
    }
    return Asking(result)


def keep_flow(tool: WizardTool, ctx: RequestContext) -> None:
    """Put off the end of what the pages kept for this round's flow: the round mints a requestState that
    verifies for ``STATE_MAX_AGE`` more. And delete what every flow past its end kept."""
    state = ctx.request_state
    if state is None or state.flow_key is None:
        return  # no page was asked in this flow
    until = timezone.now() + timedelta(seconds=conf.STATE_MAX_AGE)
    _rows_of_flow(tool, ctx).filter(expires__lt=until).update(expires=until)
    _delete_expired()


def forget(tool: WizardTool, ctx: RequestContext) -> None:
    """Delete what the page kept for the flow of this round's requestState: its rows now, in the open
    transaction (the handler's, or the decline's), and their files once it commits."""
    if ctx.request_state is not None:
        flow = ctx.request_state.flow
        _pages_of(tool, ctx).filter(wizard_step__flow=flow).delete()


def _delete_expired() -> None:
    """Delete the page steps of every flow no requestState of which verifies any more (their files once
    this commits): nobody can go on with them, so they are kept for no one, whether or not
    ``mcpforms_cleanup`` runs."""
    from mcpforms.models import UrlElicitation

    UrlElicitation.objects.filter(wizard_step__expires__lt=timezone.now()).delete()


# The page ------------------------------------------------------------------------------------------------


def step_of(tool: WizardTool, page: UrlElicitation) -> WizardPageStep | None:
    """The wizard step the page ``page`` asks, or None when it asks none of ``tool``'s steps (now)."""
    from mcpforms.models import WizardPageStep

    row = WizardPageStep.objects.filter(page=page).select_related("page").first()
    return row if row is not None and row.step in tool.steps else None


def page_form(
    tool: WizardTool, ctx: RequestContext, row: WizardPageStep, *, data: Any = None, files: Any = None
) -> forms.BaseForm:
    """The form of ``row``'s step on the page: prefilled with what the call gave for it (never a password
    nor a file), or bound to what the user submitted."""
    form_class = tool.steps[row.step]
    kwargs = tool.form_kwargs_for(ctx, row.step)
    if data is None:
        initial = {**kwargs.pop("initial", {}), **row.page.values}
        return form_class(initial=initial, **kwargs)
    return form_class(data=data, files=files, **kwargs)


def keep_submitted(
    row: WizardPageStep,
    form: forms.BaseForm,
    *,
    data: MultiValueDict[str, str],
    files: MultiValueDict[str, Any],
) -> bool:
    """Keep what the user submitted (``data`` and ``files``, which ``form`` found valid) for the rounds to
    come, sealed for the flow, and use up the link; False when the link was used already."""
    from mcpforms.models import UrlElicitation, WizardPageStep

    saved: list[str] = []
    try:
        with transaction.atomic():
            # Single use: whoever claims the row first keeps their answers.
            claimed = UrlElicitation.objects.filter(pk=row.pk, completed__isnull=True).update(
                completed=timezone.now()
            )
            if not claimed:
                return False
            sealed = seal_submission(row, form, data=data, files=files, saved=saved)
            WizardPageStep.objects.filter(pk=row.pk).update(sealed=sealed, paths=saved)
    except BaseException:
        storage = sealing.file_storage()
        for path in saved:  # nothing points at them any more
            storage.delete(path)
        raise
    _delete_expired()
    return True


# Which rows --------------------------------------------------------------------------------------------


def _pages_of(tool: WizardTool, ctx: RequestContext) -> models.QuerySet[UrlElicitation]:
    """The page rows of ``tool`` for this server and principal: no other's are ever read or deleted."""
    from mcpforms.models import UrlElicitation

    return UrlElicitation.objects.filter(server=ctx.server, tool=tool.name, principal=ctx.principal)


def _rows_of_flow(tool: WizardTool, ctx: RequestContext) -> models.QuerySet[WizardPageStep]:
    from mcpforms.models import WizardPageStep

    state = ctx.request_state
    if state is None:
        return WizardPageStep.objects.none()
    return WizardPageStep.objects.filter(flow=state.flow, page__in=_pages_of(tool, ctx))


def _waiting_page(tool: WizardTool, ctx: RequestContext, step: str) -> UrlElicitation | None:
    """The page of ``step`` this round's requestState waits on, when the user has not submitted it yet."""
    page = pending_page(ctx)
    state = ctx.request_state
    if page is None or state is None or state.pending[:1] != (step,):
        return None
    try:
        return (
            _pages_of(tool, ctx)
            .filter(pk=page, completed__isnull=True, wizard_step__flow=state.flow, wizard_step__step=step)
            .first()
        )
    except ValidationError:  # not a UUID: never minted by us
        return None


def _flow_of(ctx: RequestContext, state: str) -> str:
    """The flow id of a requestState this round just minted: a first round's flow starts there."""
    verified = load_state(
        state,
        server=ctx.server,
        tool=ctx.binding,
        arguments=ctx.arguments,
        principal=ctx.principal,
        version=ctx.state_version,
    )
    return verified.flow


def _known_arguments(tool: WizardTool, ctx: RequestContext) -> dict[str, Any]:
    # Only what the wizard's steps know, and never a password or a file: the row keeps nothing else.
    known = {auto.name for auto in tool.fields_for(ctx) if not auto.page_only}
    given = ctx.arguments if isinstance(ctx.arguments, dict) else {}
    return {name: value for name, value in given.items() if name in known}
