"""URLconf of the ASGI test's server: the demo's, plus a tool that reports progress around sync ORM work
that lasts as long as the test wants — it waits for a PostgreSQL advisory lock the test holds."""

from __future__ import annotations

from typing import Any

from django.db import connection

from mcpforms.protocol import RequestContext, default_server
from project.urls import urlpatterns
from tests.e2e.deployment import GATE

# Imported by the ASGI test's server process only (as its ROOT_URLCONF), never by the test run itself:
# the tool lands on that process's default server, not on the one the rest of the suite lists.


@default_server.tool(description="Report progress 0 of 1, wait for the test's gate, report 1 of 1.")
def gated_progress(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    ctx.report_progress(0, 1)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [GATE])
        cursor.execute("SELECT pg_advisory_unlock(%s)", [GATE])
    ctx.report_progress(1, 1)
    return {"content": [{"type": "text", "text": "Through the gate."}]}


__all__ = ["urlpatterns"]
