"""A site that signs in with personal access tokens only: the endpoint and mcpforms.urls, no OAuth."""

from django.urls import include, path

import mcpforms.api

urlpatterns = [path("mcp", mcpforms.api.urls), path("", include("mcpforms.urls"))]
