"""A site that signs in with OAuth but mounts mcpforms.urls first: its word that nobody signs in answers."""

from django.urls import include, path

import mcpforms.api
import mcpforms.oauth

urlpatterns = [
    path("mcp", mcpforms.api.urls),
    path("", include("mcpforms.urls")),
    path("", include(mcpforms.oauth.urls)),
]
