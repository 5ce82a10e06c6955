"""The request context every tool, prompt and resource handler receives, on every round."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcpforms.protocol.capabilities import ElicitationMode, supports_elicitation
from mcpforms.protocol.jsonrpc import notification
from mcpforms.protocol.state import ANONYMOUS, RequestState, dump_state

Notify = Callable[[dict[str, Any]], None]


@dataclass
class _Progress:
    last: float | None = None


@dataclass(frozen=True)
class RequestContext:
    """One request as a handler sees it: who asks, what the client can do, and what earlier rounds proved.

    ``input_responses`` and ``request_state`` are None on a first round. ``request_state`` has already been
    verified against this very call (``binding``, arguments, principal), so a handler can trust it.
    ``client_info`` is the client's Implementation object from ``_meta``, when it sent one.
    """

    method: str
    binding: str
    arguments: Any
    client_capabilities: Mapping[str, Any]
    meta: Mapping[str, Any]
    user: Any = None
    principal: str = ANONYMOUS
    client_info: Mapping[str, Any] | None = None
    input_responses: dict[str, Any] | None = None
    request_state: RequestState | None = None
    # True when the echoed requestState was authentic but minted for an older version of the definition.
    stale_state: bool = False
    progress_token: str | int | None = None
    state_version: str | None = None
    _notify: Notify | None = field(default=None, repr=False, compare=False)
    _progress: _Progress = field(default_factory=_Progress, repr=False, compare=False)

    def supports_elicitation(self, mode: ElicitationMode = "form") -> bool:
        """Tell whether this request's client can answer an elicitation in ``mode``."""
        return supports_elicitation(self.client_capabilities, mode)

    def mint_state(
        self,
        *,
        answers: Mapping[str, Any],
        pending: Iterable[str] = (),
        version: str | None = None,
    ) -> str:
        """Sign a requestState for the next round, bound to this call, its arguments and its principal.

        ``answers`` travel signed but readable: never put a secret in them.
        """
        return dump_state(
            tool=self.binding,
            arguments=self.arguments,
            principal=self.principal,
            answers=answers,
            pending=pending,
            version=self.state_version if version is None else version,
        )

    def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` when the client asked for it with a progressToken (spec §8.5).

        Without a token this does nothing; a value that does not increase is dropped, as progress must.
        """
        if self.progress_token is None or self._notify is None:
            return
        if self._progress.last is not None and progress <= self._progress.last:
            return
        self._progress.last = progress
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self._notify(notification("notifications/progress", params))
