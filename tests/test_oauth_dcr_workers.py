"""The per-address registration limit across worker processes: two processes of one deployment, sharing a
database and Django's ``default`` cache, register clients from one address through the real registration
view; together they get ``OAUTH_DCR_PER_ADDRESS`` of them and a 429 for every one after. On Redis (through
Django's own ``RedisCache``) the two run at the same moment; on a file cache, which increments by reading
and writing back, one after the other. With a ``LocMemCache`` each process counts for itself, which is
what ``mcpforms.W327`` reports at ``check --deploy``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 6
EACH = 8  # attempts per worker: together more than the limit, each alone more than it too
REDIS_LOCATION = "redis://127.0.0.1:6379/5"  # this work's own Redis database

SETTINGS = """
from tests.settings import *
import mcpforms.oauth

DATABASES = {{
    "default": {{
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": {database!r},
        # Two writers at once: each waits for the other's commit instead of failing.
        "OPTIONS": {{
            "timeout": 30,
            "init_command": "PRAGMA journal_mode=WAL;",
            "transaction_mode": "IMMEDIATE",
        }},
    }}
}}
CACHES = {{"default": {{"BACKEND": {backend!r}, "LOCATION": {location!r}, "KEY_PREFIX": {prefix!r}}}}}
OAUTH2_PROVIDER = mcpforms.oauth.settings()
MCPFORMS = {{"BASE_URL": "https://testserver", "OAUTH_DCR_PER_ADDRESS": {limit}}}
"""

WORKER = """
import json, sys, django
django.setup()
from django.test import Client

body = json.dumps({
    "client_name": "A worker's client",
    "redirect_uris": ["https://client.example/cb"],
    "token_endpoint_auth_method": "none",
})
def register():
    answer = Client().post(
        "/oauth/register/", body, content_type="application/json", REMOTE_ADDR="203.0.113.40"
    )
    return answer.status_code

statuses = [register() for _ in range(int(sys.argv[1]))]
print(json.dumps(statuses))
"""


class Deployment:
    """A settings module for the workers, and their SQLite database: migrated, or a copy of one that is."""

    def __init__(self, directory: Path, *, backend: str, location: str, copy_of: Path | None = None) -> None:
        self.directory = directory
        self.prefix = f"mcpforms-dcr-workers-{uuid.uuid4().hex[:12]}"  # parallel runs never meet
        self.database = directory / "db.sqlite3"
        module = SETTINGS.format(
            database=str(self.database), backend=backend, location=location, prefix=self.prefix, limit=LIMIT
        )
        (directory / "worker_settings.py").write_text(module)
        if copy_of is None:
            self.run(["-m", "django", "migrate", "--verbosity", "0"]).check_returncode()
        else:
            shutil.copyfile(copy_of, self.database)

    def run(self, arguments: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, *arguments], cwd=ROOT, env=self.env, capture_output=True, text=True, check=False
        )

    @property
    def env(self) -> dict[str, str]:
        return {
            "PYTHONPATH": f"{self.directory}:{ROOT}",
            "DJANGO_SETTINGS_MODULE": "worker_settings",
            "PATH": "",
        }

    def workers(self, *, at_once: bool) -> Counter[int]:
        """The statuses two worker processes got, started together or one after the other."""
        command = [sys.executable, "-c", WORKER, str(EACH)]
        statuses: Counter[int] = Counter()
        if at_once:
            started = [
                subprocess.Popen(
                    command, cwd=ROOT, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
                )
                for _ in range(2)
            ]
            outputs = [process.communicate(timeout=120) for process in started]
            assert all(process.returncode == 0 for process in started), [error for _, error in outputs]
            for output, _ in outputs:
                statuses.update(json.loads(output))
            return statuses
        for _ in range(2):
            result = self.run(["-c", WORKER, str(EACH)])
            assert result.returncode == 0, result.stderr
            statuses.update(json.loads(result.stdout))
        return statuses

    def registered(self) -> int:
        count = "from oauth2_provider.models import Application; print(Application.objects.count())"
        result = self.run(["-c", f"import django; django.setup(); {count}"])
        assert result.returncode == 0, result.stderr
        return int(result.stdout)


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database with every migration applied, for each test to copy (migrating takes seconds)."""
    directory = tmp_path_factory.mktemp("migrated")
    return Deployment(directory, backend="django.core.cache.backends.dummy.DummyCache", location="").database


def redis_or_skip() -> None:
    redis = pytest.importorskip("redis", reason="Django's RedisCache needs the redis package")
    try:
        redis.Redis.from_url(REDIS_LOCATION, socket_connect_timeout=1).ping()
    except redis.exceptions.ConnectionError:
        pytest.skip(f"no Redis at {REDIS_LOCATION}")


def forget(deployment: Deployment) -> None:
    import redis

    client = redis.Redis.from_url(REDIS_LOCATION)
    for key in client.scan_iter(f"{deployment.prefix}:*"):
        client.delete(key)


def test_two_workers_on_redis_share_one_count_even_at_the_same_moment(tmp_path, migrated):
    redis_or_skip()
    redis_cache = "django.core.cache.backends.redis.RedisCache"
    deployment = Deployment(tmp_path, backend=redis_cache, location=REDIS_LOCATION, copy_of=migrated)
    try:
        statuses = deployment.workers(at_once=True)
    finally:
        forget(deployment)
    # Redis increments atomically: not one registration more than the limit, whoever won each race.
    assert statuses == Counter({201: LIMIT, 429: 2 * EACH - LIMIT})
    assert deployment.registered() == LIMIT


def test_two_workers_on_a_file_cache_share_one_count(tmp_path, migrated):
    file_cache = "django.core.cache.backends.filebased.FileBasedCache"
    deployment = Deployment(tmp_path, backend=file_cache, location=str(tmp_path / "cache"), copy_of=migrated)
    assert deployment.workers(at_once=False) == Counter({201: LIMIT, 429: 2 * EACH - LIMIT})


def test_two_workers_with_a_per_process_cache_count_apart(tmp_path, migrated):
    # What W327 warns of, and the control that shows the tests above measure sharing.
    locmem = "django.core.cache.backends.locmem.LocMemCache"
    deployment = Deployment(tmp_path, backend=locmem, location="", copy_of=migrated)
    assert deployment.workers(at_once=False) == Counter({201: 2 * LIMIT, 429: 2 * (EACH - LIMIT)})
    checked = deployment.run(["-m", "django", "check", "--deploy"])
    assert "mcpforms.W327" in checked.stdout + checked.stderr
