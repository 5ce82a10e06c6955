"""The demo project works as `make run` uses it: migrate, seed, serve the home page."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

TOOLS_CHECK = """
import django
django.setup()
from django.test import Client
from mcpforms.protocol.server import default_server
meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
from django.contrib.auth.models import User
request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}
for user in (None, User.objects.get(username="staff")):
    reply = default_server.handle(request, user=user)
    print(" ".join(tool["name"] for tool in reply.body["result"]["tools"]))
assert Client().login(username="staff", password="mcpforms-demo")
"""

PAGE_CHECK = """
import django
django.setup()
from django.test import Client
response = Client().get("/", HTTP_HOST="127.0.0.1")
assert response.status_code == 200, response.status_code
print(response.content.decode())
"""


@pytest.fixture
def demo(tmp_path):
    settings = tmp_path / "demo_settings.py"
    settings.write_text(
        f"from project.settings import *\nDATABASES['default']['NAME'] = {str(tmp_path / 'db.sqlite3')!r}\n"
    )
    env = {"PYTHONPATH": f"{tmp_path}:{ROOT}", "DJANGO_SETTINGS_MODULE": "demo_settings", "PATH": ""}

    def run(*args: str) -> str:
        result = subprocess.run(
            [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, result.stderr
        return result.stdout

    return run


def test_demo_migrates_seeds_idempotently_serves_its_tools_and_shows_the_derived_schemas(demo):
    demo("manage.py", "migrate", "--noinput")
    assert "2 ticket(s), 2 admin-defined form(s) added" in demo("manage.py", "seed_demo")
    assert "0 ticket(s), 0 admin-defined form(s) added" in demo("manage.py", "seed_demo")
    anonymous, staff = demo("-c", TOOLS_CHECK).splitlines()
    # The demo lets anonymous callers sign up, and nothing else.
    assert anonymous.split() == ["signup"]
    assert {"create_ticket", "event_rsvp", "feedback", "signup"} <= set(staff.split())
    page = demo("-c", PAGE_CHECK)
    assert "<code>signup</code>" in page
    assert "&quot;format&quot;: &quot;email&quot;" in page
    assert "<code>create_ticket</code>" in page
    assert "&quot;const&quot;: &quot;high&quot;" in page
