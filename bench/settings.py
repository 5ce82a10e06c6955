"""The demo project, in memory, with the benchmark's URLs: the MCP endpoint and a bare view beside it."""

from project.settings import *  # noqa: F403

DEBUG = False
ALLOWED_HOSTS = ["testserver"]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
ROOT_URLCONF = "bench.urls"
LOGGING = {"version": 1, "disable_existing_loggers": False, "root": {"level": "ERROR"}}
