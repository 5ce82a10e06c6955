"""The database task store (``mcpforms.task_store``) as ``tasks/*`` and a worker reach it: the keys it asks
under, the answers it takes, who may see a task, and who wins when a cancel meets a finishing turn.

The backend is Django's DummyBackend, which only keeps what is enqueued; ``work()`` runs it as a worker
does, importing each job by its module path. Runs on the suite's database (SQLite, and PostgreSQL when
DATABASE_URL names one).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, connections
from django.test import TestCase, override_settings
from django.utils import timezone
from django.utils.module_loading import import_string

import mcpforms.task_store as task_store
from mcpforms.models import ToolTask
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.server import Server
from mcpforms.protocol.state import ANONYMOUS
from mcpforms.task_store import DatabaseTasks, Started, cancel_task, run_turn, settle, start_task

BACKENDS = "django.tasks.backends" if importlib.util.find_spec("django.tasks") else "django_tasks.backends"

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("dummy_backend"),
]

KEY = "task-store-tests"
server = Server(key=KEY)
store = DatabaseTasks()
# What the "finish" tool's turn does before it returns its result, set by a test.
before_finishing: list[Callable[[RequestContext], None]] = []


def ask(key: str, message: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    return {"method": "elicitation/create", "params": {"message": message, "requestedSchema": schema}}


def named(ctx: RequestContext, key: str) -> str | None:
    answer = (ctx.input_responses or {}).get(key)
    if not isinstance(answer, dict) or answer.get("action") != "accept":
        return None
    name = (answer.get("content") or {}).get("name")
    return name if isinstance(name, str) else None


def done(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def _ask_until_not_again(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """Ask a name; "again" makes it ask once more."""
    name = named(ctx, "name")
    if name is None or name == "again":
        return {"resultType": "input_required", "inputRequests": {"name": ask("name", "Your name?")}}
    return done(f"Hello, {name}!")


def _ask_two(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    first, second = named(ctx, "first"), named(ctx, "second")
    if first is not None and second is not None:
        return done(f"{first} and {second}")
    requests = {key: ask(key, key) for key, name in (("first", first), ("second", second)) if name is None}
    return {"resultType": "input_required", "inputRequests": requests}


def _finish(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    for hook in before_finishing:
        hook(ctx)
    return done("finished")


def _not_a_request(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    raise AssertionError("only its task's turn runs")


server.tool(name="ask", description="Asks a name.", task_turn=_ask_until_not_again)(_not_a_request)
server.tool(name="pair", description="Asks two names.", task_turn=_ask_two)(_not_a_request)
server.tool(name="finish", description="Finishes.", task_turn=_finish)(_not_a_request)


@pytest.fixture
def dummy_backend() -> Iterator[None]:
    with override_settings(TASKS={"default": {"BACKEND": f"{BACKENDS}.dummy.DummyBackend"}}):
        yield
    before_finishing.clear()


def enqueued() -> list[Any]:
    return list(task_store.turn_job.get_backend().results)


def work() -> int:
    """Run what was enqueued, as a worker does: the job found by its module path. How many ran."""
    backend = task_store.turn_job.get_backend()
    jobs = list(backend.results)
    backend.clear()
    for job in jobs:
        import_string(job.task.module_path).call(*job.args, **job.kwargs)
    return len(jobs)


def start(tool: str, *, principal: str = ANONYMOUS, flow: str | None = None) -> Started:
    """Start a task of ``tool`` as a request by ``principal`` does; its first turn is enqueued on commit."""
    ctx = RequestContext.for_tool(tool, user=None, principal=principal, server=KEY)
    with TestCase.captureOnCommitCallbacks(execute=True):
        return start_task(ctx, tool=tool, arguments={}, flow=flow)


def view(started: Started, *, principal: str = ANONYMOUS) -> Any:
    return store.view(server=KEY, principal=principal, task_id=started.task_id)


def answer(started: Started, responses: dict[str, Any], *, principal: str = ANONYMOUS) -> bool:
    return store.answer(server=KEY, principal=principal, task_id=started.task_id, responses=responses)


def accept(name: str) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": name}}


def test_a_started_task_is_working_and_its_first_turn_is_enqueued():
    started = start("finish")
    assert view(started).status == "working"
    assert [job.args for job in enqueued()] == [[started.row.digest, 1]]
    assert work() == 1
    finished = view(started)
    assert (finished.status, finished.result) == ("completed", done("finished"))


def test_a_key_is_never_asked_twice_even_when_the_question_is():
    started = start("ask")
    work()
    first = view(started)
    assert first.status == "input_required"
    [key] = first.input_requests
    assert answer(started, {key: accept("again")})
    work()
    second = view(started)
    [again] = second.input_requests
    assert again != key
    # The used key is spent: an answer under it changes nothing.
    assert answer(started, {key: accept("Ada")})
    assert view(started).input_requests == second.input_requests and enqueued() == []
    assert answer(started, {again: accept("Ada")})
    work()
    assert view(started).result == done("Hello, Ada!")


def test_a_partial_answer_keeps_the_task_waiting_on_the_rest():
    started = start("pair")
    work()
    keys = sorted(view(started).input_requests)
    assert len(keys) == 2
    assert answer(started, {keys[0]: accept("Ada")})
    waiting = view(started)
    assert waiting.status == "input_required"
    assert list(waiting.input_requests) == [keys[1]]
    assert enqueued() == []  # nothing to run until it has every answer
    assert answer(started, {keys[1]: accept("Grace")})
    assert view(started).status == "working"
    work()
    assert view(started).result == done("Ada and Grace")


def test_an_answer_under_a_key_it_did_not_ask_is_acknowledged_and_ignored():
    started = start("ask")
    work()
    asked = view(started)
    assert answer(started, {"unknown-key": {"ignored": True}})
    assert view(started) == asked
    assert enqueued() == []


def test_cancelling_an_ended_task_is_acknowledged_and_changes_nothing():
    started = start("finish")
    work()
    finished = view(started)
    assert store.cancel(server=KEY, principal=ANONYMOUS, task_id=started.task_id)
    assert view(started) == finished


def test_someone_elses_task_is_as_unknown_as_no_task():
    started = start("ask")
    work()
    asked = view(started)
    key = next(iter(asked.input_requests))
    for principal, server_key, task_id in [
        ("user:42", KEY, started.task_id),  # another caller
        (ANONYMOUS, "another-server", started.task_id),  # another endpoint
        (ANONYMOUS, KEY, "no-such-task"),
    ]:
        where = {"server": server_key, "principal": principal, "task_id": task_id}
        assert store.view(**where) is None
        assert store.answer(**where, responses={key: accept("Eve")}) is False
        assert store.cancel(**where) is False
    assert view(started) == asked


def test_an_expired_task_is_unknown():
    started = start("ask")
    work()
    ToolTask.objects.filter(pk=started.row.pk).update(expires=timezone.now() - timedelta(seconds=1))
    assert view(started) is None
    assert answer(started, {"name-1": accept("Ada")}) is False
    assert store.cancel(server=KEY, principal=ANONYMOUS, task_id=started.task_id) is False


def test_a_cancel_before_the_turn_writes_wins_and_the_result_is_dropped():
    started = start("finish")
    cancels: list[bool] = []
    before_finishing.append(lambda ctx: cancels.append(cancel_task(started.row)))
    work()
    assert cancels == [True]
    cancelled = view(started)
    assert (cancelled.status, cancelled.result) == ("cancelled", None)


def test_a_cancel_after_the_turn_wrote_loses_and_the_result_stays():
    started = start("finish")
    work()
    assert cancel_task(started.row) is False
    assert view(started).status == "completed"


def test_a_turn_that_was_cancelled_meanwhile_does_not_run():
    started = start("finish")
    before_finishing.append(lambda ctx: pytest.fail("a cancelled task's turn ran"))
    assert cancel_task(started.row)
    assert work() == 1
    assert view(started).status == "cancelled"


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor == "sqlite", reason="SQLite in memory serializes every writer")
def test_a_cancel_racing_a_finishing_turn_exactly_one_wins():
    """On PostgreSQL the two writers really race, each on its own connection."""
    for _ in range(20):
        started = start("finish")
        row = ToolTask.objects.get(pk=started.row.pk)
        go = threading.Barrier(2)
        outcome: dict[str, bool] = {}

        def finish(row: ToolTask = row, go: threading.Barrier = go, outcome: dict = outcome) -> None:
            go.wait()
            outcome["finished"] = task_store._write(row, 1, ToolTask.Status.COMPLETED, result=done("x"))
            connections.close_all()

        def cancel(row: ToolTask = row, go: threading.Barrier = go, outcome: dict = outcome) -> None:
            go.wait()
            outcome["cancelled"] = cancel_task(row)
            connections.close_all()

        threads = [threading.Thread(target=finish), threading.Thread(target=cancel)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert sorted(outcome.values()) == [False, True], outcome
        status = view(started).status
        assert status == ("completed" if outcome["finished"] else "cancelled")


def test_a_replayed_start_of_the_same_flow_finds_the_same_task():
    flow = "f" * 64
    first = start("finish", flow=flow)
    again = start("finish", flow=flow)
    assert again.task_id == first.task_id
    assert ToolTask.objects.filter(flow=flow).count() == 1
    assert again.row.pk == first.row.pk


def test_a_settled_result_is_json_and_drops_its_result_type():
    started = start("finish")
    task_store.turn_job.get_backend().clear()
    settle(started.row, 1, {"resultType": "complete", "content": [], "structuredContent": {"n": 1}})
    assert view(started).result == {"content": [], "structuredContent": {"n": 1}}


def test_a_turn_of_an_unknown_task_does_nothing():
    run_turn("0" * 64, 1)
    assert ToolTask.objects.count() == 0


def test_a_process_without_background_work_never_imports_the_tasks_framework():
    # django-tasks (Django 5.2's backport) and the patches it applies cost every worker memory and startup
    # time; only enqueueing a turn or a worker looking the job up by its path needs it.
    code = (
        "import sys, django; from django.conf import settings;"
        "settings.configure(INSTALLED_APPS=['django.contrib.admin', 'django.contrib.auth',"
        " 'django.contrib.contenttypes', 'django.contrib.sessions', 'django.contrib.messages', 'mcpforms'],"
        " DATABASES={'default': {'ENGINE': 'django.db.backends.sqlite3', 'NAME': ':memory:'}},"
        " SECRET_KEY='x' * 50, ROOT_URLCONF='mcpforms.urls');"
        "django.setup(); import mcpforms.api, mcpforms.task_store;"
        "print('django_tasks' in sys.modules);"
        "from django.utils.module_loading import import_string;"
        "print(type(import_string('mcpforms.task_store._run_turn_job')).__name__)"
    )
    root = Path(__file__).resolve().parent.parent
    run = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    imported_at_startup, job = run.stdout.split()
    assert imported_at_startup == "False"
    if importlib.util.find_spec("django_tasks") or importlib.util.find_spec("django.tasks"):
        assert job == "Task"
