"""``bench.http_settings`` for the django-mcpz target: the same demo project without mcpforms.

Used only in the virtualenv ``bench/http_flow.py`` makes for django-mcpz (``bench/.venvs/mcpz``), which has
neither mcpforms' dependencies nor mcpforms.
"""

from bench.http_settings import *  # noqa: F403
from bench.http_settings import INSTALLED_APPS

# The demo signs in with django-oauth-toolkit through mcpforms.oauth, and runs background tools with
# django-tasks: none of them is in that virtualenv.
MISSING = ("mcpforms", "oauth2_provider", "django_tasks", "django_tasks_db")
INSTALLED_APPS = [app for app in INSTALLED_APPS if app not in MISSING]
ROOT_URLCONF = "bench.mcpz_server"
