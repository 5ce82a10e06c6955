"""The request context every tool, prompt and resource handler receives, on every round."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcpforms.protocol.capabilities import ElicitationMode, supports_elicitation
from mcpforms.protocol.jsonrpc import notification
from mcpforms.protocol.state import ANONYMOUS, RequestState, dump_state, principal_for
from mcpforms.protocol.tasks import TaskCancelled, TaskControl

Notify = Callable[[dict[str, Any]], None]
# The key of the server mcpforms' own registry fills (``mcpforms.protocol.server.default_server``).
DEFAULT_SERVER = "default"
# Least to most severe (RFC 5424, as logging/setLevel and _meta logLevel name them).
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


@dataclass(frozen=True)
class Access:
    """What the transport knows of the caller's credentials besides who they are.

    ``scopes``: the OAuth scopes the caller's access token carries; None for credentials that carry
    every scope (a personal access token, the Django session, stdio): Django permissions decide alone.
    ``sign_in``: whether the transport can ask an anonymous caller to sign in (HTTP with OAuth: a 401
    challenge a host answers by signing the user in).
    """

    scopes: frozenset[str] | None = None
    sign_in: bool = False

    def lacks(self, scopes: Iterable[str]) -> tuple[str, ...]:
        """Those of ``scopes`` the credentials do not carry, in order."""
        if self.scopes is None:
            return ()
        return tuple(scope for scope in scopes if scope not in self.scopes)


EVERY_SCOPE = Access()


def tool_binding(name: str) -> str:
    """What a ``tools/call`` of ``name`` binds its requestState to, besides the server, the arguments and
    the principal: ``tool:<name>``, so that no prompt or resource of the same name shares its states."""
    return f"tool:{name}"


@dataclass
class _Progress:
    last: float | None = None


@dataclass(frozen=True)
class RequestContext:
    """One request as a handler sees it: who asks, what the client can do, and what earlier rounds proved.

    ``input_responses`` and ``request_state`` are None on a first round. ``request_state`` has already been
    verified against this very call (``server``, ``binding``, arguments, principal), so a handler can
    trust it. ``server`` is the key of the server serving the request (``Offering.key``).
    ``client_info`` is the client's Implementation object from ``_meta``, when it sent one.
    ``access`` is what the transport knows of the caller's credentials (their OAuth scopes).
    ``address`` is the budget scope of an anonymous caller's address, when the transport has one.
    """

    method: str
    binding: str
    arguments: Any
    client_capabilities: Mapping[str, Any]
    meta: Mapping[str, Any]
    user: Any = None
    principal: str = ANONYMOUS
    server: str = DEFAULT_SERVER
    client_info: Mapping[str, Any] | None = None
    input_responses: dict[str, Any] | None = None
    request_state: RequestState | None = None
    # True when the echoed requestState was authentic but minted for an older version of the definition.
    stale_state: bool = False
    progress_token: str | int | None = None
    # The least severe level the client wants notifications/message for; None: it wants none.
    log_level: str | None = None
    state_version: str | None = None
    access: Access = EVERY_SCOPE
    # Whether this request's client opted in to the tasks extension (2026-07-28 only): a call may then
    # answer with a task instead of its result.
    accepts_tasks: bool = False
    # The budget scope of an anonymous caller's network address (``budgets.address_scope`` of HTTP's
    # REMOTE_ADDR): what the budgets count its tasks by. None for a user, or without an address (stdio).
    address: str | None = None
    # The task this context runs the work of, outside any request (a worker, a staff member's decision).
    task: TaskControl | None = field(default=None, repr=False, compare=False)
    _notify: Notify | None = field(default=None, repr=False, compare=False)
    _progress: _Progress = field(default_factory=_Progress, repr=False, compare=False)

    @classmethod
    def for_tool(
        cls,
        name: str,
        *,
        user: Any,
        principal: str | None = None,
        server: str = DEFAULT_SERVER,
        arguments: Any = None,
    ) -> RequestContext:
        """A ``tools/call`` of ``name`` by ``user`` that comes from no MCP request: the URL-mode page acting
        for the caller who asked, or a page that shows who may use what. It is bound as the core binds a
        call of the tool (``tool_binding``), declares no client capabilities and carries no state;
        ``principal`` is the user's unless given."""
        return cls(
            method="tools/call",
            binding=tool_binding(name),
            arguments={} if arguments is None else arguments,
            client_capabilities={},
            meta={},
            user=user,
            principal=principal_for(user) if principal is None else principal,
            server=server,
        )

    @property
    def may_sign_in(self) -> bool:
        """Whether the caller is anonymous and the transport can ask them to sign in, so that what
        they may not use yet is worth a ``SignInRequired`` rather than an "unknown" answer."""
        return self.access.sign_in and self.principal == ANONYMOUS

    def supports_elicitation(self, mode: ElicitationMode = "form") -> bool:
        """Tell whether this request's client can answer an elicitation in ``mode``."""
        return supports_elicitation(self.client_capabilities, mode)

    def mint_state(
        self,
        *,
        answers: Mapping[str, Any],
        pending: Iterable[str] = (),
        version: str | None = None,
        again: bool = False,
        flow_key: str | None = None,
    ) -> str:
        """Sign a requestState for the next round, bound to this call, its arguments and its principal.

        ``answers`` travel signed but readable: never put a secret in them. Each round counts against
        ``MAX_ROUNDS`` unless it is this one asked ``again`` unchanged (a page the user is still on);
        past the limit, or when the token would be too large, this raises ``StateLimit``, a ``ToolError``.
        The flow's secret (``flow_key``: given, or this round's state's) goes on to the next round.
        """
        state = self.request_state
        rounds = 1 if state is None else state.rounds + (0 if again else 1)
        if flow_key is None and state is not None:
            flow_key = state.flow_key
        return dump_state(
            server=self.server,
            tool=self.binding,
            arguments=self.arguments,
            principal=self.principal,
            # A later round stays in the flow it continues; a first round (or a stale one) starts one.
            flow=state.flow if state is not None else None,
            answers=answers,
            pending=pending,
            version=self.state_version if version is None else version,
            rounds=rounds,
            flow_key=flow_key,
        )

    def check_cancelled(self) -> None:
        """Raise ``TaskCancelled`` when the task this context works for was cancelled; else nothing."""
        if self.task is not None and self.task.cancelled():
            raise TaskCancelled

    def log(self, level: str, data: Any, *, logger: str | None = None) -> None:
        """Send ``notifications/message`` when the client asked for messages of ``level`` or below: in
        2026-07-28 with ``_meta`` logLevel, in a 2025 session always unless ``logging/setLevel`` says
        otherwise. Messages go out on the request's stream, before its result."""
        if self._notify is None or self.log_level not in LOG_LEVELS or level not in LOG_LEVELS:
            return
        if LOG_LEVELS.index(level) < LOG_LEVELS.index(self.log_level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        self._notify(notification("notifications/message", params))

    def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` when the client asked for it with a progressToken (spec §8.5).

        Without a token this does nothing; a value that does not increase is dropped, as progress must.
        Inside a task there is no request to notify: ``message`` becomes the task's ``statusMessage``, and
        a task cancelled meanwhile stops here (``TaskCancelled``), so that reporting progress between
        steps is all a long handler does to honour a cancel.
        """
        if self.task is not None:
            self.check_cancelled()
            if message is not None:
                self.task.say(message)
            return
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
