"""The baseline: a hand-written JSON view binding the same form, next to the MCP endpoint."""

import json
from typing import Any

from django.http import HttpRequest, JsonResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt

import mcpforms.api
from project.demo.forms import SignupForm


def signup_reply(request: HttpRequest) -> dict[str, Any]:
    """Bind the posted JSON to ``SignupForm``: its errors, or what the ``signup`` tool returns."""
    form = SignupForm(data=json.loads(request.body))
    if not form.is_valid():
        return {"errors": form.errors.get_json_data()}
    return {"email": form.cleaned_data["email"], "plan": form.cleaned_data["plan"]}


@csrf_exempt
def bare(request: HttpRequest) -> JsonResponse:
    return JsonResponse(signup_reply(request))


urlpatterns = [path("mcp", mcpforms.api.urls), path("bare", bare)]
