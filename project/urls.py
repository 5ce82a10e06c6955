from django.contrib import admin
from django.urls import include, path

import mcpforms.api
from project.demo import views

urlpatterns = [
    path("", views.home, name="home"),
    path("favicon.ico", views.favicon),
    path("admin/", admin.site.urls),
    path("mcp", mcpforms.api.urls),
    path("mcpforms/", include("mcpforms.urls")),
]
