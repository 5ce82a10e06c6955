"""``bench.http_settings`` for the django-mcpz target: the same plain project without mcpforms.

Used only in the virtualenv ``bench/http_flow.py`` makes for django-mcpz (``bench/.venvs/mcpz``), which has
neither mcpforms' dependencies nor mcpforms.
"""

from bench.http_settings import *  # noqa: F403
from bench.http_settings import INSTALLED_APPS

INSTALLED_APPS = [app for app in INSTALLED_APPS if app != "mcpforms"]
ROOT_URLCONF = "bench.mcpz_server"
