"""``bench.settings`` for servers of several processes: the same demo, on a SQLite file they share.

``bench/http_flow.py`` sets ``MCPFORMS_BENCH_DB`` to a file in a temporary folder, and
``MCPFORMS_BENCH_SQLITE=django`` to leave SQLite as Django configures it (rollback journal, a connection
per request) rather than as the demo does (``project.settings``: WAL, persistent connections).
No middleware: what is measured is the view, and the bare view needs none.
"""

import os

from bench.settings import *  # noqa: F403
from project.settings import DATABASES as DEMO_DATABASES

ALLOWED_HOSTS = ["127.0.0.1"]
MIDDLEWARE = []  # noqa: F405
DATABASES = {"default": {**DEMO_DATABASES["default"], "NAME": os.environ["MCPFORMS_BENCH_DB"]}}
if os.environ.get("MCPFORMS_BENCH_SQLITE") == "django":
    DATABASES["default"] = {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["MCPFORMS_BENCH_DB"]}
ROOT_URLCONF = "bench.http_urls"
