"""The tasks extension of 2026-07-28 (``io.modelcontextprotocol/tasks``, SEP-2663): a call that outlives its
request, polled with ``tasks/get``, answered with ``tasks/update``, stopped with ``tasks/cancel``.

The core knows the wire and the store's contract; where tasks live (``mcpforms.task_store``, the
database) and what runs them (a tasks framework's worker, a staff member's decision) are layers above.
Three rules shape it:

- a client opts in per request, in ``_meta``'s client capabilities; a result of kind ``task`` goes only
  to a request that did, and ``tasks/*`` from one that did not is -32021 before any lookup;
- an unknown, expired and someone else's task id get the same -32602, so that ids cannot be probed;
- no ``requestState`` anywhere on the task wire: what a task knows lives in its store.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

from django.utils.module_loading import import_string

from mcpforms.conf import conf
from mcpforms.protocol.errors import (
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    ProtocolError,
    invalid_params,
)

EXTENSION = "io.modelcontextprotocol/tasks"
# The methods the extension adds; tasks/result and tasks/list are gone from it, so they stay -32601.
TASK_METHODS = ("tasks/get", "tasks/update", "tasks/cancel")

Status = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})


def opted_in(capabilities: Mapping[str, Any]) -> bool:
    """Whether the client declared the extension in *this* request's capabilities."""
    extensions = capabilities.get("extensions")
    return isinstance(extensions, Mapping) and isinstance(extensions.get(EXTENSION), Mapping)


def tasks_required(what: str = "this request") -> ProtocolError:
    """-32021 naming the extension: a client without it asked for a task, or for what only a task serves."""
    return ProtocolError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"Server requires the {EXTENSION} extension for {what}: declare it in this request's "
        "client capabilities",
        {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
    )


def unknown_task(task_id: Any) -> ProtocolError:
    """The one answer for an id that names no task of the caller's: unknown, expired or someone else's."""
    return invalid_params("Unknown or expired task", {"taskId": task_id})


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class TaskView:
    """A task as the wire shows it. ``input_requests`` is set while it is ``input_required``, ``result``
    once ``completed``, ``error`` (a JSON-RPC error object) once ``failed``."""

    task_id: str
    status: Status
    created: datetime
    updated: datetime
    ttl_ms: int | None
    poll_interval_ms: int | None = None
    status_message: str | None = None
    input_requests: Mapping[str, Any] | None = None
    result: Mapping[str, Any] | None = None
    error: Mapping[str, Any] | None = None

    def task(self) -> dict[str, Any]:
        """The Task object: what a CreateTaskResult is (flat, beside ``resultType: "task"``)."""
        task: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": _iso(self.created),
            "lastUpdatedAt": _iso(self.updated),
            "ttlMs": self.ttl_ms,
        }
        if self.status_message:
            task["statusMessage"] = self.status_message
        if self.poll_interval_ms is not None:
            task["pollIntervalMs"] = self.poll_interval_ms
        return task

    def created_result(self) -> dict[str, Any]:
        """The CreateTaskResult a ``tools/call`` returns for this task."""
        return {"resultType": "task", **self.task()}

    def detailed(self) -> dict[str, Any]:
        """The DetailedTask ``tasks/get`` returns: the Task, and what its status carries."""
        detailed = self.task()
        if self.status == "input_required" and self.input_requests:
            detailed["inputRequests"] = dict(self.input_requests)
        elif self.status == "completed" and self.result is not None:
            # What the call would have returned: a 2026-07-28 CallToolResult, whose resultType the
            # ext-tasks client requires (it rejects a result without one).
            detailed["result"] = {**self.result, "resultType": "complete"}
        elif self.status == "failed" and self.error is not None:
            detailed["error"] = dict(self.error)
        return detailed


class TaskStore(Protocol):
    """Where a server's tasks live, as ``tasks/*`` reach them. Each method finds the task by its id among
    those of ``principal`` on ``server``, and answers None or False for any other (unknown, expired,
    someone else's): the core turns both into the same -32602."""

    def view(self, *, server: str, principal: str, task_id: str) -> TaskView | None:
        """The task as it is now: a pure read."""
        ...

    def answer(
        self, *, server: str, principal: str, task_id: str, responses: Mapping[str, Mapping[str, Any]]
    ) -> bool:
        """Take ``responses`` to the task's outstanding input requests, before returning: keys it is not
        waiting on are ignored; answering some keeps it ``input_required`` on the rest."""
        ...

    def cancel(self, *, server: str, principal: str, task_id: str) -> bool:
        """Ask the task to stop: ``cancelled`` unless it has ended already (then nothing changes)."""
        ...


class TaskCancelled(Exception):
    """Raised inside a task's work when the task was cancelled meanwhile: its work stops there, and the
    task keeps the ``cancelled`` status the cancel gave it."""


@dataclass(frozen=True)
class Wait:
    """What a task's turn returns to go on ``working`` without a result: it waits for something outside
    the client (a staff member's decision). ``arguments``, when given, replace what the task stored."""

    message: str
    arguments: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Ask:
    """What a task's turn returns to ask the client (``input_required``) and keep what it knows so far:
    ``requests`` by the tool's own keys, and ``arguments``, when given, replacing what the task stored
    (the next turn reads them with the answers)."""

    requests: Mapping[str, Any]
    arguments: Mapping[str, Any] | None = None


def check_task_params(method: str, params: Mapping[str, Any]) -> None:
    """The params of ``tasks/*``, which ``mcp_types`` does not know: a string ``taskId`` and, for
    ``tasks/update``, an object of ``inputResponses`` whose entries are objects."""
    if not isinstance(params.get("taskId"), str):
        raise invalid_params("Invalid params: taskId: a string is required")
    if method == "tasks/update":
        responses = params.get("inputResponses")
        if not isinstance(responses, dict) or not all(isinstance(v, dict) for v in responses.values()):
            raise invalid_params("Invalid params: inputResponses must be an object whose entries are objects")


class TaskControl(Protocol):
    """What the work of a task reaches of its task while it runs (``RequestContext.task``)."""

    def cancelled(self) -> bool:
        """Whether the task was cancelled (or has otherwise ended) since its work started."""
        ...

    def say(self, message: str) -> None:
        """Show ``message`` as the task's ``statusMessage``."""
        ...


def configured_tasks() -> TaskStore | None:
    """The store ``MCPFORMS["TASK_STORE"]`` names (a dotted path to a class), made once per setting;
    None when it is None."""
    path = conf.TASK_STORE
    if path is None:
        return None
    cached = _stores.get(path)
    if cached is None:
        cached = _stores[path] = import_string(path)()
    return cached


_stores: dict[str, TaskStore] = {}
