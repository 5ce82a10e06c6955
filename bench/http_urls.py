"""The mcpforms server's URLconf (``bench.http_settings``): the MCP endpoint, and the bare view whose valid
replies are recorded as mcpforms records a completed flow (``/bare-recorded``), which needs mcpforms'
model and so cannot run on the bare view's server.
"""

import uuid

from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt

import mcpforms.api
from bench.bare_urls import padded, signup_reply
from mcpforms.models import CompletedFlow
from mcpforms.protocol.state import ANONYMOUS, RequestState


@csrf_exempt
def bare_recorded(request: HttpRequest) -> HttpResponse:
    """The bare view, and a valid form's reply recorded as mcpforms records a completed flow: the same two
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


urlpatterns = [path("mcp", mcpforms.api.urls), path("bare-recorded", bare_recorded)]
