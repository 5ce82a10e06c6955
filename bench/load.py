"""A load generator for two-round flows: ``connections`` threads, each running flows back to back.

A flow is a function of a ``Poster`` that raises on anything unexpected. Threads and ``http.client``
rather than an async client: the generator shares the machine's cores with the server it measures,
and this is the cheapest client Python has; the server's CPU is read per flow, so the generator's speed
changes how many flows run, not what each costs.
"""

from __future__ import annotations

import http.client
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from bench.flows import FlowError


class Poster:
    """POSTs JSON to one local port, one connection per request.

    gunicorn's sync workers close the connection after every response anyway; asking every server to do so
    gives all targets the same TCP work per request. It also avoids a stall of uvicorn with ``--workers``:
    there a kept-alive connection's answers wait about 40 ms each (Nagle's algorithm meeting the client's
    delayed ACK: the socket the supervisor binds has no ``IPPROTO_TCP``, so asyncio never sets
    ``TCP_NODELAY``, Kludex/uvicorn#3149), which a single uvicorn worker does not show.
    """

    def __init__(self, port: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        # Seconds per request of each label a flow gives (``last``: its final round), for percentiles.
        self.latencies: dict[str, list[float]] = {}

    def __call__(
        self, path: str, body: bytes, headers: Mapping[str, str] | None = None, *, label: str = ""
    ) -> bytes:
        status, _, data = self.send("POST", path, body, headers, label=label)
        if status != 200:
            raise FlowError(f"HTTP {status} from {path}: {data[:300]!r}")
        return data

    def send(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        *,
        label: str = "",
    ) -> tuple[int, http.client.HTTPMessage, bytes]:
        """Any request: its status, headers and body, its latency kept under ``label`` if one is given."""
        sent = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Connection": "close",
        }
        started = time.perf_counter()
        try:
            self.connection.request(method, path, body, {**sent, **(headers or {})})
            response = self.connection.getresponse()
            data = response.read()
        finally:
            self.connection.close()
        if label:
            self.latencies.setdefault(label, []).append(time.perf_counter() - started)
        return response.status, response.headers, data


Flow = Callable[[Poster], None]


@dataclass
class Tally:
    flows: int = 0
    errors: int = 0
    first_error: str = ""
    latencies: dict[str, list[float]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, *, error: Exception | None) -> None:
        with self.lock:
            if error is None:
                self.flows += 1
                return
            self.errors += 1
            self.first_error = self.first_error or f"{type(error).__name__}: {error}"


def run(flow: Flow, port: int, *, seconds: float, connections: int) -> Tally:
    """Run ``flow`` on ``connections`` threads for ``seconds``; flows under way then are finished."""
    tally = Tally()
    deadline = time.monotonic() + seconds

    def worker() -> None:
        post = Poster(port)
        while time.monotonic() < deadline:
            try:
                flow(post)
            except (FlowError, OSError, http.client.HTTPException, ValueError, KeyError) as error:
                tally.add(error=error)
            else:
                tally.add(error=None)
        with tally.lock:
            for label, seconds in post.latencies.items():
                tally.latencies.setdefault(label, []).extend(seconds)

    threads = [threading.Thread(target=worker) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return tally
