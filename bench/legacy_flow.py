"""The 2025-11-25 era's form flow over HTTP, for ``bench/http_flow.py``: a session per flow.

``initialize`` (the answer carries ``Mcp-Session-Id``), ``notifications/initialized`` (202), the
``tools/call`` of ``signup`` (an SSE stream that ends with the server's ``elicitation/create``), the
answer POSTed as a JSON-RPC response (202), then a GET of the call's stream with ``Last-Event-ID`` (the
call's result), as ``tests/e2e/test_scale_out.py`` sends them; and a ``DELETE`` of the session, without
which each flow would leave one behind and the anonymous session budgets answer 429 within seconds.
"""

from __future__ import annotations

import json
import time
from typing import Any

from bench.flows import ANSWER, ARGUMENTS, TOOL, FlowError, check_done
from bench.load import Poster

VERSION = "2025-11-25"
HELLO = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": VERSION,
        "capabilities": {"elicitation": {"form": {}}},
        "clientInfo": {"name": "mcpforms-bench", "version": "1"},
    },
}
INITIALIZED = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
CALL = json.dumps(
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": TOOL, "arguments": ARGUMENTS}}
).encode()


def events(body: bytes) -> list[tuple[str, Any]]:
    """The SSE events of a stream: each one's id and its JSON data (``None`` when it has none)."""
    parsed = []
    for block in body.decode().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "id" in fields:
            parsed.append((fields["id"], json.loads(fields["data"]) if fields.get("data") else None))
    return parsed


def expect(status: int, wanted: int, what: str, body: bytes) -> None:
    if status != wanted:
        raise FlowError(f"{what}: HTTP {status}, not {wanted}: {body[:300]!r}")


def legacy_flow(post: Poster) -> None:
    status, headers, body = post.send("POST", "/mcp", json.dumps(HELLO).encode())
    expect(status, 200, "initialize", body)
    session = {"Mcp-Session-Id": headers["mcp-session-id"] or "", "MCP-Protocol-Version": VERSION}
    status, _, body = post.send("POST", "/mcp", INITIALIZED, session)
    expect(status, 202, "notifications/initialized", body)
    status, _, body = post.send("POST", "/mcp", CALL, session)
    expect(status, 200, "tools/call", body)
    question_id, question = events(body)[-1]
    if not question or question.get("method") != "elicitation/create":
        raise FlowError(f"the call did not ask: {body[:300]!r}")
    reply = {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": ANSWER}}
    started = time.perf_counter()  # round two's latency: the answer and the resumed stream together
    status, _, body = post.send("POST", "/mcp", json.dumps(reply).encode(), session)
    expect(status, 202, "the answer", body)
    status, _, body = post.send("GET", "/mcp", None, {**session, "Last-Event-ID": question_id})
    post.latencies.setdefault("last", []).append(time.perf_counter() - started)
    expect(status, 200, "the resumed stream", body)
    results = [data for _, data in events(body) if data and data.get("id") == 1]
    if not results or "result" not in results[0]:
        raise FlowError(f"the resumed stream has no result: {body[:300]!r}")
    check_done(results[0]["result"])
    status, _, body = post.send("DELETE", "/mcp", None, session)
    expect(status, 200, "DELETE", body)
