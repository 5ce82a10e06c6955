"""A ``background=True`` form tool: for a client that follows tasks, its final round answers with a task and
``handle`` runs later, through the project's TASKS backend, on a worker; other clients get the result in the
request as before.

The backend here is Django's DummyBackend, which only keeps what is enqueued: ``work()`` then runs those
jobs as a worker would, by their module path. A handler that must be seen while it runs is run by a thread
of its own (the worker), its database connection apart from the test's (the web process), as in production;
so these tests commit (``transaction=True``).
"""

from __future__ import annotations

import importlib.util
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django import forms
from django.contrib.auth.models import User
from django.core.checks import Error, Warning
from django.db import connections
from django.test import override_settings
from django.utils.module_loading import import_string

import mcpforms
import mcpforms.task_store as task_store
from mcpforms.models import ToolTask
from mcpforms.protocol.errors import ToolError
from mcpforms.protocol.server import Server
from mcpforms.protocol.tasks import EXTENSION
from mcpforms.registry import check_form_tools, registry_for
from tests.core_client import ELICITATION, CoreClient, accept, asked, text
from tests.testapp.models import Colour

TASKS = ELICITATION | {"extensions": {EXTENSION: {}}}
# Django 6 has the tasks framework built in; 5.2 has it from the django-tasks backport.
BACKENDS = "django.tasks.backends" if importlib.util.find_spec("django.tasks") else "django_tasks.backends"
DUMMY = {"default": {"BACKEND": f"{BACKENDS}.dummy.DummyBackend"}}
IMMEDIATE = {"default": {"BACKEND": f"{BACKENDS}.immediate.ImmediateBackend"}}

pytestmark = pytest.mark.django_db(transaction=True)


class PaintForm(forms.Form):
    """Paint a new colour, mixed from one we have."""

    base = forms.ModelChoiceField(queryset=Colour.objects.all())
    name = forms.CharField(max_length=30)


# What the handler does after reporting a step, set by a test: by default nothing.
at_step: dict[int, Callable[[], None]] = {}
runs: list[str] = []


def paint(request: Any, form: PaintForm) -> str:
    """A long handler: it works in three steps, reporting each, then saves what it made."""
    name = form.cleaned_data["name"]
    runs.append(name)
    for step in (1, 2, 3):
        request.report_progress(step, 3, f"Step {step} of 3")
        if action := at_step.get(step):
            action()
    Colour.objects.create(name=name, code=f"#{len(runs):06d}")
    return f"Painted {name} from {form.cleaned_data['base'].name}"


def paused_at(
    step: int, *, before: Callable[[], None] = lambda: None
) -> tuple[threading.Event, threading.Event]:
    """Make the handler stop after reporting ``step`` (having run ``before``) until the test lets it go on:
    (reached, go_on)."""
    reached, go_on = threading.Event(), threading.Event()

    def pause() -> None:
        before()
        reached.set()
        assert go_on.wait(10)

    at_step[step] = pause
    return reached, go_on


@pytest.fixture
def server() -> Iterator[Server]:
    at_step.clear()
    runs.clear()
    served = Server()
    mcpforms.tool(PaintForm, server=served, background=True)(paint)
    with override_settings(TASKS=DUMMY):
        yield served


@pytest.fixture
def red() -> Colour:
    return Colour.objects.create(name="red", code="#ff0000")


@pytest.fixture
def client(server: Server) -> CoreClient:
    return CoreClient(server, capabilities=TASKS, user=User.objects.create_user("painter"))


def enqueued() -> list[Any]:
    """The jobs enqueued so far (the DummyBackend keeps them per thread), taken off the queue."""
    backend = task_store.turn_job.get_backend()
    jobs = list(backend.results)
    backend.clear()
    return jobs


def work(jobs: list[Any] | None = None) -> int:
    """Run the jobs enqueued so far, as a worker of the configured backend does: by the job's module
    path (what a worker imports), with the arguments it was enqueued with. How many it ran."""
    jobs = enqueued() if jobs is None else jobs
    for job in jobs:
        import_string(job.task.module_path).call(*job.args, **job.kwargs)
    return len(jobs)


def in_a_worker() -> threading.Thread:
    """Run the enqueued jobs on a thread of their own: another database connection, as a worker has."""
    jobs = enqueued()

    def run() -> None:
        try:
            work(jobs)
        finally:
            connections.close_all()

    worker = threading.Thread(target=run)
    worker.start()
    return worker


def went_with_the_task(name: str) -> bool:
    """Whether what the handler wrote as ``name`` is gone with a task that did not complete: on a database
    that takes a second writer; SQLite commits a background handler's writes as it makes them, so that its
    progress and a cancel reach the task between its steps (``task_store.finishing``)."""
    written = Colour.objects.filter(name=name).exists()
    return not written if connections["default"].vendor != "sqlite" else written


def get(client: CoreClient, task: dict[str, Any]) -> dict[str, Any]:
    return client.result("tasks/get", {"taskId": task["taskId"]})


def test_a_client_that_follows_tasks_gets_a_task_and_the_handler_runs_on_the_worker(client, red):
    task = client.call("paint", {"base": red.pk, "name": "pink"})
    assert task["resultType"] == "task"
    assert task["status"] == "working"
    assert task["statusMessage"] == "Queued"
    assert task["pollIntervalMs"] == 1000
    assert task["ttlMs"] == 7 * 86400 * 1000
    assert task["createdAt"] == task["lastUpdatedAt"]
    assert task["createdAt"].endswith("Z")
    assert not {"requestState", "result", "content", "inputRequests"} & set(task)
    assert runs == []  # nothing ran in the request: the job waits on the backend
    assert get(client, task)["status"] == "working"

    assert work() == 1
    done = get(client, task)
    assert done["status"] == "completed"
    assert text(done["result"]) == "Painted pink from red"
    assert "isError" not in done["result"]
    assert done["lastUpdatedAt"] > done["createdAt"]
    assert runs == ["pink"]
    assert Colour.objects.filter(name="pink").exists()


def test_a_client_without_the_extension_gets_the_result_in_the_request(server, red):
    plain = CoreClient(server, user=User.objects.create_user("painter"))  # elicitation, no tasks
    done = plain.call("paint", {"base": red.pk, "name": "pink"})
    assert done.get("resultType", "complete") == "complete"
    assert text(done) == "Painted pink from red"
    assert runs == ["pink"]
    assert ToolTask.objects.count() == 0
    assert work() == 0


def test_a_replayed_final_round_gets_the_same_task_and_the_handler_runs_once(client, red):
    first = client.call("paint", {"base": red.pk})
    assert asked(first, "paint")["mode"] == "form"  # the name is missing: asked as ever
    final = client.answer(first, "paint", {"base": red.pk}, paint=accept(name="pink"))
    again = client.answer(first, "paint", {"base": red.pk}, paint=accept(name="pink"))
    assert final["resultType"] == again["resultType"] == "task"
    assert again["taskId"] == final["taskId"]
    assert ToolTask.objects.count() == 1
    work()
    after = client.answer(first, "paint", {"base": red.pk}, paint=accept(name="pink"))
    assert after["taskId"] == final["taskId"]
    work()
    assert runs == ["pink"]
    assert get(client, final)["status"] == "completed"


def test_progress_from_the_handler_is_the_status_message_while_it_runs(client, red):
    reached, go_on = paused_at(1)
    task = client.call("paint", {"base": red.pk, "name": "pink"})
    worker = in_a_worker()
    try:
        assert reached.wait(10)
        running = get(client, task)
        assert (running["status"], running["statusMessage"]) == ("working", "Step 1 of 3")
        assert running["lastUpdatedAt"] > running["createdAt"]
    finally:
        go_on.set()
        worker.join(10)
    done = get(client, task)
    assert done["status"] == "completed"
    assert text(done["result"]) == "Painted pink from red"


def cancel_while_paused(client: CoreClient, red: Colour, step: int, **pause: Any) -> dict[str, Any]:
    """Call, let the worker run the handler to ``step``, cancel it there, let it go on: the task after."""
    reached, go_on = paused_at(step, **pause)
    task = client.call("paint", {"base": red.pk, "name": "pink"})
    worker = in_a_worker()
    try:
        assert reached.wait(10)
        asked_at = time.monotonic()
        assert "result" in client.send("tasks/cancel", {"taskId": task["taskId"]})  # an empty ack
        assert time.monotonic() - asked_at < 2  # it did not wait for the handler
        assert get(client, task)["status"] == "cancelled"  # at once, while the handler still runs
    finally:
        go_on.set()
        worker.join(10)
    assert not worker.is_alive()
    assert runs == ["pink"]
    return get(client, task)


def test_a_cancel_between_steps_stops_the_handler_at_its_next_step(client, red):
    ended = cancel_while_paused(client, red, 1)
    assert ended["status"] == "cancelled"
    assert "result" not in ended
    assert not Colour.objects.filter(name="pink").exists()


def test_a_cancel_after_the_last_step_wins_over_the_completion(client, red):
    """The handler reports no more progress after step 3: it saves, and its completion finds the task
    cancelled, which rolls its writes back with it (on SQLite, they were committed already)."""
    ended = cancel_while_paused(client, red, 3)
    assert ended["status"] == "cancelled"
    assert went_with_the_task("pink")


def test_a_cancel_rolls_back_what_the_handler_wrote_before_it(client, red):
    """PostgreSQL only: SQLite takes one writer at a time, so there a cancel cannot land while the
    handler's own writes are open; it waits for them."""
    if connections["default"].vendor != "postgresql":
        pytest.skip("needs a database that takes a second writer: PostgreSQL")
    ended = cancel_while_paused(
        client, red, 1, before=lambda: Colour.objects.create(name="wet paint", code="#000000")
    )
    assert ended["status"] == "cancelled"
    assert not Colour.objects.filter(name="wet paint").exists()


def test_a_tool_error_completes_the_task_with_is_error(client, red):
    def refuse() -> None:
        Colour.objects.create(name="wet paint", code="#000000")
        raise ToolError("The paint ran out.")

    at_step[2] = refuse
    task = client.call("paint", {"base": red.pk, "name": "pink"})
    work()
    done = get(client, task)
    assert done["status"] == "completed"
    assert done["result"]["isError"] is True
    assert text(done["result"]) == "The paint ran out."
    assert went_with_the_task("wet paint")


def test_an_unexpected_exception_fails_the_task_with_no_details_on_the_wire(client, red, caplog):
    def crash() -> None:
        Colour.objects.create(name="wet paint", code="#000000")
        raise RuntimeError("secret connection string")

    at_step[2] = crash
    task = client.call("paint", {"base": red.pk, "name": "pink"})
    with caplog.at_level(logging.ERROR, logger="mcpforms.task_store"):
        work()
    failed = get(client, task)
    assert failed["status"] == "failed"
    assert failed["error"] == {"code": -32603, "message": "Internal error"}
    assert "secret" not in str(failed)
    (record,) = [record for record in caplog.records if record.name == "mcpforms.task_store"]
    assert record.exc_info is not None and "secret connection string" in str(record.exc_info[1])
    assert went_with_the_task("wet paint")


def test_a_form_no_longer_valid_on_the_worker_completes_with_is_error_naming_the_field(client, red):
    task = client.call("paint", {"base": red.pk, "name": "pink"})
    red.delete()  # gone between the call and the turn
    work()
    done = get(client, task)
    assert done["status"] == "completed"
    assert done["result"]["isError"] is True
    assert "base: Select a valid choice." in text(done["result"])
    assert runs == []


# The checks ------------------------------------------------------------------------------------------


def messages(server: Server) -> list[Any]:
    ours = list(registry_for(server).tools.values())
    return [message for message in check_form_tools() if message.obj in ours]


def test_a_background_tool_passes_its_checks_with_a_backend_that_has_a_worker(server):
    assert messages(server) == []


def test_a_background_tool_needs_a_tasks_framework(server, monkeypatch):
    monkeypatch.setattr(task_store, "turn_job", None)
    (error,) = messages(server)
    assert isinstance(error, Error)
    assert error.id == "mcpforms.E411"
    assert "django-tasks" in error.msg
    assert "mcpforms[background]" in str(error.hint)


def test_a_background_tool_needs_a_task_store(server):
    with override_settings(MCPFORMS={"ALLOW_ANONYMOUS": True, "TASK_STORE": None}):
        (error,) = messages(server)
    assert isinstance(error, Error)
    assert error.id == "mcpforms.E410"
    assert "TASK_STORE" in error.msg


def test_a_backend_that_runs_tasks_in_the_request_is_warned_of(server):
    with override_settings(TASKS=IMMEDIATE):
        (warning,) = messages(server)
    assert isinstance(warning, Warning)
    assert warning.id == "mcpforms.W412"


def test_a_handler_may_ask_the_user_mid_task_and_runs_again_with_the_answer(server, client, red):
    from mcpforms.answers import accepted_form_input
    from mcpforms.fields import AutoFormField
    from mcpforms.schema import form_input_request

    # In an order PostgreSQL's jsonb would not keep (it sorts keys shortest first): the client shows it.
    confirm = [
        AutoFormField(name="confirm", type="boolean", required=True),
        AutoFormField(name="why", type="text"),
    ]

    def careful(request: Any, form: PaintForm) -> Any:
        answer = accepted_form_input(request.input_responses, "confirm", confirm)
        if answer is None:  # asked before anything is written, as every write-once handler does
            return form_input_request(confirm, key="confirm", message="Paint over the old colour?")
        Colour.objects.create(name=form.cleaned_data["name"], code="#123456")
        return f"Painted {form.cleaned_data['name']}: {answer['confirm']}"

    mcpforms.tool(PaintForm, server=server, name="careful", background=True)(careful)
    task = client.call("careful", {"base": red.pk, "name": "teal"})
    assert work() == 1
    asking = get(client, task)
    assert asking["status"] == "input_required"
    ((key, request),) = asking["inputRequests"].items()
    assert request["params"]["message"] == "Paint over the old colour?"
    assert list(request["params"]["requestedSchema"]["properties"]) == ["confirm", "why"]
    assert not Colour.objects.filter(name="teal").exists()
    client.result("tasks/update", {"taskId": task["taskId"], "inputResponses": {key: accept(confirm=True)}})
    assert get(client, task)["status"] == "working"
    assert work() == 1
    done = get(client, task)
    assert (done["status"], text(done["result"])) == ("completed", "Painted teal: True")
    assert Colour.objects.filter(name="teal").count() == 1


@pytest.mark.parametrize("how", ["deactivated", "deleted"])
def test_a_turn_for_a_requester_no_longer_active_runs_nothing(client, red, how):
    client.call("paint", {"base": red.pk, "name": "pink"})
    if how == "deactivated":
        User.objects.filter(pk=client.user.pk).update(is_active=False)
        why = "The account that made this request, painter, has been deactivated: nothing was run."
    else:
        client.user.delete()
        why = "The account that made this request no longer exists: nothing was run."
    assert work() == 1
    assert runs == []
    row = ToolTask.objects.get()
    assert row.status == "completed" and row.result == {
        "content": [{"type": "text", "text": why}],
        "isError": True,
    }
    assert not Colour.objects.filter(name="pink").exists()
