"""Scale out: two gunicorn instances (2 sync workers each) on different ports, one PostgreSQL database,
and — for the 2025 era's ``CacheSessions`` — one Redis through Django's own ``RedisCache``.

200 elicitation flows per era (and per 2025 session store) run on a pool of threads, each request of a
flow sent to the other instance than the one before, as a plain round-robin balancer would: a
2026-07-28 flow's rounds carry their ``requestState`` across; a 2025-11-25 flow's session is opened on
one instance, its call made on the other, the user's answers posted to one and its stream resumed on the
other. Every flow fills the admin-defined ``feedback`` form with one invalid answer first (so it takes two
elicitation rounds), then sends its last message again (a retry): all flows complete, the database holds
exactly one Submission per flow, no status is a 5xx.

Among them, on the same pool, 24 flows per run of the demo's ``travel_request`` wizard, one step per round
(a server-sent ``elicitation/create`` each on the 2025 era), half of them abroad (the passport step asked)
and half at home (skipped), each with a return before its departure first (that step asked again) and the
same retry of its last message: all complete, each stores exactly one TravelRequest, with a passport
exactly when abroad. The counts go to artifacts/scale-out-*.txt.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
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
WIZARD_FLOWS = 24
THREADS = 12
TOOL = "feedback"
WIZARD = "travel_request"
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

    def travel_requests(self, marker: str) -> dict[str, list[str]]:
        """The passport numbers of the travel requests per flow (their destination), for ``marker``'s."""
        rows = self.deployment.rows(
            "SELECT destination, passport_number FROM demo_travelrequest WHERE destination LIKE %s",
            f"{marker} %",
        )
        stored: dict[str, list[str]] = {}
        for destination, passport in rows:
            stored.setdefault(destination, []).append(passport)
        return stored


@dataclass(frozen=True)
class Round:
    """What one round asks (its fields; its message, where the test checks it) and what the user types."""

    fields: list[str]
    answer: dict[str, Any]
    message: str | None = None


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


def answers_for(number: int, marker: str) -> list[Round]:
    """What each round asks, and what the user types: a rating out of range first, so the second round
    asks for the rating alone; then a valid one."""
    return [
        Round(["rating", "comments", "contact_me"], {"rating": 9, "comments": f"{marker} {number}"}),
        Round(["rating"], {"rating": 4}),
    ]


def abroad(number: int) -> bool:
    # By pairs, so that as many trips abroad (one round more) start on each instance.
    return number // 2 % 2 == 0


def passport_of(number: int) -> str:
    return f"P{number:07d}"


DATES = ["departure", "return_date", "budget"]
BACKWARDS = "The return date cannot be before the departure."


def trip_for(number: int, marker: str) -> list[Round]:
    """The steps the demo's travel_request asks, one a round, and what the user types: the passport only
    abroad; a return before the departure first, so that step is asked again with Django's message."""
    steps = 4 if abroad(number) else 3
    passport = {"passport_number": passport_of(number), "passport_expiry": "2030-05-31"}
    dated = 3 if abroad(number) else 2
    dates = f"Step {dated} of at most {steps}: Dates and budget"
    return [
        Round(
            ["destination", "international"],
            {"destination": f"{marker} {number}", "international": abroad(number)},
            "Step 1 of at most 4: Destination",  # before the answer, the passport step may still apply
        ),
        *(
            [Round(["passport_number", "passport_expiry"], passport, "Step 2 of at most 4: Passport")]
            if abroad(number)
            else []
        ),
        Round(DATES, {"departure": "2027-03-08", "return_date": "2027-03-01", "budget": 1800}, dates),
        Round(
            DATES,
            {"departure": "2027-03-01", "return_date": "2027-03-08", "budget": 1800},
            f"{dates}\nPlease correct:\n- {BACKWARDS}",
        ),
        Round(["confirmed"], {"confirmed": True}, f"Step {steps} of at most {steps}: Confirmation"),
    ]


def check_question(elicitation: dict[str, Any], expected: Round) -> None:
    assert asked(elicitation) == expected.fields, elicitation
    if expected.message is not None:
        assert elicitation["params"]["message"] == expected.message


def recorded_trip(result: dict[str, Any], number: int, marker: str) -> dict[str, Any]:
    """The travel request's number, from the text the demo's handle returns."""
    assert not result.get("isError"), result
    (text,) = [part["text"] for part in result["content"]]
    destination = re.escape(f"{marker} {number}")
    found = re.fullmatch(
        rf"Travel request #(\d+) to {destination}, 2027-03-01 to 2027-03-08, is recorded\.", text
    )
    assert found, text
    return {"travel_request": int(found[1])}


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


def latest_rounds(
    cluster: Cluster, number: int, tool: str, rounds: list[Round]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A 2026-07-28 flow: every round a stateless tools/call, the state echoed to the other instance; the
    final call's result, and that of the same call sent again (a lost response)."""
    call = flow(cluster, number)
    call.headers |= {"MCP-Protocol-Version": LATEST, "Mcp-Method": "tools/call", "Mcp-Name": tool}
    params: dict[str, Any] = {"name": tool, "arguments": {}, "_meta": wire.meta(CAPABILITIES)}
    for expected in rounds:
        asking = call.send("POST", body=request(1, "tools/call", params)).json()["result"]
        assert asking["resultType"] == "input_required", asking
        ((key, question),) = asking["inputRequests"].items()
        check_question(question, expected)
        responses = {key: {"action": "accept", "content": expected.answer}}
        params |= {"inputResponses": responses, "requestState": asking["requestState"]}
    done = call.send("POST", body=request(1, "tools/call", params)).json()["result"]
    again = call.send("POST", body=request(1, "tools/call", params)).json()["result"]  # a lost response
    assert done["resultType"] == "complete" and not done.get("isError"), done
    return done, again


def latest_flow(cluster: Cluster, number: int, marker: str) -> dict[str, Any]:
    done, again = latest_rounds(cluster, number, TOOL, answers_for(number, marker))
    assert again["structuredContent"] == done["structuredContent"]
    return dict(done["structuredContent"])


def latest_wizard_flow(cluster: Cluster, number: int, marker: str) -> dict[str, Any]:
    done, again = latest_rounds(cluster, number, WIZARD, trip_for(number, marker))
    assert again["content"] == done["content"], again
    return recorded_trip(done, number, marker)


def legacy_flow(cluster: Cluster, number: int, marker: str) -> dict[str, Any]:
    result = legacy_rounds(cluster, number, TOOL, answers_for(number, marker))
    return dict(result["structuredContent"])


def legacy_wizard_flow(cluster: Cluster, number: int, marker: str) -> dict[str, Any]:
    return recorded_trip(legacy_rounds(cluster, number, WIZARD, trip_for(number, marker)), number, marker)


def legacy_rounds(cluster: Cluster, number: int, tool: str, rounds: list[Round]) -> dict[str, Any]:
    """A 2025-11-25 flow: a session, a call whose stream closes after each question, the answers posted
    and the stream resumed with Last-Event-ID, each on the other instance; the call's result."""
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
    stream = events(call.send("POST", body=request(1, "tools/call", {"name": tool, "arguments": {}})))
    for expected in rounds:
        question = stream[-1]
        assert question["data"]["method"] == "elicitation/create", stream
        check_question(question["data"], expected)
        reply = {
            "jsonrpc": "2.0",
            "id": question["data"]["id"],
            "result": {"action": "accept", "content": expected.answer},
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
    return dict(response["result"])


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
    "2026-07-28": ("database_cluster", latest_flow, latest_wizard_flow),
    "2025-11-25 DatabaseSessions": ("database_cluster", legacy_flow, legacy_wizard_flow),
    "2025-11-25 CacheSessions on Redis": ("cache_cluster", legacy_flow, legacy_wizard_flow),
}


@pytest.mark.parametrize("run", list(RUNS))
def test_flows_alternate_between_two_instances(run, request, capsys):
    fixture, drive, drive_wizard = RUNS[run]
    instances: Cluster = request.getfixturevalue(fixture)
    instances.statuses.clear()
    instances.served.clear()
    marker = uuid.uuid4().hex  # this run's flows, among the rows of the others on the same database

    def one(job: tuple[Callable[[Cluster, int, str], dict[str, Any]], int]) -> dict[str, Any] | BaseException:
        driver, number = job
        try:
            return driver(instances, number, marker)
        except Exception as failure:  # counted and shown below, not lost in the pool
            return failure

    # The wizard's flows spread among the form's, so both run at once from start to end.
    jobs = sorted(
        [(number / FLOWS, (drive, number)) for number in range(FLOWS)]
        + [(number / WIZARD_FLOWS, (drive_wizard, number)) for number in range(WIZARD_FLOWS)],
        key=lambda placed: placed[0],
    )
    started = time.monotonic()
    with ThreadPoolExecutor(THREADS) as pool:
        ran = dict(zip([job for _, job in jobs], pool.map(one, [job for _, job in jobs]), strict=True))
    elapsed = time.monotonic() - started
    outcomes = [ran[drive, number] for number in range(FLOWS)]
    trips = [ran[drive_wizard, number] for number in range(WIZARD_FLOWS)]
    completed = [outcome for outcome in outcomes if isinstance(outcome, dict)]
    failures = [outcome for outcome in outcomes + trips if not isinstance(outcome, dict)]
    trips_completed = [trip for trip in trips if isinstance(trip, dict)]
    stored = instances.submissions(marker)
    duplicates = sum(count - 1 for count in stored.values())
    requested = instances.travel_requests(marker)
    trip_duplicates = sum(len(passports) - 1 for passports in requested.values())
    with_passport = sorted(
        int(destination.rpartition(" ")[2]) for destination, (passport, *_) in requested.items() if passport
    )
    report = (
        f"scale-out {run}: {len(completed)}/{FLOWS} flows completed in {elapsed:.1f} s on {THREADS} threads; "
        f"{len(stored)} submissions stored, {duplicates} duplicates; "
        f"{WIZARD} wizard flows among them: {len(trips_completed)}/{WIZARD_FLOWS} completed, "
        f"{len(requested)} travel requests stored, {trip_duplicates} duplicates, "
        f"{len(with_passport)} with a passport; "
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
    # The wizard: one travel request per flow, the passport kept exactly on the trips abroad.
    assert set(requested) == {f"{marker} {number}" for number in range(WIZARD_FLOWS)}
    assert trip_duplicates == 0
    assert with_passport == [number for number in range(WIZARD_FLOWS) if abroad(number)]
    assert all(requested[f"{marker} {number}"] == [passport_of(number)] for number in with_passport)
    assert len({trip["travel_request"] for trip in trips_completed}) == WIZARD_FLOWS
    assert not [status for status in instances.statuses if status >= 500]
    assert set(instances.statuses) <= {200, 202}
    # Every flow sends an even number of requests, alternating, but a 2026-07-28 trip abroad (one more),
    # of which as many start on each instance: each instance served exactly half.
    first, second = (instances.served[url] for url in instances.urls)
    assert first == second > 0
