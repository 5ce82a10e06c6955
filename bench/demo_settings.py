"""The demo's own settings for the servers of ``bench/http_flow.py``: its ``mcpforms, demo settings`` row,
which shows what the demo's extras (django-oauth-toolkit, django-tasks, the demo's app and tools) add to a
worker next to the plain project of ``bench.http_settings``. It serves the demo's ``signup`` tool at
``/mcp`` on the same database file, which ``bench/http_flow.py`` migrates with ``bench.http_settings``: the
signup flow needs none of the demo's own tables.
"""

from bench import http_settings
from project.settings import *  # noqa: F403
from project.settings import MCPFORMS

DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1"]
MIDDLEWARE = []
MCPFORMS = {**MCPFORMS, "ALLOW_ANONYMOUS": ["signup"]}
DATABASES = http_settings.DATABASES
LOGGING = http_settings.LOGGING
ROOT_URLCONF = "bench.http_urls"
