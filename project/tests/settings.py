"""The demo's own settings (project/settings.py) for its tests: what `make run` serves, on a database in
memory. The package's tests have settings of their own (tests/settings.py) and never load the demo."""

from project.settings import *  # noqa: F403

DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
# Django's default hasher is slow on purpose; no demo test is about hashing.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
