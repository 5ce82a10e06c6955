"""A project that installed mcpforms but did not run ``migrate``: the endpoint says what to do, in a real
process on a database that has no tables at all, then works once migrated."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CALLS = """
import json
from django.test import Client
from tests import wire

listing = wire.message("tools/list")
body, headers = json.dumps(listing), wire.headers(listing)
anonymous = Client().post("/mcp", body, content_type="application/json", headers=headers)
with_token = Client().post(
    "/mcp", body, content_type="application/json", headers={**headers, "Authorization": "Bearer mcpf_x"}
)
print(json.dumps([anonymous.status_code, anonymous.json(), with_token.status_code, with_token.json()]))
"""


def test_an_unmigrated_database_gets_a_clear_answer_then_a_migrated_one_works(tmp_path):
    database = tmp_path / "empty.sqlite3"
    (tmp_path / "unmigrated_settings.py").write_text(
        "from tests.settings import *\n"
        f"DATABASES = {{'default': {{'ENGINE': 'django.db.backends.sqlite3', 'NAME': {str(database)!r}}}}}\n"
        "LOGGING = {'version': 1, 'disable_existing_loggers': True}\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}",
        "DJANGO_SETTINGS_MODULE": "unmigrated_settings",
    }
    env.pop("DATABASE_URL", None)

    def calls() -> list[object]:
        run = subprocess.run(
            [sys.executable, "manage.py", "shell", "--command", CALLS],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0, run.stderr
        answer: list[object] = json.loads(run.stdout.strip().splitlines()[-1])
        return answer

    status, anonymous, token_status, with_token = calls()
    shipped = sorted(path.stem for path in (ROOT / "mcpforms" / "migrations").glob("0*.py"))
    expected = {
        "code": -32603,
        "message": f"Internal error: the database lacks mcpforms' tables ({len(shipped)} migration(s) not "
        f"applied, from {shipped[0]}); run `python manage.py migrate`",
    }
    assert (status, anonymous["error"]) == (200, expected)  # type: ignore[index]
    assert (token_status, with_token["error"]) == (200, expected)  # type: ignore[index]

    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    status, anonymous, token_status, _ = calls()
    assert status == 200 and "tools" in anonymous["result"]  # type: ignore[index]
    assert token_status == 401  # a token that does not exist, told as such
