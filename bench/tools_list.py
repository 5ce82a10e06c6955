"""How long ``tools/list`` takes with 10, 100 and 1,000 form tools, in process.

Run: ``.venv/bin/python bench/tools_list.py`` (``bench/http_flow.py`` runs it too). Each size gets a fresh
``Server`` with that many copies of the demo's ``SignupForm`` (subclasses) under distinct names; a listing
is every page of ``tools/list`` (``PAGE_SIZE`` tools each) through ``Server.handle``, each page's reply
serialised to JSON as the HTTP edge would. The first listing converts every form to its tool definition;
the warm ones are served from what it built.
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

from django.conf import settings  # noqa: E402
from django.test import override_settings  # noqa: E402

from bench.flows import META, PROTOCOL_VERSION  # noqa: E402
from mcpforms.conf import conf  # noqa: E402
from mcpforms.protocol.server import Server  # noqa: E402
from mcpforms.registry import register  # noqa: E402
from project.demo.forms import SignupForm  # noqa: E402

SIZES = (10, 100, 1000)
HEADERS = {"mcp-protocol-version": PROTOCOL_VERSION, "mcp-method": "tools/list"}


def server_with(count: int) -> Server:
    server = Server()
    for number in range(count):
        # A class of its own for each, so that nothing cached per form class makes the first listing cheap.
        copy = type(f"SignupForm{number}", (SignupForm,), {"__module__": __name__})
        register(copy, server=server, name=f"signup_{number:04d}")
    return server


def list_all(server: Server, *, max_pages: int = 0) -> tuple[int, int]:
    """List every tool, page after page (``max_pages`` at most, if set): how many tools, how many pages."""
    tools, pages, cursor = 0, 0, None
    while True:
        params: dict[str, Any] = {"_meta": META, **({"cursor": cursor} if cursor else {})}
        payload = {"jsonrpc": "2.0", "id": pages + 1, "method": "tools/list", "params": params}
        reply = server.handle(payload, headers=HEADERS, user=None)
        json.dumps(reply.body)
        assert reply.body is not None and "result" in reply.body, reply.body
        result = reply.body["result"]
        tools, pages, cursor = tools + len(result["tools"]), pages + 1, result.get("nextCursor")
        if not cursor or pages == max_pages:
            return tools, pages


def timed(server: Server, *, max_pages: int = 0) -> float:
    start = time.perf_counter()
    list_all(server, max_pages=max_pages)
    return time.perf_counter() - start


def main() -> None:
    print(f"tools/list in process (Server.handle + JSON), {conf.PAGE_SIZE} tools per page:")
    header = f"{'tools':>6} {'pages':>6} {'first (conversion)':>19} {'warm, median':>13}"
    print(f"{header} {'warm per tool':>14} {'warm first page':>16}")
    for count in SIZES:
        server = server_with(count)
        first = timed(server)
        tools, pages = list_all(server)
        assert tools == count, (tools, count)
        repeats = range(max(5, 2000 // count))
        warm = statistics.median(timed(server) for _ in repeats)
        page = statistics.median(timed(server, max_pages=1) for _ in repeats)
        row = f"{count:>6} {pages:>6} {first * 1e3:>16.1f} ms {warm * 1e3:>10.2f} ms"
        print(f"{row} {warm / count * 1e6:>11.1f} µs {page * 1e3:>13.2f} ms")


if __name__ == "__main__":
    # Anonymous callers see every tool here: the demo lets them see only ``signup``.
    with override_settings(MCPFORMS={**settings.MCPFORMS, "ALLOW_ANONYMOUS": True}):
        main()
