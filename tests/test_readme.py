"""The README's Python examples run as written, and the code it quotes is the code that runs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def python_blocks() -> list[str]:
    # Top-level blocks only: the indented ones are the steps of "Use it in your project" (tests/install).
    return re.findall(r"^```python\n(.*?)^```", README.read_text(), flags=re.DOTALL | re.MULTILINE)


def test_the_core_api_example_runs():
    blocks = [block for block in python_blocks() if "from mcpforms import" in block]
    assert blocks, "the README lost its core API example"
    for block in blocks:
        exec(compile(block, str(README), "exec"), {"__name__": "readme"})


def test_the_registration_example_is_the_demos_mcp_tools_module():
    (block,) = [block for block in python_blocks() if "mcpforms.register(" in block]
    demo = (ROOT / "project" / "demo" / "mcp_tools.py").read_text()
    code = demo.split('"""', 2)[2].lstrip("\n")  # without the module docstring
    assert block == code


def test_the_multi_step_transcript_in_the_readme_is_the_docs_file():
    transcript = (ROOT / "docs" / "wizard-transcript.txt").read_text()
    assert f"```text\n{transcript}```" in README.read_text()


def test_the_client_configs_in_the_readme_are_the_ones_the_client_tests_run():
    from tests.e2e.test_clients import CURL_SIGNUP, DESKTOP_CONFIG

    text = README.read_text()
    assert f"```json\n{DESKTOP_CONFIG}```" in text
    assert f"```sh\n{CURL_SIGNUP}```" in text


def test_the_stdio_desktop_config_in_the_readme_is_the_one_the_stdio_tests_start():
    from tests.test_stdio import DESKTOP_CONFIG

    assert f"```json\n{DESKTOP_CONFIG.strip()}\n```" in README.read_text()


def test_the_sqlite_settings_in_the_readme_are_the_demos_and_do_what_it_says(tmp_path, django_db_blocker):
    from django.db.utils import ConnectionHandler

    from project import settings as demo

    (block,) = [block for block in python_blocks() if "django.db.backends.sqlite3" in block]
    namespace: dict[str, object] = {"BASE_DIR": demo.BASE_DIR}
    exec(compile(block, str(README), "exec"), namespace)
    assert namespace["DATABASES"] == demo.DATABASES
    databases = {"default": {**demo.DATABASES["default"], "NAME": tmp_path / "project.sqlite3"}}
    connection = ConnectionHandler(databases)["default"]  # a file of its own, not the test database
    try:
        with django_db_blocker.unblock(), connection.cursor() as cursor:
            pragmas = {
                name: cursor.execute(f"PRAGMA {name}").fetchone()[0]
                for name in ("journal_mode", "synchronous", "busy_timeout")
            }
        assert pragmas == {"journal_mode": "wal", "synchronous": 1, "busy_timeout": 20_000}
    finally:
        connection.close()


def test_the_email_receiver_of_task_decided_tells_the_requester(db, django_capture_on_commit_callbacks):
    from django.contrib.auth.models import Permission, User
    from django.core import mail

    from mcpforms.approvals import approve, reject
    from mcpforms.models import ToolTask
    from mcpforms.protocol.server import Server
    from mcpforms.registry import register, registry_for
    from mcpforms.signals import task_decided
    from tests.core_client import CoreClient
    from tests.forms import SignupForm

    (block,) = [block for block in python_blocks() if "@receiver(task_decided)" in block]
    namespace: dict[str, object] = {"__name__": "readme"}
    exec(compile(block, str(README), "exec"), namespace)
    try:
        server = Server()
        register(SignupForm, server=server, approval="auth.change_user")
        tool = registry_for(server).form_tool("signup")
        assert tool is not None
        requester = User.objects.create_user("ada", email="ada@example.com")
        approver = User.objects.create_user("bea", is_staff=True)
        approver.user_permissions.add(Permission.objects.get(codename="change_user"))
        client = CoreClient(server, user=requester)
        for _ in range(2):
            client.call("signup", {"email": "ada@example.com", "plan": "pro"})
        first, second = ToolTask.objects.order_by("pk")
        with django_capture_on_commit_callbacks(execute=True):
            approve(tool, first, User.objects.get(pk=approver.pk))
            reject(tool, second, User.objects.get(pk=approver.pk), "Duplicate")
    finally:
        task_decided.disconnect(namespace["tell_the_requester"])  # type: ignore[arg-type]
    assert [message.subject for message in mail.outbox] == [
        f"Your request #{first.pk} (Signup) was approved",
        f"Your request #{second.pk} (Signup) was rejected: Duplicate",
    ]
    assert mail.outbox[0].to == ["ada@example.com"]
