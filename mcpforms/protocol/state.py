"""``requestState``: what earlier rounds proved, signed with ``django.core.signing`` and echoed by the client.

The client hands the token back on its retry, so it is attacker-controlled input (spec §6.4). It is bound
to the server that minted it (its ``key``), the tool, a digest of the arguments, the principal and
optionally a version of the tool's definition;
anything that does not verify raises one ``InvalidState`` whose reason is logged, never sent.

Signed, not encrypted: the client can read it. The caller decides what goes in: mcpforms' form flow never
puts a password or a file there. A flow whose wizard keeps a step on the server carries the secret that
step is sealed with (``flow_key``), so that the server's database alone never opens it.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from mcpforms.conf import conf
from mcpforms.protocol.errors import ToolError, invalid_params
from mcpforms.protocol.tokens import InvalidToken, keyed_hmac, sign, signing_keys, unsign

logger = logging.getLogger(__name__)

SALT = "mcpforms.state.request"
ARGUMENTS_SALT = "mcpforms.state.arguments"
ANONYMOUS = "anonymous"


class InvalidState(InvalidToken):
    """A requestState that is tampered, truncated, expired or bound to something else."""

    message = "Invalid or expired requestState"


class StateLimit(ToolError):
    """A requestState that may not be minted: the flow asked ``MAX_ROUNDS`` times already, or its answers
    would make the token longer than ``MAX_STATE_BYTES``. The text is for the model; nothing was run."""


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
    # The key of the server that minted it: another server's tool of the same name refuses it.
    server: str
    # Random when a flow starts, the same in each of its later rounds: it is what completes once, and two
    # flows that happen to carry the same answers are still two flows.
    flow: str
    answers: dict[str, Any]
    pending: tuple[str, ...]
    version: str | None = None
    # How many times the flow has asked so far, this state's round included (MAX_ROUNDS).
    rounds: int = 1
    # A secret of the flow, set once something the server keeps for it is sealed (a wizard's page step,
    # ``mcpforms.sealing``), the same in each later round; the server keeps it nowhere else.
    flow_key: str | None = None


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
    return keyed_hmac(ARGUMENTS_SALT, canonical, secret).hexdigest()


def dump_state(
    *,
    server: str,
    tool: str,
    arguments: Any,
    principal: str,
    answers: Mapping[str, Any],
    pending: Iterable[str] = (),
    version: str | None = None,
    flow: str | None = None,
    rounds: int = 1,
    flow_key: str | None = None,
) -> str:
    """Mint a token carrying the answers so far and the names still pending, for the flow ``flow`` (a
    new one when None) in its round ``rounds``, with the flow's secret ``flow_key`` when it has one.

    Raise ``StateLimit`` rather than mint a token the flow may not go on with: past ``MAX_ROUNDS``, or
    longer than ``MAX_STATE_BYTES``, which ``load_state`` would refuse.
    """
    most, largest = conf.MAX_ROUNDS, conf.MAX_STATE_BYTES
    if rounds > most:
        raise StateLimit(
            f"The user was asked {most} times without completing this, the most one flow may take "
            "(MCPFORMS['MAX_ROUNDS']); nothing was submitted. Start over: call again without requestState."
        )
    payload = {
        "server": server,
        "tool": tool,
        "args": arguments_digest(arguments),
        "principal": principal,
        "iat": int(time.time()),
        "flow": flow or secrets.token_urlsafe(12),
        "answers": dict(answers),
        "pending": list(pending),
        "version": version,
        "rounds": rounds,
    }
    if flow_key is not None:
        payload["key"] = flow_key
    token = sign(payload, salt=SALT)
    if len(token) > largest:
        raise StateLimit(
            f"The answers are too large to carry to the next round: their requestState would be {len(token)} "
            f"bytes, more than {largest} (MCPFORMS['MAX_STATE_BYTES']). Nothing was submitted; call again "
            "with shorter values."
        )
    return token


def load_state(
    token: Any,
    *,
    server: str,
    tool: str,
    arguments: Any,
    principal: str,
    version: str | None = None,
) -> RequestState:
    """Verify a token echoed by the client against this call; raise ``InvalidState`` otherwise.

    A token longer than ``MAX_STATE_BYTES`` is -32602 before any signature is computed over it: no
    token this server mints is that long.
    """
    limit = conf.MAX_STATE_BYTES
    if isinstance(token, str) and len(token.encode("utf-8", "surrogatepass")) > limit:
        raise invalid_params(
            f"Invalid params: requestState is longer than {limit} bytes (MCPFORMS['MAX_STATE_BYTES'])"
        )
    try:
        try:
            payload = unsign(token, salt=SALT, max_age=conf.STATE_MAX_AGE)
        except InvalidToken as error:
            raise InvalidState(error.reason, expired=error.expired) from None
        return _verified(
            payload, server=server, tool=tool, arguments=arguments, principal=principal, version=version
        )
    except InvalidState as error:
        logger.info("Rejected requestState for tool %r: %s", tool, error.reason)
        raise


def _verified(
    payload: Any, *, server: str, tool: str, arguments: Any, principal: str, version: str | None
) -> RequestState:
    if not isinstance(payload, dict):
        raise InvalidState("payload is not an object")
    expected = {"server": server, "tool": tool, "principal": principal}
    for name, value in expected.items():
        if payload.get(name) != value:
            raise InvalidState(f"minted for another {name}")
    # Minted under the current key or one it rotated from (the signature said which keys are trusted);
    # the older keys are tried only when the current one does not match.
    digest = payload.get("args")
    if not any(digest == arguments_digest(arguments, key) for key in signing_keys()):
        raise InvalidState("minted for other arguments")
    if payload.get("version") != version:
        raise StaleState("minted for another version")
    answers, pending, issued_at = payload.get("answers"), payload.get("pending"), payload.get("iat")
    flow = payload.get("flow")
    rounds = payload.get("rounds")
    flow_key = payload.get("key")
    if (
        not isinstance(answers, dict)
        or not isinstance(pending, list)
        or not isinstance(issued_at, int)
        or not isinstance(flow, str)
        or not isinstance(rounds, int)
        or not (flow_key is None or isinstance(flow_key, str))
    ):
        raise InvalidState("malformed payload")
    return RequestState(
        tool=tool,
        principal=principal,
        issued_at=issued_at,
        server=server,
        flow=flow,
        answers=answers,
        pending=tuple(str(name) for name in pending),
        version=version,
        rounds=rounds,
        flow_key=flow_key,
    )
