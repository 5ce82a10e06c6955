"""A URLconf that mounts the URL-mode page but no MCP endpoint: a project that forgot the one line."""

from django.urls import include, path

urlpatterns = [path("", include("mcpforms.urls"))]
