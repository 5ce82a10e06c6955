"""Settings for the servers ``bench/http_flow.py`` measures: a plain ``django-admin startproject`` project
with mcpforms and the bench's app installed, and nothing of the demo (no OAuth, no tasks, no demo app).

The bare view (``bench.bare_settings``) and django-mcpz (``bench.mcpz_settings``) run on these settings
less mcpforms, so that the targets differ only in the MCP layer. ``bench/http_flow.py`` sets
``MCPFORMS_BENCH_DB`` to a SQLite file in a temporary folder, configured as docs/howto/deploying.md
recommends (WAL, ``synchronous=NORMAL``, IMMEDIATE transactions, timeout 20, persistent connections);
``MCPFORMS_BENCH_SQLITE=django`` leaves SQLite as Django configures it (rollback journal, a connection per
request); ``MCPFORMS_BENCH_POSTGRES`` names a throwaway database on the local PostgreSQL server instead.
No middleware: what is measured is the view, and the bare view needs none. The ``bench`` app counts lock
wait (``bench/lock_wait.py``) and holds the ``signup`` and ``signup_write`` tools (``bench/mcp_tools.py``).
"""

import os

SECRET_KEY = "bench-only-insecure-key-0123456789abcdef0123456789abcdef"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1"]
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "mcpforms",
    "bench.apps.BenchConfig",
]
MIDDLEWARE: list[str] = []
ROOT_URLCONF = "bench.http_urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]
USE_TZ = True
STATIC_URL = "static/"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LOGGING = {"version": 1, "disable_existing_loggers": False, "root": {"level": "ERROR"}}
MCPFORMS = {"ALLOW_ANONYMOUS": ["signup", "signup_write"], "STATE_MAX_AGE": 3600}

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("MCPFORMS_BENCH_DB", ""),
        "OPTIONS": {
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
        },
        "CONN_MAX_AGE": 600,
    }
}
if os.environ.get("MCPFORMS_BENCH_SQLITE") == "django":
    DATABASES["default"] = {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["MCPFORMS_BENCH_DB"]}
if os.environ.get("MCPFORMS_BENCH_POSTGRES"):
    DATABASES["default"] = {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": os.environ["MCPFORMS_BENCH_POSTGRES"],
        "USER": "postgres",
        "HOST": "127.0.0.1",
        "PORT": "5432",
        "CONN_MAX_AGE": 600,
    }
