"""Settings of the fixture server the conformance suite runs against (make conformance, tests/e2e)."""

SECRET_KEY = "conformance-only-secret-key-0123456789abcdef0123456789"
DEBUG = False
# The dns-rebinding-protection scenario needs exactly these: localhost names allowed, anything else refused.
ALLOWED_HOSTS = ["localhost", "127.0.0.1", "[::1]"]
USE_TZ = True

INSTALLED_APPS = ["django.contrib.contenttypes", "django.contrib.auth", "mcpforms"]
MIDDLEWARE = ["django.middleware.common.CommonMiddleware"]
ROOT_URLCONF = "tests.conformance.urls"
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

MCPFORMS = {
    # The conformance client sends no credentials.
    "ALLOW_ANONYMOUS": True,
    "SERVER_NAME": "mcpforms-conformance",
    "SERVER_VERSION": "1.0.0",
    "INSTRUCTIONS": "Fixture tools, prompts and resources of the MCP conformance suite.",
}
