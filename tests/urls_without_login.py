"""The tests' URLconf less django.contrib.auth.urls: a new project's, which serves no login page."""

from django.contrib import admin
from django.urls import include, path

import mcpforms.api
import mcpforms.oauth

urlpatterns = [
    path("admin/", admin.site.urls),
    path("mcp", mcpforms.api.urls),
    path("", include(mcpforms.oauth.urls)),
]
