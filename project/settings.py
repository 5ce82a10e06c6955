"""Settings for the mcpforms demo. SQLite is the embedded default: `make run` needs no server."""

import os
from pathlib import Path

import django

import mcpforms.oauth

BASE_DIR = Path(__file__).resolve().parent.parent

# Local demo only: a real deployment sets its own secret through the environment.
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "demo-only-insecure-key-change-me-0123456789abcdef")
DEBUG = os.environ.get("DJANGO_DEBUG", "1") == "1"
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]"]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "oauth2_provider",  # the authorization server MCP clients sign in with (mcpforms[oauth])
    "mcpforms",
    # The database backend of Django's tasks framework: `make run` starts its worker (`manage.py db_worker`),
    # which runs the handler of the background tool export_tickets.
    "django_tasks_db",
    "project.demo",
]
if django.VERSION < (6, 0):
    # Django 6 has the tasks framework built in; before it, the backport is an app of its own.
    INSTALLED_APPS.insert(-2, "django_tasks")

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "project.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
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

WSGI_APPLICATION = "project.wsgi.application"
ASGI_APPLICATION = "project.asgi.application"

# SQLite set up for a web server rather than left at Django's defaults: the write-ahead log lets readers
# and a writer work at once and commits without a file created and deleted each time; synchronous=NORMAL
# syncs at checkpoints, not at every commit (what is lost in a power cut is the last commits, never the
# file); IMMEDIATE transactions take the write lock up front, so two writers queue on the busy timeout
# instead of one failing with "database is locked"; and a worker keeps its connection between requests.
# README "Deploying" says the same for a project's own settings.
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": BASE_DIR / "db.sqlite3",
        "OPTIONS": {
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
        },
        "CONN_MAX_AGE": 600,
    }
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# Where the consent page sends someone who is not signed in: the demo has no login page but the admin's.
LOGIN_URL = "admin:login"

TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}

MCPFORMS = {
    # Anyone may sign up: that is what someone without an account does. Every other tool acts for a user:
    # a client signs in with OAuth (the Inspector and mcp-remote as staff / mcpforms-demo), or sends a
    # personal access token (`manage.py mcpforms_token create staff`), or the page uses the admin's session.
    "ALLOW_ANONYMOUS": ["signup"],
    "AUTHENTICATION": [
        "mcpforms.auth.AccessTokenAuth",
        "mcpforms.auth.SessionAuth",
        "mcpforms.oauth.OAuth2Auth",
    ],
    "STATE_MAX_AGE": 3600,
    # Where URL-mode links (password and file fields) point, and the OAuth issuer (BASE_URL + "/oauth") and
    # the resource tokens are bound to (BASE_URL + "/mcp"): the demo's own address under `make run`.
    "BASE_URL": "http://127.0.0.1:8000",
}

# The authorization server mcpforms recommends for MCP clients (mcpforms.oauth.settings): dynamic
# registration and client metadata documents, S256 PKCE, one-hour tokens, consent every time.
OAUTH2_PROVIDER = mcpforms.oauth.settings()
