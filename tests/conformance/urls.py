from django.urls import path

from mcpforms.api import build_api
from tests.conformance.fixtures import server

urlpatterns = [path("mcp", build_api(server, namespace="conformance").urls)]
