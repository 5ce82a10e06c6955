"""Scale out: two gunicorn instances (2 sync workers each) on different ports, one PostgreSQL database,
and — for the 2025 era's ``CacheSessions`` — one Redis through Django's own ``RedisCache``.

200 elicitation flows per era (and per 2025 session store) run on a pool of threads, each request of a
flow sent to the other instance than the one before, as a plain round-robin balancer would: a
2026-07-28 flow's rounds carry their ``requestState`` across; a 2025-11-25 flow's session is opened on
one instance, its call made on the other, the user's answers posted to one and its stream resumed on the
other. Every flow fills the admin-defined ``feedback`` form with one invalid answer first (so it takes two
elicitation rounds), then sends its last message again (a retry): all flows complete, the database holds
exactly one Submission per flow, no status is a 5xx. The counts go to artifacts/scale-out.txt.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests import wire
from tests.e2e.deployment import REDIS, ROOT, Deployment, answers, deployment, needs_postgres

pytestmark = needs_postgres

FLOWS = 200
THREADS = 12
TOOL = "feedback"
LATEST, LEGACY = "2026-07-28", "2025-11-25"
CAPABILITIES: dict[str, Any] = {"elicitation": {"form": {}}}
ARTIFACTS = Path(os.environ.get("MCPFORMS_ARTIFACTS", ROOT / "artifacts"))
REDIS_PREFIX = f"mcpforms-scale-{os.getpid()}-{uuid.uuid4().hex[:8]}"  # parallel runs never meet
CACHE_SESSIONS = f"""
CACHES = {{
    "default": {{
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://{REDIS[0]}:{REDIS[1]}",
        "KEY_PREFIX": "{REDIS_PREFIX}",
    }}
}}
MCPFORMS = {{**MCPFORMS, "SESSION_STORE": "mcpforms.session_stores.CacheSessions"}}
"""


@dataclass
class Cluster:
    """Two instances of one deployment, and what was sent to them."""

    deployment: Deployment
    urls: tuple[str, str]
    token: str
    # One client for every thread: httpx's connection pool is thread-safe, and a client per flow would
    # spend more time building TLS contexts than the servers spend answering.
    http: httpx2.Client = field(default_factory=lambda: httpx2.Client(timeout=120))
    statuses: Counter[int] = field(default_factory=Counter)
    served: Counter[str] = field(default_factory=Counter)
    counting: threading.Lock = field(default_factory=threading.Lock)

    def submissions(self, marker: str) -> dict[str, int]:
        """Submissions of the feedback form per flow (its comment), for the flows marked ``marker``."""
        rows = self.deployment.rows(
            "SELECT data->>'comments', count(*) FROM mcpforms_submission "
            "WHERE tool_name = %s AND data->>'comments' LIKE %s GROUP BY 1",
            TOOL,
            f"{marker} %",
        )
        return dict(rows)


@dataclass
class Flow:
    """One flow's requests, each to the instance the previous one did not go to."""

    cluster: Cluster
    headers: dict[str, str]
    turns: Iterator[str]

    def send(
        self, method: str, *, body: Any = None, headers: dict[str, str] | None = None
    ) -> httpx2.Response:
        url = next(self.turns)
        response = self.cluster.http.request(
            method,
            url,
            content=None if body is None else json.dumps(body),
            headers={**self.headers, **(headers or {})},
        )
        with self.cluster.counting:
            self.cluster.statuses[response.status_code] += 1
            self.cluster.served[url] += 1
        return response


def flow(cluster: Cluster, number: int) -> Flow:
    first = number % 2  # half the flows start on each instance
    turns = itertools.cycle(cluster.urls[first:] + cluster.urls[:first])
    headers = {
        "Authorization": f"Bearer {cluster.token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    return Flow(cluster, headers, turns)


def answers_for(number: int, marker: str) -> list[tuple[list[str], dict[str, Any]]]:
    """What each round asks, and what the user types: a rating out of range first, so the second round
    asks for the rating alone; then a valid one."""
    return [
        (["rating", "comments", "contact_me"], {"rating": 9, "comments": f"{marker} {number}"}),
        (["rating"], {"rating": 4}),
    ]


def asked(elicitation: dict[str, Any]) -> list[str]:
    return list(elicitation["params"]["requestedSchema"]["properties"])


def events(response: httpx2.Response) -> list[dict[str, Any]]:
    """The SSE events of a 2025-era stream: each with its id and its JSON data, if any."""
    assert response.headers["content-type"].startswith("text/event-stream"), response.text
    parsed = []
    for block in response.text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "id" in fields:
            parsed.append(
                {"id": fields["id"], "data": json.loads(fields["data"]) if fields.get("data") else None}
            )
    return parsed


def request(message_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": message_id, "method": method, "params": params}


def latest_flow(cluster: Cluster, number: int, marker: str) -> dict[str, Any]:
    """A 2026-07-28 flow: every round a stateless tools/call, the state echoed to the other instance."""
    call = flow(cluster, number)
    call.headers |= {"MCP-Protocol-Version": LATEST, "Mcp-Method": "tools/call", "Mcp-Name": TOOL}
    params: dict[str, Any] = {"name": TOOL, "arguments": {}, "_meta": wire.meta(CAPABILITIES)}
    for fields, answer in answers_for(number, marker):
        asking = call.send("POST", body=request(1, "tools/call", params)).json()["result"]
        assert asking["resultType"] == "input_required", asking
        ((key, question),) = asking["inputRequests"].items()
        assert asked(question) == fields
        responses = {key: {"action": "accept", "content": answer}}
        params |= {"inputResponses": responses, "requestState": asking["requestState"]}
    done = call.send("POST", body=request(1, "tools/call", params)).json()["result"]
    again = call.send("POST", body=request(1, "tools/call", params)).json()["result"]  # a lost response
    assert done["resultType"] == "complete" and not done.get("isError"), done
    assert again["structuredContent"] == done["structuredContent"]
    return dict(done["structuredContent"])


def legacy_flow(cluster: Cluster, number: int, marker: str) -> dict[str, Any]:
    """A 2025-11-25 flow: a session, a call whose stream closes after each question, the answers posted
    and the stream resumed with Last-Event-ID, each on the other instance."""
    call = flow(cluster, number)
    hello = {
        "protocolVersion": LEGACY,
        "capabilities": CAPABILITIES,
        "clientInfo": {"name": "scale-out", "version": "1.0"},
    }
    opened = call.send("POST", body=request(0, "initialize", hello))
    assert opened.json()["result"]["protocolVersion"] == LEGACY
    call.headers |= {"Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": LEGACY}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert call.send("POST", body=initialized).status_code == 202
    stream = events(call.send("POST", body=request(1, "tools/call", {"name": TOOL, "arguments": {}})))
    for fields, answer in answers_for(number, marker):
        question = stream[-1]
        assert question["data"]["method"] == "elicitation/create", stream
        assert asked(question["data"]) == fields
        reply = {
            "jsonrpc": "2.0",
            "id": question["data"]["id"],
            "result": {"action": "accept", "content": answer},
        }
        assert call.send("POST", body=reply).status_code == 202
        stream = events(call.send("GET", headers={"Last-Event-ID": question["id"]}))
    (response,) = [event["data"] for event in stream if event["data"] and event["data"].get("id") == 1]
    # The same answer posted again (the client lost the 202) runs nothing twice.
    assert call.send("POST", body=reply).status_code == 202
    (nothing_new,) = events(call.send("GET", headers={"Last-Event-ID": stream[-1]["id"]}))
    assert nothing_new == {"id": stream[-1]["id"], "data": None}
    assert call.send("DELETE").status_code == 200
    assert not response["result"].get("isError"), response
    return dict(response["result"]["structuredContent"])


@contextmanager
def cluster(directory: Path, database: str, settings: str = "") -> Iterator[Cluster]:
    with (
        deployment(directory, database, settings=settings) as made,
        made.serving("gunicorn", name="a") as first,
        made.serving("gunicorn", name="b") as second,
    ):
        yield Cluster(
            made, (first, second), made.manage("mcpforms_token", "create", "staff", "--quiet").strip()
        )


@pytest.fixture(scope="module")
def database_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with cluster(tmp_path_factory.mktemp("scale-db"), f"mcpforms_scale_db_{os.getpid()}") as made:
        yield made


@pytest.fixture(scope="module")
def cache_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    if not answers(REDIS):
        pytest.skip("Redis does not answer on 127.0.0.1:6379")
    import redis

    try:
        directory = tmp_path_factory.mktemp("scale-cache")
        with cluster(directory, f"mcpforms_scale_cache_{os.getpid()}", CACHE_SESSIONS) as made:
            yield made
    finally:
        client = redis.Redis(host=REDIS[0], port=REDIS[1])
        for key in client.scan_iter(f"{REDIS_PREFIX}:*"):
            client.delete(key)


RUNS = {
    "2026-07-28": ("database_cluster", latest_flow),
    "2025-11-25 DatabaseSessions": ("database_cluster", legacy_flow),
    "2025-11-25 CacheSessions on Redis": ("cache_cluster", legacy_flow),
}


@pytest.mark.parametrize("run", list(RUNS))
def test_flows_alternate_between_two_instances(run, request, capsys):
    fixture, drive = RUNS[run]
    instances: Cluster = request.getfixturevalue(fixture)
    instances.statuses.clear()
    instances.served.clear()
    marker = uuid.uuid4().hex  # this run's flows, among the rows of the others on the same database

    def one(number: int) -> dict[str, Any] | BaseException:
        try:
            return drive(instances, number, marker)
        except Exception as failure:  # counted and shown below, not lost in the pool
            return failure

    started = time.monotonic()
    with ThreadPoolExecutor(THREADS) as pool:
        outcomes = list(pool.map(one, range(FLOWS)))
    elapsed = time.monotonic() - started
    completed = [outcome for outcome in outcomes if isinstance(outcome, dict)]
    failures = [outcome for outcome in outcomes if not isinstance(outcome, dict)]
    stored = instances.submissions(marker)
    duplicates = sum(count - 1 for count in stored.values())
    report = (
        f"scale-out {run}: {len(completed)}/{FLOWS} flows completed in {elapsed:.1f} s on {THREADS} threads; "
        f"{len(stored)} submissions stored, {duplicates} duplicates; "
        f"requests per instance {sorted(instances.served.values())}; "
        f"HTTP statuses {dict(sorted(instances.statuses.items()))}"
    )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    slug = run.replace(" ", "-").replace(".", "")
    (ARTIFACTS / f"scale-out-{slug}.txt").write_text(report + "\n")
    with capsys.disabled():
        print(f"\n{report}")
    assert not failures, f"{len(failures)} flows failed, the first: {failures[0]!r}"
    assert set(stored) == {f"{marker} {number}" for number in range(FLOWS)}
    assert duplicates == 0
    assert len({result["submission"] for result in completed}) == FLOWS
    assert not [status for status in instances.statuses if status >= 500]
    assert set(instances.statuses) <= {200, 202}
    # Every flow sends an even number of requests, alternating: each instance served exactly half.
    first, second = (instances.served[url] for url in instances.urls)
    assert first == second > 0
