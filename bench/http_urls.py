"""``bench.urls`` with the bare view answering as many bytes as mcpforms does in the same round.

``bench/http_flow.py`` sets ``MCPFORMS_BENCH_SIZES`` to the byte sizes of mcpforms' two answers.
"""

import json
import os

from django.http import HttpRequest, HttpResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt

import mcpforms.api
from bench.urls import signup_reply

ASKED, DONE = (int(size) for size in os.environ.get("MCPFORMS_BENCH_SIZES", "0,0").split(","))


@csrf_exempt
def bare(request: HttpRequest) -> HttpResponse:
    """``bench.urls.bare``, its JSON padded to the size of mcpforms' answer: asked, or completed."""
    reply = signup_reply(request)
    body = json.dumps({**reply, "pad": ""})
    missing = (ASKED if "errors" in reply else DONE) - len(body)
    if missing > 0:
        body = body[: -len('"}')] + "x" * missing + '"}'
    return HttpResponse(body, content_type="application/json")


urlpatterns = [path("mcp", mcpforms.api.urls), path("bare", bare)]
