"""How many 2025-era sessions, pending calls and tasks a caller may make the server keep.

A 2025 session is stored for ``SESSION_MAX_AGE`` and a pending call for ``STATE_MAX_AGE``, for whoever
asked, anonymous callers included. Each is small now (``capabilities.retained_capabilities``, a tool's
known arguments only), and these budgets bound how many there are: per user, and for anonymous callers
per client address and all together. The rule is written once, here, against the store's
``count_sessions``/``count_calls``, so the memory, database and cache stores keep the same budgets.
Tasks (either era: an approval request is made for a 2025 client too) are kept until they expire, whatever
their status, and are budgeted the same way, against a count of the live ones.

The count and the write that follows are two steps, not one: requests in flight at the same moment may
each see the last free place, so a budget can be passed by as many requests as the deployment serves at
once (its workers), never by more. That is the price of a check every store can make; the budgets exist
to bound storage, which a few rows more does not change.
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from mcpforms.conf import conf
from mcpforms.protocol.era2025.sessions import SessionStore, Tally
from mcpforms.protocol.errors import ProtocolError
from mcpforms.protocol.state import ANONYMOUS

# The code of a refusal for a budget: the reference SDKs' code for a server-side session refusal
# (2025-11-25 Streamable HTTP), never -32603; HTTP says "too many" with 429 and Retry-After (RFC 6585).
OVER_BUDGET = -32000
# An IPv6 host is handed a whole /64 (RFC 6177): counting each of its addresses apart would give one
# client 2**64 budgets.
IPV6_PREFIX = 64


class OverBudget(ProtocolError):
    """A request that would make the server keep more than a budget allows: 429, with Retry-After."""

    status = 429

    def __init__(self, message: str, *, setting: str, retry_after: int) -> None:
        super().__init__(OVER_BUDGET, message, {"limit": setting, "retryAfter": retry_after})
        self.retry_after = retry_after

    @property
    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)}


def address_scope(address: str | None) -> str | None:
    """The client address as a budget counts it: an IPv4 address, or the /64 of an IPv6 one; None when
    the transport gave none, or gave something that is no address (a Unix socket)."""
    if not address:
        return None
    try:
        parsed = ipaddress.ip_address(address.strip())
    except ValueError:
        return None
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        return str(parsed.ipv4_mapped)
    if isinstance(parsed, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((parsed, IPV6_PREFIX), strict=False))
    return str(parsed)


def check_session_budget(sessions: SessionStore, *, principal: str, address: str | None) -> None:
    """Raise ``OverBudget`` when ``principal`` (from ``address``, a scope of ``address_scope``) may open no
    more sessions now. A user is counted alone; anonymous callers are one principal, counted per address
    and all together."""
    scopes = _scopes(
        principal, address, "SESSIONS_PER_PRINCIPAL", "ANONYMOUS_SESSIONS_PER_ADDRESS", "ANONYMOUS_SESSIONS"
    )
    for scope, setting, whose in scopes:
        _check_sessions(sessions, principal, scope, setting, whose)


def _scopes(
    principal: str, address: str | None, user: str, per_address: str, everyone: str
) -> Iterator[tuple[str | None, str, str]]:
    """Where ``principal`` is counted against a budget, with the setting and the words of each: a user
    alone; anonymous callers per address (when the transport gave one) and all together."""
    if principal != ANONYMOUS:
        yield None, user, "your"
        return
    if address is not None:
        yield address, per_address, "this address's"
    yield None, everyone, "anonymous callers'"


def _check_sessions(
    sessions: SessionStore, principal: str, address: str | None, setting: str, whose: str
) -> None:
    limit: int | None = getattr(conf, setting)
    if limit is None:
        return  # the project turned this budget off
    tally = sessions.count_sessions(principal=principal, address=address)
    if tally.count < limit:
        return
    wait = _retry_after(tally, conf.SESSION_MAX_AGE)
    raise OverBudget(
        f"Too many sessions: {whose} {tally.count} open 2025-era sessions reach the limit of {limit} "
        f"(MCPFORMS['{setting}']); end one with DELETE, or retry in {wait} seconds",
        setting=setting,
        retry_after=wait,
    )


def check_call_budget(sessions: SessionStore, session_id: str) -> None:
    """Raise ``OverBudget`` when the session may keep no more pending calls now."""
    limit = conf.CALLS_PER_SESSION
    if limit is None:
        return
    tally = sessions.count_calls(session_id)
    if tally.count >= limit:
        wait = _retry_after(tally, conf.STATE_MAX_AGE)
        raise OverBudget(
            f"Too many calls waiting on the user: this session keeps {tally.count}, the limit is {limit} "
            f"(MCPFORMS['CALLS_PER_SESSION']); finish one, open another session, or retry in {wait} "
            "seconds",
            setting="CALLS_PER_SESSION",
            retry_after=wait,
        )


def _retry_after(tally: Tally, lifetime: int) -> int:
    """Seconds until the oldest counted one expires, which frees a place at the latest."""
    if tally.oldest is None:
        return 1
    return max(1, math.ceil(tally.oldest + lifetime - time.time()))


@dataclass(frozen=True)
class Kept:
    """How many live tasks a scope holds, and when the first of them expires (a POSIX time; None when none
    does): a place frees up then, at the latest."""

    count: int
    first_expiry: float | None = None


# The live tasks of a principal (from an address, when one is given).
TaskCount = Callable[[str, str | None], Kept]


def check_task_budget(count: TaskCount, *, principal: str, address: str | None) -> None:
    """Raise ``OverBudget`` when ``principal`` (from ``address``, a scope of ``address_scope``) may start no
    more tasks now; counted as sessions are: a user alone, anonymous callers per address and together."""
    scopes = _scopes(
        principal, address, "TASKS_PER_PRINCIPAL", "ANONYMOUS_TASKS_PER_ADDRESS", "ANONYMOUS_TASKS"
    )
    for scope, setting, whose in scopes:
        _check_tasks(count, principal, scope, setting, whose)


def _check_tasks(count: TaskCount, principal: str, address: str | None, setting: str, whose: str) -> None:
    limit: int | None = getattr(conf, setting)
    if limit is None:
        return
    kept = count(principal, address)
    if kept.count < limit:
        return
    wait = conf.TASK_TTL if kept.first_expiry is None else max(1, math.ceil(kept.first_expiry - time.time()))
    raise OverBudget(
        f"Too many tasks: {whose} {kept.count} live tasks reach the limit of {limit} "
        f"(MCPFORMS['{setting}']); a task is kept until it expires, and the first of these does in {wait} "
        "seconds: retry then",
        setting=setting,
        retry_after=wait,
    )
