"""The test project's URLs without ``mcpforms.oauth.urls``: a project that forgot to mount them."""

from django.urls import path

import mcpforms.api

urlpatterns = [path("mcp", mcpforms.api.urls)]
