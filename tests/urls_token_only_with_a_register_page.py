"""A token-only site with a sign-up page of its own at /register/, mounted after mcpforms.urls."""

from django.http import HttpResponse
from django.urls import include, path

import mcpforms.api

urlpatterns = [
    path("mcp", mcpforms.api.urls),
    path("", include("mcpforms.urls")),
    path("register/", lambda request: HttpResponse("Sign up"), name="register"),
]
