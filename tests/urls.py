from django.contrib import admin
from django.urls import include, path

import mcpforms.api
import mcpforms.oauth

urlpatterns = [
    path("admin/", admin.site.urls),
    # LOGIN_URL's default, /accounts/login/: where the OAuth consent page sends a visitor not signed in.
    path("accounts/", include("django.contrib.auth.urls")),
    path("mcp", mcpforms.api.urls),
    path("", include(mcpforms.oauth.urls)),
    path("", include("mcpforms.urls")),  # after the sign-in URLs, whose documents answer first
]
