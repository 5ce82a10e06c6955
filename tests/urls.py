from django.urls import path

import mcpforms.api

urlpatterns = [path("mcp", mcpforms.api.urls)]
