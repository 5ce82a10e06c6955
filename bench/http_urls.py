"""``bench.urls`` with the bare views answering as many bytes as mcpforms does in the same round.

``bench/http_flow.py`` sets ``MCPFORMS_BENCH_SIZES`` to the byte sizes of mcpforms' two answers.
"""

import json
import os
import uuid

from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt

import mcpforms.api
from bench.urls import signup_reply
from bench.writes import insert_signup
from mcpforms.models import CompletedFlow
from mcpforms.protocol.state import ANONYMOUS, RequestState
from project.demo.forms import SignupForm

ASKED, DONE = (int(size) for size in os.environ.get("MCPFORMS_BENCH_SIZES", "0,0").split(","))


def padded(reply: dict[str, object]) -> HttpResponse:
    """``reply`` as JSON padded to the size of mcpforms' answer: asked, or completed."""
    body = json.dumps({**reply, "pad": ""})
    missing = (ASKED if "errors" in reply else DONE) - len(body)
    if missing > 0:
        body = body[: -len('"}')] + "x" * missing + '"}'
    return HttpResponse(body, content_type="application/json")


@csrf_exempt
def bare(request: HttpRequest) -> HttpResponse:
    """``bench.urls.bare``, padded."""
    return padded(signup_reply(request))


@csrf_exempt
def bare_recorded(request: HttpRequest) -> HttpResponse:
    """``bare``, and a valid form's reply recorded as mcpforms records a completed flow: the same two
    statements in one transaction, so the figure shows what exactly-once costs by itself."""
    reply = signup_reply(request)
    if "errors" not in reply:
        flow = RequestState(
            tool="bare",
            principal=ANONYMOUS,
            issued_at=0,
            server="bare",
            flow=uuid.uuid4().hex,
            answers={},
            pending=(),
        )
        with transaction.atomic():
            digest = CompletedFlow.record(flow)
            CompletedFlow.keep_result(digest, reply)
    return padded(reply)


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


urlpatterns = [
    path("mcp", mcpforms.api.urls),
    path("bare", bare),
    path("bare-recorded", bare_recorded),
    path("bare-write", bare_write),
]
