"""The test project behind a real ``runserver``, as a browser test drives it: a fresh SQLite file, the
admin's static files served, a superuser to sign in as."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conformance.run import running_server

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def browser_site(
    directory: Path, *, port: int, settings: str, superuser: tuple[str, str, str], setup: str | None = None
) -> Iterator[str]:
    """Serve ``tests.settings`` plus the lines ``settings`` on ``port``, with ``superuser`` (username,
    email, password) created and ``setup`` run in ``manage.py shell`` first; yield the site's base URL."""
    module = f"site_{directory.name.replace('-', '_')}"
    database = directory / "db.sqlite3"
    # DEBUG lets runserver serve the admin's static files: without its CSS a page's layout means nothing.
    (directory / f"{module}.py").write_text(
        "from tests.settings import *\n"
        "DEBUG = True\n"
        "INSTALLED_APPS = [*INSTALLED_APPS, 'django.contrib.staticfiles']\n"
        "STATIC_URL = '/static/'\n"
        f"DATABASES['default'] = {{'ENGINE': 'django.db.backends.sqlite3', 'NAME': {str(database)!r}}}\n"
        f"{settings}\n"
    )
    username, email, password = superuser
    env = {
        **os.environ,
        "PYTHONPATH": f"{directory}{os.pathsep}{ROOT}",
        "DJANGO_SETTINGS_MODULE": module,
        "DJANGO_SUPERUSER_PASSWORD": password,
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("DATABASE_URL", None)
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    created = ["createsuperuser", "--noinput", "--username", username, "--email", email]
    subprocess.run([*manage, *created], cwd=ROOT, env=env, check=True, capture_output=True)
    if setup is not None:
        subprocess.run([*manage, "shell", "-c", setup], cwd=ROOT, env=env, check=True)
    with running_server(directory / "runserver.log", env=env, port=port):
        yield f"http://127.0.0.1:{port}"
