"""The demo project works as `make run` uses it: migrate, seed, serve the home page."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

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


def test_demo_migrates_seeds_idempotently_and_shows_the_derived_schemas(demo):
    demo("manage.py", "migrate", "--noinput")
    assert "2 ticket(s) added" in demo("manage.py", "seed_demo")
    assert "0 ticket(s) added" in demo("manage.py", "seed_demo")
    page = demo("-c", PAGE_CHECK)
    assert "<code>signup</code>" in page
    assert "&quot;format&quot;: &quot;email&quot;" in page
    assert "<code>create_ticket</code>" in page
    assert "&quot;const&quot;: &quot;high&quot;" in page
