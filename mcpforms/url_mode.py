"""URL-mode elicitation, seen from the tool: the page's signed link, the elicitation that sends the user
there, and the retry that picks up what the page stored (spec §7.3). The page itself is ``mcpforms.views``.

Passwords and files never travel through the conversation: they are entered on this page only.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.urls import NoReverseMatch, reverse

from mcpforms.conf import conf
from mcpforms.fields import AutoFormField
from mcpforms.output import error_result, to_json
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.tokens import InvalidToken, sign, unsign
from mcpforms.signals import Declined
from mcpforms.tools import FormTool

if TYPE_CHECKING:
    from mcpforms.models import UrlElicitation

logger = logging.getLogger(__name__)

# One salt per purpose: a page token can never pass for a requestState, nor the other way round.
PAGE_SALT = "mcpforms.url_mode.link"
# 2026-07-28 has no elicitationId: the page's row travels in the requestState's pending list.
PENDING_PREFIX = "url:"


def _binding(server: str, tool: str, principal: str) -> str:
    return hashlib.sha256(f"{server}\n{tool}\n{principal}".encode()).hexdigest()[:32]


@dataclass(frozen=True)
class PageClaim:
    """What a verified page token names: the elicitation row, and a digest of the server, the tool and the
    principal."""

    elicitation: str
    binding: str

    def binds(self, *, server: str, tool: str, principal: str) -> bool:
        """Tell whether the token was minted for this server's tool and this principal."""
        return self.binding == _binding(server, tool, principal)


class InvalidPageToken(InvalidToken):
    """A page token that is tampered, truncated or expired; the reason is logged, never shown."""

    message = "Invalid or expired link"


def dump_page_token(*, elicitation: str, server: str, tool: str, principal: str) -> str:
    """Sign the link to one URL-mode page, bound to the principal and the server's tool.

    Signed data is readable, and a URL must not carry anything about the user (spec §7.3): the token holds
    the row's random id and a digest of what it is bound to, never the principal itself.
    """
    binding = _binding(server, tool, principal)
    return sign({"e": elicitation, "b": binding}, salt=PAGE_SALT, compress=False)


def load_page_token(token: str) -> PageClaim:
    """Verify a page token (signature and ``URL_MODE_MAX_AGE``); raise ``InvalidPageToken`` otherwise."""
    try:
        payload = unsign(token, salt=PAGE_SALT, max_age=conf.URL_MODE_MAX_AGE)
    except InvalidToken as error:
        raise InvalidPageToken(error.reason, expired=error.expired) from None
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


def page_kinds(fields: Iterable[AutoFormField]) -> str:
    """What of ``fields`` only the page may collect, in words: "a file and a password", or ""."""
    kinds = {auto.type for auto in fields if auto.page_only}
    return " and ".join(sorted({"password": "a password", "file": "a file"}[kind] for kind in kinds))


class NoPage(Exception):
    """This server cannot link to the page: no ``BASE_URL``, or ``mcpforms.urls`` is not mounted. The
    text is the reason, worded to follow "The … form needs a web page, but "."""


def page_url(ctx: RequestContext, *, tool: str, elicitation: str) -> str:
    """The absolute URL of the page of the row ``elicitation``, its link signed for ``ctx``'s server and
    principal and the tool ``tool``; raise ``NoPage`` when the server cannot serve it."""
    base = conf.BASE_URL
    if not isinstance(base, str) or not base:
        logger.warning("URL-mode elicitation for %r needs MCPFORMS['BASE_URL'] to build its link", tool)
        raise NoPage("this server has no address for it")
    token = dump_page_token(elicitation=elicitation, server=ctx.server, tool=tool, principal=ctx.principal)
    try:
        return base.rstrip("/") + reverse("mcpforms_ui:page", args=[token])
    except NoReverseMatch:
        logger.warning("URL-mode elicitation needs mcpforms.urls in the URLconf (namespace 'mcpforms_ui')")
        raise NoPage("this server does not serve it") from None


def ask_page(
    ctx: RequestContext,
    *,
    tool: FormTool,
    values: Mapping[str, Any],
    problems: Sequence[str],
    elicitation: UrlElicitation | None = None,
) -> dict[str, Any]:
    """Ask the user to fill the form on its Django page: a URL-mode elicitation (spec §7.3).

    ``values`` (never a password or a file: those only come from the page) prefill the page.
    """
    from mcpforms.models import UrlElicitation, sweep

    what = page_kinds(tool.fields_for(ctx))
    why = (
        f"it asks for {what}, which is never sent through the conversation"
        if what
        else "it is filled on a web page"
    )
    if not ctx.supports_elicitation("url"):
        details = "".join(f"\n- {problem}" for problem in problems)
        return error_result(
            f"The {tool.get_title()} form cannot be filled here: {why}, and this client does not support "
            "URL-mode elicitation (it did not declare elicitation.url). Use a client that supports it."
            + details
        )
    reused = elicitation is not None
    # The link first: a server that cannot serve the page keeps no row for it.
    row_id = elicitation.pk if elicitation is not None else uuid.uuid4()
    try:
        url = page_url(ctx, tool=tool.name, elicitation=str(row_id))
    except NoPage as missing:
        return error_result(f"The {tool.get_title()} form needs a web page, but {missing}.")
    if elicitation is None:
        sweep(UrlElicitation.expired)
        fields = tool.fields_for(ctx)
        secret = {auto.name for auto in fields if auto.page_only}
        # Only what the form knows (and the object an update names) is kept: never unknown keys.
        known = {auto.name for auto in fields} | ({tool.lookup} if tool.update else set())
        given = ctx.arguments if isinstance(ctx.arguments, dict) else {}
        arguments = {name: value for name, value in given.items() if name in known}
        elicitation = UrlElicitation.objects.create(
            id=row_id,
            server=ctx.server,
            tool=tool.name,
            principal=ctx.principal,
            arguments=to_json({name: value for name, value in arguments.items() if name not in secret}),
            values=to_json({name: value for name, value in values.items() if name not in secret}),
        )
    # The same page asked again (the user has not submitted it yet) is no new round.
    state = ctx.mint_state(answers={}, pending=[f"{PENDING_PREFIX}{elicitation.pk}"], again=reused)
    return {
        "resultType": "input_required",
        "inputRequests": {
            tool.name: {
                "method": "elicitation/create",
                "params": {
                    "mode": "url",
                    "message": f"Please open this page to fill in the {tool.get_title()} form: {why}.",
                    "url": url,
                },
            }
        },
        "requestState": state,
    }


def resume_page(
    ctx: RequestContext, elicitation_id: str, *, tool: FormTool, declined: Declined | None
) -> dict[str, Any]:
    """The retry after a URL-mode elicitation: the page's outcome once it is submitted, else ask again;
    ``declined`` when the user declined or cancelled opening it.

    ``accept`` only means the user agreed to open the page (spec §7.3): the row says whether they finished.
    """
    from mcpforms.models import UrlElicitation

    if declined is not None:
        verb = "declined" if declined == "decline" else "cancelled"
        return error_result(f"The user {verb} the {tool.get_title()} form; nothing was submitted.")
    try:
        row = UrlElicitation.objects.filter(
            pk=elicitation_id, server=ctx.server, tool=tool.name, principal=ctx.principal
        ).first()
    except ValidationError:  # not a UUID: only a requestState signed by an older scheme could say so
        row = None
    if row is None:
        return error_result(f"The page of the {tool.get_title()} form has expired; call the tool again.")
    if row.result is not None:
        return dict(row.result)
    return ask_page(ctx, tool=tool, values=row.values, problems=(), elicitation=row)
