"""``requestState``: what earlier rounds proved, signed with ``django.core.signing`` and echoed by the client.

The client hands the token back on its retry, so it is attacker-controlled input (spec §6.4). It is bound
to the tool, a digest of the arguments, the principal and optionally a version of the tool's definition;
anything that does not verify raises one ``InvalidState`` whose reason is logged, never sent.

Signed, not encrypted: the client can read it. The caller decides what goes in: mcpforms' form flow never
puts a password or a file there.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.utils.crypto import salted_hmac

from mcpforms.conf import conf
from mcpforms.protocol.tokens import InvalidToken, sign, signing_keys, unsign

logger = logging.getLogger(__name__)

SALT = "mcpforms.state.request"
ARGUMENTS_SALT = "mcpforms.state.arguments"
ANONYMOUS = "anonymous"


class InvalidState(InvalidToken):
    """A requestState that is tampered, truncated, expired or bound to something else."""

    message = "Invalid or expired requestState"


class StaleState(InvalidState):
    """An authentic token for this very call, minted for an older version of the tool's definition.

    Not an attack: the form changed while the user was filling it in, so the caller asks again.
    """


@dataclass(frozen=True)
class RequestState:
    """A verified requestState payload."""

    tool: str
    principal: str
    issued_at: int
    # Random when a flow starts, the same in each of its later rounds: it is what completes once, and two
    # flows that happen to carry the same answers are still two flows.
    flow: str
    answers: dict[str, Any]
    pending: tuple[str, ...]
    version: str | None = None


def principal_for(user: Any) -> str:
    """Name the principal a state is minted for: a user id, or the anonymous marker."""
    if user is None or not getattr(user, "is_authenticated", False):
        return ANONYMOUS
    return f"user:{user.pk}"


def arguments_digest(arguments: Any, key: str | bytes | None = None) -> str:
    """Digest the tool arguments canonically, so a state cannot be replayed with other arguments.

    Keyed (HMAC with the signing key, ``key`` or the current one): the token is readable, and a plain
    hash of a low-entropy argument (a PIN, a birth date) could be guessed offline.
    """
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str)
    secret = signing_keys()[0] if key is None else key
    return salted_hmac(ARGUMENTS_SALT, canonical, secret=secret, algorithm="sha256").hexdigest()


def dump_state(
    *,
    tool: str,
    arguments: Any,
    principal: str,
    answers: Mapping[str, Any],
    pending: Iterable[str] = (),
    version: str | None = None,
    flow: str | None = None,
) -> str:
    """Mint a token carrying the answers so far and the names still pending, for the flow ``flow`` (a
    new one when None)."""
    payload = {
        "tool": tool,
        "args": arguments_digest(arguments),
        "principal": principal,
        "iat": int(time.time()),
        "flow": flow or secrets.token_urlsafe(12),
        "answers": dict(answers),
        "pending": list(pending),
        "version": version,
    }
    return sign(payload, salt=SALT)


def load_state(
    token: Any, *, tool: str, arguments: Any, principal: str, version: str | None = None
) -> RequestState:
    """Verify a token echoed by the client against this call; raise ``InvalidState`` otherwise."""
    try:
        try:
            payload = unsign(token, salt=SALT, max_age=conf.STATE_MAX_AGE)
        except InvalidToken as error:
            raise InvalidState(error.reason, expired=error.expired) from None
        return _verified(payload, tool=tool, arguments=arguments, principal=principal, version=version)
    except InvalidState as error:
        logger.info("Rejected requestState for tool %r: %s", tool, error.reason)
        raise


def _verified(
    payload: Any, *, tool: str, arguments: Any, principal: str, version: str | None
) -> RequestState:
    if not isinstance(payload, dict):
        raise InvalidState("payload is not an object")
    expected = {"tool": tool, "principal": principal}
    for name, value in expected.items():
        if payload.get(name) != value:
            raise InvalidState(f"minted for another {name}")
    # Minted under the current key or one it rotated from (the signature said which keys are trusted).
    if payload.get("args") not in {arguments_digest(arguments, key) for key in signing_keys()}:
        raise InvalidState("minted for other arguments")
    if payload.get("version") != version:
        raise StaleState("minted for another version")
    answers, pending, issued_at = payload.get("answers"), payload.get("pending"), payload.get("iat")
    flow = payload.get("flow")
    if (
        not isinstance(answers, dict)
        or not isinstance(pending, list)
        or not isinstance(issued_at, int)
        or not isinstance(flow, str)
    ):
        raise InvalidState("malformed payload")
    return RequestState(
        tool=tool,
        principal=principal,
        issued_at=issued_at,
        flow=flow,
        answers=answers,
        pending=tuple(str(name) for name in pending),
        version=version,
    )
