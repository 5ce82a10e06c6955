"""The baseline: a hand-written JSON view binding the same form, next to the MCP endpoint."""

import json

from django.http import HttpRequest, JsonResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt

import mcpforms.api
from project.demo.forms import SignupForm


@csrf_exempt
def bare(request: HttpRequest) -> JsonResponse:
    form = SignupForm(data=json.loads(request.body))
    if not form.is_valid():
        return JsonResponse({"errors": form.errors.get_json_data()})
    return JsonResponse({"email": form.cleaned_data["email"], "plan": form.cleaned_data["plan"]})


urlpatterns = [path("mcp", mcpforms.api.urls), path("bare", bare)]
