"""The URL-mode page (spec §7.3). Mount it once: ``path("mcpforms/", include("mcpforms.urls"))``."""

from __future__ import annotations

from django.urls import path

import mcpforms.views as views

app_name = "mcpforms_ui"  # "mcpforms" is the namespace of the MCP endpoint (mcpforms.api)

urlpatterns = [
    path("fill/<str:token>/", views.page, name="page"),
]
