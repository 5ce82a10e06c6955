"""``bench.http_settings`` for the bare view: the same plain project without mcpforms, and a URLconf
(``bench.bare_urls``) that imports nothing of it, so that the floor carries none of mcpforms' memory."""

from bench.http_settings import *  # noqa: F403
from bench.http_settings import INSTALLED_APPS

INSTALLED_APPS = [app for app in INSTALLED_APPS if app != "mcpforms"]
ROOT_URLCONF = "bench.bare_urls"
