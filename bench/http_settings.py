"""``bench.settings`` for servers of several processes: the same demo, on a SQLite file they share.

``bench/http_flow.py`` sets ``MCPFORMS_BENCH_DB`` to a file in a temporary folder.
The database keeps Django's SQLite defaults: no ``init_command``, so the rollback journal, not WAL.
"""

import os

from bench.settings import *  # noqa: F403

ALLOWED_HOSTS = ["127.0.0.1"]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["MCPFORMS_BENCH_DB"]}}
ROOT_URLCONF = "bench.http_urls"
