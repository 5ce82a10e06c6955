"""How long ``tools/list`` takes with 10, 100 and 1,000 form tools, in process, and what the tools cost.

Run: ``.venv/bin/python bench/tools_list.py`` (``bench/http_flow.py`` runs it too). Each size runs in a fresh
process (Linux: it reads ``/proc``), which first lists the tools of a ``Server`` with none, so that what
any first request pays (imports, validators, translations) is paid before anything is measured. Then each
size gets fresh ``Server``s with that many copies of the demo's ``SignupForm`` (subclasses) under distinct
names; a listing is every page of ``tools/list`` (``PAGE_SIZE`` tools each) through ``Server.handle``, each
page's reply serialised to JSON as the HTTP edge would. Forms are converted to tool definitions when a
page first reaches them, so the columns are:

- *cold first page*: the first request a server answers, its first page (it converts that page's tools);
- *first listing*: every page of another such server, the first time (it converts every tool);
- *warm*: every page again, once converted (median), per tool, and its first page alone;
- *RSS +* and *peak +*: what the first server's tools cost, registered and listed to the end: its
  ``VmRSS`` (after a garbage collection) and ``VmHWM`` (peak) less the same figures with the empty server.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpforms.protocol.server import Server

ROOT = Path(__file__).resolve().parent.parent
SIZES = (10, 100, 1000)


def server_with(count: int) -> Server:
    from mcpforms.protocol.server import Server
    from mcpforms.registry import register
    from project.demo.forms import SignupForm

    server = Server()
    for number in range(count):
        # A class of its own for each, so that nothing cached per form class makes the first listing cheap.
        copy = type(f"SignupForm{number}", (SignupForm,), {"__module__": __name__})
        register(copy, server=server, name=f"signup_{number:04d}")
    return server


def list_all(server: Server, *, max_pages: int = 0) -> tuple[int, int]:
    """List every tool, page after page (``max_pages`` at most, if set): how many tools, how many pages."""
    from bench.flows import META, PROTOCOL_VERSION

    headers = {"mcp-protocol-version": PROTOCOL_VERSION, "mcp-method": "tools/list"}
    tools, pages, cursor = 0, 0, None
    while True:
        params: dict[str, Any] = {"_meta": META, **({"cursor": cursor} if cursor else {})}
        payload = {"jsonrpc": "2.0", "id": pages + 1, "method": "tools/list", "params": params}
        reply = server.handle(payload, headers=headers, user=None)
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


def memory_kib() -> tuple[int, int]:
    """This process's resident memory after a garbage collection, and its peak, in KiB."""
    from bench.procfs import status_kib

    gc.collect()
    return status_kib("self", "VmRSS"), status_kib("self", "VmHWM")


def child(count: int) -> None:
    """Measure ``count`` tools in this fresh process; print the figures as JSON."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.test import override_settings

    from mcpforms.conf import conf

    # Anonymous callers see every tool here: the demo lets them see only ``signup``.
    with override_settings(MCPFORMS={**settings.MCPFORMS, "ALLOW_ANONYMOUS": True}):
        empty = server_with(0)
        list_all(empty)
        rss_before, peak_before = memory_kib()
        server = server_with(count)
        cold_page = timed(server, max_pages=1)
        tools, pages = list_all(server)
        assert tools == count, (tools, count)
        rss_after, peak_after = memory_kib()
        other = server_with(count)
        first = timed(other)
        repeats = range(max(5, 2000 // count))
        warm = statistics.median(timed(other) for _ in repeats)
        page = statistics.median(timed(other, max_pages=1) for _ in repeats)
        figures = {
            "page_size": conf.PAGE_SIZE,
            "pages": pages,
            "cold_page": cold_page,
            "first": first,
            "warm": warm,
            "page": page,
            "rss_kib": rss_after - rss_before,
            "peak_kib": peak_after - peak_before,
        }
    print(json.dumps(figures))


def run_child(count: int) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--child", str(count)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    figures: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return figures


def main() -> None:
    runs = {count: run_child(count) for count in SIZES}
    print(f"tools/list in process (Server.handle + JSON), {runs[SIZES[0]]['page_size']} tools per page:")
    header = f"{'tools':>6} {'pages':>6} {'cold first page':>16} {'first (conversion)':>19}"
    header += f" {'warm, median':>13} {'warm per tool':>14} {'warm first page':>16}"
    print(f"{header} {'RSS +':>9} {'peak +':>9}")
    for count, run in runs.items():
        cold, first, warm, page = (run[name] * 1e3 for name in ("cold_page", "first", "warm", "page"))
        row = f"{count:>6} {run['pages']:>6} {cold:>13.1f} ms {first:>16.1f} ms {warm:>10.2f} ms"
        row += f" {warm / count * 1e3:>11.1f} µs {page:>13.2f} ms"
        print(f"{row} {run['rss_kib'] / 1024:>5.1f} MiB {run['peak_kib'] / 1024:>5.1f} MiB")
    print("  RSS + / peak +: VmRSS (after gc) / VmHWM of a fresh process with these tools registered and")
    print("  listed to the end, less the same with a server of no tools, listed once.")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    if sys.argv[1:2] == ["--child"]:
        child(int(sys.argv[2]))
    else:
        main()
