"""The test project behind a real ``runserver`` and ``rqworker``: ``tests.settings`` with a SQLite file
both processes share (``BACKGROUND_DATABASE``) and TASKS on RQ, on the Redis at ``BACKGROUND_REDIS_PORT``."""

import os

import django

from tests.settings import *  # noqa: F403
from tests.settings import INSTALLED_APPS

INSTALLED_APPS = [
    *INSTALLED_APPS,
    "django_rq",
    # Its mcp_tools module registers the background tool, in the worker as in the server: the worker
    # finds a task's tool by the server and name its row keeps.
    "tests.e2e.background",
]
if django.VERSION < (6, 0):
    INSTALLED_APPS.append("django_tasks")  # the framework's backport; Django 6 has it built in

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ["BACKGROUND_DATABASE"],
        # Two processes write: a writer waits for the lock instead of failing, and WAL lets the server
        # read while the worker writes.
        "OPTIONS": {"timeout": 20, "init_command": "PRAGMA journal_mode=WAL"},
    }
}

RQ_QUEUES = {"default": {"HOST": "127.0.0.1", "PORT": int(os.environ["BACKGROUND_REDIS_PORT"]), "DB": 0}}
TASKS = {"default": {"BACKEND": "django_tasks_rq.RQBackend", "QUEUES": ["default"]}}
