from django.contrib import admin
from django.urls import include, path

import mcpforms.api
import mcpforms.oauth
from project.demo import views

urlpatterns = [
    path("", views.home, name="home"),
    path("favicon.ico", views.favicon),
    path("admin/", admin.site.urls),
    path("mcp", mcpforms.api.urls),
    # OAuth: the metadata clients discover, and the authorization server under /oauth/; first, so that
    # its documents answer rather than mcpforms.urls' word that the site does not sign in.
    path("", include(mcpforms.oauth.urls)),
    path("", include("mcpforms.urls")),
]
