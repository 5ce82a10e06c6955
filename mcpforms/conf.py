"""The ``MCPFORMS`` setting, read on every access so ``override_settings`` just works."""

from __future__ import annotations

from typing import Any

from django.conf import settings as django_settings

DEFAULTS: dict[str, Any] = {
    # Seconds a requestState token stays valid after it was minted.
    "STATE_MAX_AGE": 3600,
    # A dedicated signing key for requestState; None signs with SECRET_KEY (and SECRET_KEY_FALLBACKS).
    "STATE_KEY": None,
    "STATE_KEY_FALLBACKS": [],
    # A ModelChoiceField with more rows than this cannot become a select list an assistant can show.
    "MAX_MODEL_CHOICES": 100,
    # The MCP endpoint (mcpforms.api). Origins allowed besides the endpoint's own, e.g. "https://app.example".
    "ALLOWED_ORIGINS": [],
    # serverInfo sent in every result's _meta; a None version is mcpforms' own.
    "SERVER_NAME": "mcpforms",
    "SERVER_VERSION": None,
    # server/discover's guidance for the model, or None.
    "INSTRUCTIONS": None,
    # Entries per page of tools/list, prompts/list, resources/list and resources/templates/list.
    "PAGE_SIZE": 100,
    # ttlMs of cacheable results (discover, lists, resource reads); 0 means "stale at once".
    "CACHE_TTL_MS": 60000,
    # URL-mode elicitation (spec §7.3): seconds a link to the form page stays valid, and the absolute base
    # of that link ("https://forms.example.com"), since an MCP request does not say where the site lives.
    "URL_MODE_MAX_AGE": 900,
    "BASE_URL": None,
}


def user_settings() -> Any:
    """Return the raw ``MCPFORMS`` value (a dict when configured correctly)."""
    return getattr(django_settings, "MCPFORMS", {})


class Conf:
    """Attribute access to ``MCPFORMS`` with defaults; malformed values are reported by checks."""

    def __getattr__(self, name: str) -> Any:
        if name not in DEFAULTS:
            raise AttributeError(f"MCPFORMS has no setting {name!r}; valid: {', '.join(DEFAULTS)}")
        configured = user_settings()
        if isinstance(configured, dict) and name in configured:
            return configured[name]
        return DEFAULTS[name]


conf = Conf()
