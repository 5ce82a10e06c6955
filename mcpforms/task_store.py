"""Tasks in the database: ``DatabaseTasks`` (what ``tasks/*`` reach), starting a task, and running its turns.

A task is a ``ToolTask`` row, committed before the client hears of it. What moves it on is its
``runner``: the work of a ``queue`` task runs through Django's tasks framework (``django.tasks``, or the
``django-tasks`` backport on Django 5.2), once per turn, on whatever worker the project runs — mcpforms
enqueues and never runs a worker of its own; a ``staff`` task waits for a decision in the admin
(``mcpforms.approvals``).

A turn is the tool's ``task_turn(ctx, arguments)`` in the write-once style of every handler: it reads
the task's arguments and the answers its input requests got so far (``ctx.input_responses``) and returns
a result, asks for more, or waits. Every status write is a compare-and-set on the status the writer saw,
so a cancel and a finishing turn never both win.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, TypeVar, cast

from django.db import DatabaseError, IntegrityError, connections, router, transaction
from django.db.models import Count, Min, Q
from django.utils import timezone

from mcpforms.conf import conf
from mcpforms.models import ToolTask, sweep, task_digest
from mcpforms.protocol.budgets import Kept, check_task_budget
from mcpforms.protocol.capabilities import client_implementation
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.errors import INTERNAL_ERROR, ProtocolError, ToolError, unreachable_service
from mcpforms.protocol.server import server_for
from mcpforms.protocol.state import ANONYMOUS, RequestState
from mcpforms.protocol.tasks import Ask, TaskCancelled, TaskView, Wait
from mcpforms.protocol.tokens import keyed_hmac, signing_keys

logger = logging.getLogger(__name__)
T = TypeVar("T")

Status = ToolTask.Status
LIVE = (Status.WORKING, Status.INPUT_REQUIRED)
# How often a client should poll: work in the background moves in seconds, a decision by staff in minutes.
QUEUE_POLL_MS = 1000
STAFF_POLL_MS = 5000
TASK_SALT = "mcpforms.task_store.id"


class TasksUnavailable(Exception):
    """Neither ``django.tasks`` (Django 6.0+) nor the ``django-tasks`` backport is installed."""


def _task_decorator() -> Callable[..., Any] | None:
    try:
        from django.tasks import task  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        try:
            from django_tasks import task  # type: ignore[import-not-found,no-redef,unused-ignore]
        except ImportError:
            return None
    return cast(Callable[..., Any], task)


def _run_turn_job(digest: str, turn: int) -> None:
    """The job a worker runs: one turn of the task ``digest``."""
    run_turn(digest, turn)


# A worker imports a job by its function's module path, and needs the Task there, not the function: the
# name is left to __getattr__, which makes the Task on first use. Importing the tasks framework (with
# django-tasks, django-stubs-ext's patches of half of contrib) costs every process memory and startup
# time, and only a background tool needs it.
_turn_function = _run_turn_job
del _run_turn_job
# The tasks framework's Task for a turn, enqueued by its module path on any backend the project set; None
# without a tasks framework.
turn_job: Any


def _turn_job() -> Any:
    if "turn_job" not in globals():
        decorator = _task_decorator()
        job = None if decorator is None else decorator()(_turn_function)
        globals().update(turn_job=job, _run_turn_job=_turn_function if job is None else job)
    return globals()["turn_job"]


def __getattr__(name: str) -> Any:
    if name in ("turn_job", "_run_turn_job"):
        _turn_job()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def default_backend_runs_inline() -> bool:
    """Whether the default TASKS backend runs a task in the request that enqueues it (Django's
    ImmediateBackend, which Django 6 uses when ``TASKS`` is not set)."""
    job = _turn_job()
    if job is None:
        return False
    try:
        backend = job.get_backend()
    except Exception:
        return False
    return type(backend).__name__ == "ImmediateBackend"


# Ids ------------------------------------------------------------------------------------------------------


def flow_digest(state: RequestState) -> str:
    """The flow of ``state`` as a task's ``flow`` column names it: the completion record's digest."""
    from mcpforms.models import CompletedFlow

    return CompletedFlow.digest_of(state)


def _task_id(flow: str | None, key: str | bytes | None = None) -> str:
    """A fresh id: 256 random bits, or for a form flow a keyed derivation of its digest (with ``key``, the
    newest signing key by default), as unguessable (the flow's id is random and the key the server's) and
    the same on every replay of its final round, whose client must hear of the very task the first one
    made."""
    if flow is None:
        return secrets.token_urlsafe(32)
    return keyed_hmac(TASK_SALT, flow, signing_keys()[0] if key is None else key).hexdigest()


# The store ------------------------------------------------------------------------------------------------


def _view(row: ToolTask, task_id: str) -> TaskView:
    requests = {key: entry["request"] for key, entry in row.outstanding.items()}
    return TaskView(
        task_id=task_id,
        status=cast(Any, str(row.status)),
        created=row.created,
        updated=row.updated,
        ttl_ms=row.ttl_ms,
        poll_interval_ms=row.poll_interval_ms,
        status_message=row.status_message or None,
        input_requests=requests or None,
        result=row.result,
        error=row.error,
    )


def _find(server: str, principal: str, task_id: str, *, lock: bool = False) -> ToolTask | None:
    """The caller's live (unexpired) task ``task_id``, or None: the same for unknown and another's."""
    rows = ToolTask.objects.select_for_update() if lock else ToolTask.objects
    row = rows.filter(digest=task_digest(task_id), server=server, principal=principal).first()
    if row is None or row.has_expired:
        return None
    return row


class DatabaseTasks:
    """The ``TaskStore`` of ``ToolTask`` rows (``MCPFORMS["TASK_STORE"]``'s default)."""

    def view(self, *, server: str, principal: str, task_id: str) -> TaskView | None:
        row = _find(server, principal, task_id)
        return None if row is None else _view(row, task_id)

    def answer(
        self, *, server: str, principal: str, task_id: str, responses: Mapping[str, Mapping[str, Any]]
    ) -> bool:
        with transaction.atomic():
            row = _find(server, principal, task_id, lock=True)
            if row is None:
                return False
            if row.status != Status.INPUT_REQUIRED:
                return True  # answered, superseded or ended: acknowledged, ignored
            taken = [key for key in responses if key in row.outstanding]
            if not taken:
                return True
            for key in taken:
                row.answers[row.outstanding.pop(key)["key"]] = dict(responses[key])
            fields = ["outstanding", "answers", "updated"]
            if not row.outstanding:
                row.status, row.turn = Status.WORKING, row.turn + 1
                fields += ["status", "turn"]
            row.updated = timezone.now()
            row.save(update_fields=fields)
            due = None if row.outstanding else row.turn
            if due is not None and row.runner == ToolTask.Runner.STAFF:
                # An amendment is judged under the row's lock: a decision taken meanwhile waits for it,
                # and then sees the amended values (or the request asking again), never the old ones.
                run_turn(row.digest, due)
                due = None
        if due is not None:
            _next_turn(row, due)
        return True

    def cancel(self, *, server: str, principal: str, task_id: str) -> bool:
        row = _find(server, principal, task_id)
        if row is None:
            return False
        cancel_task(row)
        return True


def cancel_task(row: ToolTask, *, message: str = "") -> bool:
    """Cancel ``row`` unless it has ended (compare-and-set): whether this cancel is the one that did."""
    changed = ToolTask.objects.filter(pk=row.pk, status__in=LIVE).update(
        status=Status.CANCELLED, status_message=message, outstanding={}, updated=timezone.now()
    )
    return bool(changed)


# Starting a task --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Started:
    """A task just made (or found again, for a replayed final round): its row and its id."""

    row: ToolTask
    task_id: str

    def created_result(self) -> dict[str, Any]:
        return _view(self.row, self.task_id).created_result()


def start_task(
    ctx: RequestContext,
    *,
    tool: str,
    arguments: Mapping[str, Any],
    runner: str = ToolTask.Runner.QUEUE,
    status_message: str = "",
    ttl: int | None = None,
    poll_interval_ms: int | None = None,
    flow: str | None = None,
) -> Started:
    """Make the task of ``ctx``'s call of ``tool`` with ``arguments`` (JSON), and commit it before the
    client hears of it. A ``queue`` task's first turn is enqueued once the row is committed. ``ttl`` is
    in seconds (``TASK_TTL`` by default). ``flow`` (``flow_digest``) makes a form flow's task once: a
    replay of its final round gets the same task back."""
    if flow is not None and (made := made_for(flow)) is not None:
        return made  # a replay of the final round: the task it made, whatever the budgets say now
    check_task_budget(_live, principal=ctx.principal, address=ctx.address)
    task_id = _task_id(flow)
    now = timezone.now()
    seconds = conf.TASK_TTL if ttl is None else ttl
    row = ToolTask(
        digest=task_digest(task_id),
        flow=flow,
        server=ctx.server,
        tool=tool,
        principal=ctx.principal,
        address=ctx.address if ctx.principal == ANONYMOUS and ctx.address else "",
        user=ctx.user if getattr(ctx.user, "pk", None) is not None else None,
        client=client_implementation(ctx.client_info),
        arguments=dict(arguments),
        runner=runner,
        status_message=status_message,
        poll_interval_ms=poll_interval_ms
        if poll_interval_ms is not None
        else (STAFF_POLL_MS if runner == ToolTask.Runner.STAFF else QUEUE_POLL_MS),
        created=now,
        updated=now,
        expires=now + timedelta(seconds=seconds),
        turn=1 if runner == ToolTask.Runner.QUEUE else 0,
    )
    try:
        with transaction.atomic():
            row.save(force_insert=True)
    except IntegrityError:
        # The same flow's final round, replayed while this one ran, made the task first.
        made = made_for(flow) if flow is not None else None
        if made is None:
            raise
        return made
    sweep(ToolTask.expired)  # for a project that does not run mcpforms_cleanup
    if runner == ToolTask.Runner.QUEUE:
        transaction.on_commit(lambda: _next_turn(row, row.turn))
    return Started(row, task_id)


def made_for(flow: str) -> Started | None:
    """The task the form flow ``flow`` made already, with its id, or None. The id was derived with the
    signing key that was the newest then: after a rotation (SECURITY.md, "Keys and rotation") that key is
    among the fallbacks, and a replayed final round must still be told of the very same task."""
    row = ToolTask.objects.filter(flow=flow).first()
    if row is None:
        return None
    for key in signing_keys():
        task_id = _task_id(flow, key)
        if task_digest(task_id) == row.digest:
            return Started(row, task_id)
    # The key that made it was retired: no client can be told of the task again.
    raise ToolError(
        f"This form was submitted already, as request #{row.pk}, with a signing key the server no longer "
        "holds; call the tool again to start over."
    )


def _live(principal: str, address: str | None) -> Kept:
    """The budgets' count: ``principal``'s tasks that have not expired (from ``address``, when given)."""
    rows = ToolTask.objects.filter(
        Q(expires__isnull=True) | Q(expires__gt=timezone.now()), principal=principal
    )
    if address is not None:
        rows = rows.filter(address=address)
    counted = rows.aggregate(count=Count("pk"), first=Min("expires"))
    first = counted["first"]
    return Kept(counted["count"], first.timestamp() if first is not None else None)


# Running a turn -------------------------------------------------------------------------------------------


def _next_turn(row: ToolTask, turn: int) -> None:
    """Enqueue turn ``turn`` of ``row``, a ``queue`` task, on the tasks framework's default backend."""
    try:
        job = _turn_job()
        if job is None:
            raise TasksUnavailable("neither django.tasks nor django-tasks is installed")
        job.enqueue(row.digest, turn)
    except Exception as error:
        # The task cannot run: it fails now rather than stay "working" forever.
        logger.error("Task #%s of %s could not be enqueued", row.pk, row.tool, exc_info=error)
        _write(row, turn, Status.FAILED, error=ProtocolError(INTERNAL_ERROR, "Internal error").as_error())


def _apart(work: Callable[[], T]) -> T:
    """Run ``work`` (a read or write of a task's row) on a database connection of its own, in a thread of
    its own: what a handler inside ``finishing`` reports must reach the client now, not when its
    transaction commits, and that transaction must take no lock on the row a cancel writes (PostgreSQL's
    row lock, SQLite's table or file lock): else the cancel waits for the handler it means to stop."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as error:  # re-raised on the caller's thread
            outcome["error"] = error
        finally:
            connections.close_all()  # this thread's own

    thread = threading.Thread(target=run, name="mcpforms-task-status")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return cast(T, outcome["value"])


class _Control:
    """``RequestContext.task`` for a turn of ``row``."""

    def __init__(self, row: ToolTask) -> None:
        self.row = row
        # Inside ``finishing``: the handler's transaction is open, and the row is read and written apart.
        self.finishing = False

    def _status(self) -> str | None:
        return ToolTask.objects.filter(pk=self.row.pk).values_list("status", flat=True).first()

    def cancelled(self) -> bool:
        status = _apart(self._status) if self.finishing else self._status()
        return status != Status.WORKING

    def say(self, message: str) -> None:
        def write() -> None:
            ToolTask.objects.filter(pk=self.row.pk, status=Status.WORKING).update(
                status_message=message[:500], updated=timezone.now()
            )

        if not self.finishing:
            write()
            return
        try:
            _apart(write)
        except DatabaseError as error:
            # SQLite takes one writer at a time: while the handler's own writes hold its lock, the
            # message waits out the busy timeout and is dropped; the handler goes on.
            logger.warning("Task #%s: its status message was not written", self.row.pk, exc_info=error)


def turn_context(row: ToolTask) -> RequestContext:
    """The context a turn of ``row`` runs in: a call of its tool by the requester, with the answers so far."""
    ctx = RequestContext.for_tool(
        row.tool, user=row.user, principal=row.principal, server=row.server, arguments=row.arguments
    )
    return replace(ctx, input_responses=dict(row.answers), client_info=row.client or None, task=_Control(row))


def run_turn(digest: str, turn: int) -> None:
    """Run turn ``turn`` of the task ``digest``, unless it has ended or moved on to another turn."""
    row = ToolTask.objects.filter(digest=digest).first()
    if row is None or row.status != Status.WORKING or row.turn != turn:
        return
    server = server_for(row.server)
    tool = server.tools.get(row.tool) if server is not None else None
    if tool is None or tool.task_turn is None:
        logger.error("Task #%s: the tool %r of server %r serves no tasks here", row.pk, row.tool, row.server)
        _write(row, turn, Status.FAILED, error={"code": INTERNAL_ERROR, "message": "Internal error"})
        return
    ctx = turn_context(row)
    try:
        outcome = tool.task_turn(ctx, dict(row.arguments))
    except TaskCancelled:
        return
    except ToolError as error:
        _write(row, turn, Status.COMPLETED, result=_error_result(str(error)))
        return
    except ProtocolError as error:
        _write(row, turn, Status.FAILED, error=error.as_error())
        return
    except Exception as error:
        service = unreachable_service(error)
        if service is not None:
            raise  # nothing is wrong with the task: the worker's backend may retry it
        logger.error("Task #%s of %s failed", row.pk, row.tool, exc_info=error)
        _write(row, turn, Status.FAILED, error={"code": INTERNAL_ERROR, "message": "Internal error"})
        return
    settle(row, turn, outcome)


def settle(row: ToolTask, turn: int, outcome: dict[str, Any] | Ask | Wait) -> None:
    """Write what a turn came to: a result, more questions, or waiting."""
    if isinstance(outcome, Wait):
        _write(row, turn, Status.WORKING, message=outcome.message, arguments=outcome.arguments)
    elif isinstance(outcome, Ask):
        _ask(row, turn, outcome.requests, arguments=outcome.arguments)
    elif outcome.get("resultType") == "input_required" or "inputRequests" in outcome:
        _ask(row, turn, outcome.get("inputRequests") or {})
    else:
        result = {key: value for key, value in outcome.items() if key != "resultType"}
        result.setdefault("content", [])
        _write(row, turn, Status.COMPLETED, result=result)


def _error_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


def _ask(
    row: ToolTask, turn: int, requests: Mapping[str, Any], *, arguments: Mapping[str, Any] | None = None
) -> None:
    """Put ``requests`` (by the tool's own keys) to the client under keys never issued before; with
    ``arguments``, the task keeps those instead of what it had."""
    with transaction.atomic():
        fresh = (
            ToolTask.objects.select_for_update().filter(pk=row.pk, status=Status.WORKING, turn=turn).first()
        )
        if fresh is None:
            return
        outstanding = {}
        for own, request in requests.items():
            fresh.issued += 1
            outstanding[f"{own}-{fresh.issued}"] = {"key": own, "request": request}
            fresh.answers.pop(own, None)  # what it asks again, it asks anew
        fresh.outstanding = outstanding
        fresh.status = Status.INPUT_REQUIRED if outstanding else Status.WORKING
        fresh.updated = timezone.now()
        fields = ["issued", "outstanding", "answers", "status", "updated"]
        if arguments is not None:
            fresh.arguments = dict(arguments)
            fields.append("arguments")
        fresh.save(update_fields=fields)


def _write(
    row: ToolTask,
    turn: int,
    status: str,
    *,
    result: dict[str, Any] | None = None,
    error: dict[str, Any] | None = None,
    message: str | None = None,
    arguments: Mapping[str, Any] | None = None,
) -> bool:
    """Move ``row`` from ``working`` at ``turn`` to ``status``: False when it was cancelled (or moved on)
    meanwhile, which wins."""
    changes: dict[str, Any] = {"status": status, "updated": timezone.now(), "outstanding": {}}
    if result is not None:
        changes["result"] = json.loads(json.dumps(result, default=str))
    if error is not None:
        changes["error"] = error
    if message is not None:
        changes["status_message"] = message[:500]
    if arguments is not None:
        changes["arguments"] = dict(arguments)
    return bool(ToolTask.objects.filter(pk=row.pk, status=Status.WORKING, turn=turn).update(**changes))


@contextmanager
def finishing(ctx: RequestContext) -> Iterator[Callable[[dict[str, Any]], None]]:
    """Run a turn's last step (a handler's writes) in one transaction with the task's completion: the
    task is checked first (``TaskCancelled`` when it was cancelled), and the block calls the function it
    gets with the result, so that the handler's writes and ``completed`` commit together or not at all — a
    cancel that lands while the block runs rolls the handler's writes back (``TaskCancelled``). Not on
    SQLite, which takes one writer at a time: see below."""
    control = ctx.task
    if not isinstance(control, _Control):
        raise TypeError("finishing() runs inside a turn of a task")
    if control.cancelled():
        raise TaskCancelled
    row = control.row

    def complete(result: dict[str, Any]) -> None:
        # The compare-and-set is the lock: a cancel that wrote first leaves nothing to update, and the
        # handler's writes roll back with the block; one that comes after waits, then finds it ended.
        if not _write(row, row.turn, Status.COMPLETED, result=result):
            raise TaskCancelled

    if _one_writer_at_a_time():
        # SQLite: while the handler's transaction holds the database's one write lock (from its first
        # write, or from BEGIN under IMMEDIATE transactions), no other connection can write its progress
        # or its cancel. There the handler's writes commit as it makes them, so that both reach the task
        # between its steps; a cancel still stops it at its next report, and still wins over completion.
        yield complete
        return
    # The row is not locked while the handler runs: its progress (``RequestContext.report_progress``)
    # is written and its cancel read apart, so that a cancel lands between two steps, not after the last.
    control.finishing = True
    try:
        with transaction.atomic():
            yield complete
    finally:
        control.finishing = False


def _one_writer_at_a_time() -> bool:
    """Whether the tasks' database takes one writer at a time (SQLite), whatever the connection."""
    return bool(connections[router.db_for_write(ToolTask)].vendor == "sqlite")
