"""Test settings: SQLite in memory, or PostgreSQL when DATABASE_URL names one (make test runs both). The
package is tested with its test app only (tests/testapp), as a project uses it; the demo has its own
tests and settings (project/tests)."""

import os
from urllib.parse import unquote, urlsplit

SECRET_KEY = "tests-only-secret-key-0123456789abcdef0123456789abcdef"
DEBUG = False
ALLOWED_HOSTS = ["testserver", "127.0.0.1", "localhost"]
USE_TZ = True
TIME_ZONE = "UTC"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "oauth2_provider",  # the authorization server mcpforms.oauth's tests get real tokens from
    "mcpforms",
    "tests.testapp",
]

MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]

ROOT_URLCONF = "tests.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]


def _database(url: str | None) -> dict[str, object]:
    if not url:
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}
    parts = urlsplit(url)
    if parts.scheme not in ("postgres", "postgresql"):
        raise ValueError(f"DATABASE_URL must be a postgres:// URL, not {parts.scheme!r}")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": parts.path.lstrip("/"),
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname or "",
        "PORT": str(parts.port or ""),
    }


DATABASES = {"default": _database(os.environ.get("DATABASE_URL"))}
# Django 6.1 sends mail through MAILERS and warns (an error in this suite) when none is configured; 5.2
# and 6.0 ignore the setting. The test runner swaps every mailer for the locmem outbox either way.
MAILERS = {"default": {"BACKEND": "django.core.mail.backends.locmem.EmailBackend"}}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# Django's default hasher spends about a second per password on purpose; the tests create hundreds of
# users and never test the hashing itself (Django's docs: "Speeding up the tests").
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Most tests call as nobody in particular; tests/test_auth.py covers refusing anonymous callers.
MCPFORMS = {"ALLOW_ANONYMOUS": True}
