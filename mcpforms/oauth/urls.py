"""Everything an MCP client asks the site for while it signs in: ``path("", include(mcpforms.oauth.urls))``.

The routes are ``mcpforms.oauth.routes``. Without django-oauth-toolkit's app in ``INSTALLED_APPS`` there
are none: its views import its models, which Django refuses outside an installed app, so the URLconf
would fail to import and ``manage.py check`` end in a ``RuntimeError`` traceback before
``mcpforms.E304`` could say what is missing.
"""

from __future__ import annotations

from django.apps import apps
from django.urls import URLPattern, URLResolver


def _routes() -> list[URLPattern | URLResolver]:
    if not apps.is_installed("oauth2_provider"):
        return []
    from mcpforms.oauth.routes import urlpatterns  # only then: it imports the toolkit's models

    return urlpatterns


urlpatterns = _routes()
