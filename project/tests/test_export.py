"""The demo's background tool, ``export_tickets``: a client that follows tasks gets a task, which the
demo's tasks backend (django-tasks-db) queues for `make run`'s worker; any other client gets the export in
the request. The worker's run is proven in e2e/test_make_run.py."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client, override_settings

from mcpforms.models import ToolTask
from mcpforms.protocol.server import default_server
from mcpforms.protocol.tasks import EXTENSION
from tests.core_client import ELICITATION, CoreClient, text

TASKS = {**ELICITATION, "extensions": {EXTENSION: {}}}

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff() -> User:
    call_command("seed_demo", stdout=StringIO())
    return User.objects.get(username="staff")


def test_the_export_is_listed_with_its_priority_filter(staff):
    tools = CoreClient(default_server, user=staff).result("tools/list")["tools"]
    (export,) = [tool for tool in tools if tool["name"] == "export_tickets"]
    assert export["title"] == "Export tickets"
    priority = export["inputSchema"]["properties"]["priority"]
    assert [choice["const"] for choice in priority["oneOf"]] == ["low", "normal", "high"]
    assert "priority" not in export["inputSchema"].get("required", [])  # no priority: every ticket


def test_a_client_that_follows_tasks_gets_a_task_queued_for_the_worker(
    staff, django_capture_on_commit_callbacks
):
    from django_tasks_db.models import DBTaskResult

    with django_capture_on_commit_callbacks(execute=True):  # the turn is enqueued once the row commits
        created = CoreClient(default_server, capabilities=TASKS, user=staff).call("export_tickets", {})
    assert (created["resultType"], created["status"], created["statusMessage"]) == (
        "task",
        "working",
        "Queued",
    )
    row = ToolTask.objects.get()
    assert (row.tool, row.runner) == ("export_tickets", ToolTask.Runner.QUEUE)
    # Waiting in the database for `manage.py db_worker`, not run in the request.
    (job,) = DBTaskResult.objects.all()
    assert job.status == "READY" and job.task_path.endswith("_run_turn_job")


def test_a_client_without_tasks_gets_the_export_in_the_request(staff):
    result = CoreClient(default_server, user=staff).call("export_tickets", {"priority": "high"})
    assert text(result) == "Exported 1 ticket(s)."
    assert result["structuredContent"] == {"exported": ["VPN drops every hour"]}
    assert not ToolTask.objects.exists()


@override_settings(MCPFORMS={"ALLOW_ANONYMOUS": ["signup"]})
def test_the_home_page_says_the_export_runs_in_the_background(staff):
    browser = Client()
    browser.force_login(staff)
    page = browser.get("/").content.decode()
    card = re.search(r'<article class="card tool" id="tool-export_tickets".*?</article>', page, re.S)
    assert card is not None
    assert '<li class="badge badge-background">Runs in the background</li>' in card.group(0)
    assert "badge-background" not in page.replace(card.group(0), "")
