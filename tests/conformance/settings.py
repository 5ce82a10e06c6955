"""Settings of the fixture server the conformance suite runs against (make conformance, tests/e2e)."""

import os

import django

SECRET_KEY = "conformance-only-secret-key-0123456789abcdef0123456789"
DEBUG = False
# The dns-rebinding-protection scenario needs exactly these: localhost names allowed, anything else refused.
ALLOWED_HOSTS = ["localhost", "127.0.0.1", "[::1]"]
USE_TZ = True

INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "mcpforms",
    # The ORM backend of Django's tasks framework: the fixtures' tasks run on its `db_worker`s.
    "django_tasks_db",
    # Its mcp_tools module imports the fixtures, so that a worker process knows the server its tasks
    # belong to, as mcpforms' autodiscovery does for any project's tools.
    "tests.conformance",
]
if django.VERSION < (6, 0):
    # Django 6 has the tasks framework built in; before it, the backport is an app of its own.
    INSTALLED_APPS.insert(-2, "django_tasks")
MIDDLEWARE = ["django.middleware.common.CommonMiddleware"]
ROOT_URLCONF = "tests.conformance.urls"

# The tasks live in the database, which the server and the workers (other processes) share: run.py
# makes a file for it and migrates it (CONFORMANCE_DATABASE). Without one (tests/e2e, whose clients start
# no task) it is in memory, and so per thread, as it was before tasks.
DATABASE_FILE = os.environ.get("CONFORMANCE_DATABASE", ":memory:")
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": DATABASE_FILE,
        "OPTIONS": {
            # Three processes write (the server's threads, the workers): a writer waits for the lock
            # instead of failing at once, takes it when its transaction begins (never upgrading a read
            # lock, which SQLite can only refuse), and WAL lets readers on while one writes.
            "timeout": 20,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL",
        },
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}

MCPFORMS = {
    # The conformance client sends no credentials.
    "ALLOW_ANONYMOUS": True,
    "SERVER_NAME": "mcpforms-conformance",
    "SERVER_VERSION": "1.0.0",
    "INSTRUCTIONS": "Fixture tools, prompts and resources of the MCP conformance suite.",
}
