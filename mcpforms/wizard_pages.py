"""A wizard's step with a password or a file: asked on the URL-mode page, its values kept server-side.

A wizard's requestState is signed, not encrypted: the client reads it. So a step whose form has a password
or a file field (``AutoFormField.page_only``) is neither asked by form elicitation nor carried in the
state. The walk (``mcpforms.wizard_rounds``) sends the user to the URL-mode page (spec §7.3) for that one
step; the page (``mcpforms.views``) validates it with the step's Django form and keeps what was submitted
in a ``WizardPageStep`` row of the flow, files in ``default_storage`` under random names only the row
holds, as formtools' ``SessionWizardView`` keeps its steps on the server; and every later round binds the
step again from that row. The handler runs in the final round with the real password and file, as for any
wizard; the flow's rows go in its transaction (their files once it commits), when the user declines, or
when the page's row expires (``UrlElicitation.expired``, swept or deleted by ``mcpforms_cleanup``).
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from django import forms
from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import UploadedFile
from django.db import models, transaction
from django.utils import timezone
from django.utils.datastructures import MultiValueDict
from django.utils.text import capfirst

from mcpforms.answers import FormOutcome
from mcpforms.fields import AutoFormField
from mcpforms.flow import NON_FIELD, Asking, Refused, describe_problems
from mcpforms.output import to_json
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.state import load_state
from mcpforms.url_mode import PENDING_PREFIX, NoPage, page_kinds, page_url, pending_page
from mcpforms.wizards import STARTED_OVER, WizardTool

if TYPE_CHECKING:
    from mcpforms.models import UrlElicitation, WizardPageStep

    # Generic for the type checker only (django-stubs); at run time it cannot be subscripted.
    Upload = UploadedFile[bytes]
else:
    Upload = UploadedFile

#: What the page says once the step is submitted: the wizard goes on in the conversation.
STEP_DONE = "This step is done. Return to your assistant to go on with the form."
# Where uploaded files wait for the final round, each under a random name: nobody can guess one, and the
# user's own file name (which may say something about them) never reaches the storage.
UPLOADS = "mcpforms/wizard"


def is_page_step(fields: list[AutoFormField]) -> bool:
    """Whether a step with these fields is filled on the page: it has a password or a file field."""
    return any(auto.page_only for auto in fields)


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
    return unconfirmed and not can_ask and ctx.supports_elicitation("url")


# The rounds -----------------------------------------------------------------------------------------------


def kept_step(
    tool: WizardTool, ctx: RequestContext, step: str, fields: list[AutoFormField]
) -> FormOutcome | None:
    """The step (with these ``fields``) as the user submitted it on the page in this flow, bound again to
    its form, whose validation may now fail (formtools' ``render_done`` revalidates too); None for a step
    not filled on the page, or not submitted there yet."""
    if not (is_page_step(fields) or step in tool.always_ask):
        return None
    rows = _rows_of_flow(tool, ctx)
    row = rows.filter(step=step, page__completed__isnull=False).order_by("-page__completed").first()
    if row is None:
        return None
    form = tool.steps[step](
        data=MultiValueDict(row.data), files=_uploads(row), **tool.form_kwargs_for(ctx, step)
    )
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
    # The same page asked again (the user has not submitted it yet) is no new round.
    state = ctx.mint_state(answers=answers, pending=pending, again=waiting is not None)
    if waiting is None:
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
            WizardPageStep.objects.create(page=page, flow=flow, step=step)
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


def forget(tool: WizardTool, ctx: RequestContext) -> None:
    """Delete what the page kept for the flow of this round's requestState: its rows now, in the open
    transaction (the handler's, or the decline's), and their files once it commits."""
    if ctx.request_state is not None:
        flow = ctx.request_state.flow
        _pages_of(tool, ctx).filter(wizard_step__flow=flow).delete()


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
    files: MultiValueDict[str, Upload],
) -> bool:
    """Keep what the user submitted (``data`` and ``files``, which ``form`` found valid) for the rounds to
    come, and use up the link; False when the link was used already."""
    from mcpforms.models import UrlElicitation, WizardPageStep

    names = [form.add_prefix(name) for name in form.fields]

    def ours(key: str) -> bool:  # a field's inputs, its widget's parts (name_0) and checkbox (name-clear)
        return any(key == name or key.startswith((f"{name}_", f"{name}-")) for name in names)

    saved: list[str] = []
    try:
        with transaction.atomic():
            # Single use: whoever claims the row first keeps their answers.
            claimed = UrlElicitation.objects.filter(pk=row.pk, completed__isnull=True).update(
                completed=timezone.now()
            )
            if not claimed:
                return False
            posted = {key: data.getlist(key) for key in data if ours(key)}
            stored = {
                key: [_store(upload, saved) for upload in files.getlist(key)] for key in files if ours(key)
            }
            WizardPageStep.objects.filter(pk=row.pk).update(data=posted, files=stored)
    except BaseException:
        for path in saved:  # nothing points at them any more
            default_storage.delete(path)
        raise
    return True


# What the rows hold --------------------------------------------------------------------------------------


class StoredUpload(Upload):
    """A file the page kept, as the step's form and the handler read an upload (its name, size and
    content type as the user sent it); opened from ``default_storage`` when first read."""

    def __init__(self, path: str, *, name: str, content_type: str | None, size: int, charset: str | None):
        self._path = path
        self._opened: Any = None
        super().__init__(None, name=name, content_type=content_type, size=size, charset=charset)

    @property
    def file(self) -> Any:
        if self._opened is None:
            self._opened = default_storage.open(self._path, "rb")
        return self._opened

    @file.setter
    def file(self, value: Any) -> None:
        self._opened = value


def _store(upload: Upload, saved: list[str]) -> dict[str, Any]:
    path = default_storage.save(f"{UPLOADS}/{secrets.token_urlsafe(24)}", upload)
    saved.append(path)
    return {
        "path": path,
        "name": upload.name,
        "content_type": upload.content_type,
        "size": upload.size,
        "charset": upload.charset,
    }


def _uploads(row: WizardPageStep) -> MultiValueDict[str, Upload]:
    return MultiValueDict(
        {
            key: [
                StoredUpload(
                    entry["path"],
                    name=entry["name"],
                    content_type=entry.get("content_type"),
                    size=entry["size"],
                    charset=entry.get("charset"),
                )
                for entry in entries
            ]
            for key, entries in row.files.items()
        }
    )


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
