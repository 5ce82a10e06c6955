"""The bare view's URLconf (``bench.bare_settings``): a plain JSON view binding the same form, its answers
padded to the byte sizes of mcpforms' in the same round. It imports nothing of mcpforms.

``bench/http_flow.py`` sets ``MCPFORMS_BENCH_SIZES`` to the byte sizes of mcpforms' two answers.
"""

import json
import os
from typing import Any

from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt

from bench.forms import SignupForm
from bench.writes import insert_signup

ASKED, DONE = (int(size) for size in os.environ.get("MCPFORMS_BENCH_SIZES", "0,0").split(","))


def signup_reply(request: HttpRequest) -> dict[str, Any]:
    """Bind the posted JSON to ``SignupForm``: its errors, or what the ``signup`` tool returns."""
    form = SignupForm(data=json.loads(request.body))
    if not form.is_valid():
        return {"errors": form.errors.get_json_data()}
    return {"email": form.cleaned_data["email"], "plan": form.cleaned_data["plan"]}


def padded(reply: dict[str, object]) -> HttpResponse:
    """``reply`` as JSON padded to the size of mcpforms' answer: asked, or completed."""
    body = json.dumps({**reply, "pad": ""})
    missing = (ASKED if "errors" in reply else DONE) - len(body)
    if missing > 0:
        body = body[: -len('"}')] + "x" * missing + '"}'
    return HttpResponse(body, content_type="application/json")


@csrf_exempt
def bare(request: HttpRequest) -> HttpResponse:
    return padded(signup_reply(request))


@csrf_exempt
def bare_write(request: HttpRequest) -> HttpResponse:
    """``bare``, and a valid form's signup inserted into the bench table in a transaction of its own, as
    the other targets' ``signup_write`` handlers do."""
    form = SignupForm(data=json.loads(request.body))
    if not form.is_valid():
        return padded({"errors": form.errors.get_json_data()})
    with transaction.atomic():
        insert_signup(form.cleaned_data)
    return padded({"email": form.cleaned_data["email"], "plan": form.cleaned_data["plan"]})


urlpatterns = [path("bare", bare), path("bare-write", bare_write)]
