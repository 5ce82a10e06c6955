"""How much a two-round form flow costs over MCP, as a ratio to a bare Django JSON view, in one run.

Run: ``.venv/bin/python bench/two_round_flow.py`` (about 20 s). Both sides go through the same WSGI
handler and middleware with Django's test client, in the same process, interleaved, so the machine's
noise hits them alike; the ratio is the figure to compare, never the absolute times.

- baseline: two POSTs to a plain view that parses JSON, binds ``SignupForm`` and answers JSON: the least
  a hand-written Django endpoint does for the same two exchanges;
- mcpforms: round one asks (``input_required``), round two answers and completes the ``signup`` tool.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")

import django  # noqa: E402

django.setup()

from django.test import Client  # noqa: E402

from bench.flows import ANSWER, ARGUMENTS, HEADERS, answers_for, call_body, check_done, result_of  # noqa: E402

ROUNDS = 300
REPEATS = 7


def mcp_flow(client: Client) -> None:
    def call(request_id: int, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        body = call_body(request_id, extra)
        response = client.post("/mcp", body, content_type="application/json", headers=HEADERS)
        return result_of(response.content)

    check_done(call(2, answers_for(call(1))))


def bare_flow(client: Client) -> None:
    for data in (ARGUMENTS, ANSWER):
        response = client.post("/bare", json.dumps(data), content_type="application/json")
        assert response.status_code == 200


def timed(flow: Any, client: Client) -> float:
    start = time.perf_counter()
    for _ in range(ROUNDS):
        flow(client)
    return (time.perf_counter() - start) / ROUNDS


def main() -> None:
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    client = Client()
    mcp_flow(client)  # warm both paths: imports, caches, the first query
    bare_flow(client)
    mcp_times, bare_times = [], []
    for _ in range(REPEATS):
        bare_times.append(timed(bare_flow, client))
        mcp_times.append(timed(mcp_flow, client))
    bare, mcp = statistics.median(bare_times), statistics.median(mcp_times)
    print(f"bare Django view, two exchanges: {bare * 1e6:8.0f} µs")
    print(f"mcpforms two-round flow:         {mcp * 1e6:8.0f} µs")
    print(f"ratio (mcpforms / bare view):    {mcp / bare:8.2f}x")


if __name__ == "__main__":
    main()
