"""``bench.settings`` for servers of several processes: the same demo, on a database they share.

``bench/http_flow.py`` sets ``MCPFORMS_BENCH_DB`` to a SQLite file in a temporary folder, and
``MCPFORMS_BENCH_SQLITE=django`` to leave SQLite as Django configures it (rollback journal, a connection
per request) rather than as the demo does (``project.settings``: WAL, ``synchronous=NORMAL``, IMMEDIATE
transactions, timeout 20, persistent connections); or ``MCPFORMS_BENCH_POSTGRES`` to the name of a
throwaway database on the local PostgreSQL server (persistent connections too).
No middleware: what is measured is the view, and the bare view needs none. The ``bench`` app counts lock
wait (``bench/lock_wait.py``) and adds the ``signup_write`` tool (``bench/mcp_tools.py``).
"""

import os

from bench.settings import *  # noqa: F403
from bench.settings import INSTALLED_APPS, MCPFORMS
from project.settings import DATABASES as DEMO_DATABASES

ALLOWED_HOSTS = ["127.0.0.1"]
MIDDLEWARE = []  # noqa: F405
INSTALLED_APPS = [*INSTALLED_APPS, "bench.apps.BenchConfig"]
MCPFORMS = {**MCPFORMS, "ALLOW_ANONYMOUS": ["signup", "signup_write"]}
DATABASES = {"default": {**DEMO_DATABASES["default"], "NAME": os.environ.get("MCPFORMS_BENCH_DB", "")}}
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
ROOT_URLCONF = "bench.http_urls"
