"""Faults: the demo behind two gunicorn instances (2 sync workers each) on a PostgreSQL cluster of the
test's own, and for the 2025 era's ``CacheSessions`` a Redis of its own, while things break.

- A worker killed with SIGKILL inside a handler, after its writes and before its commit: the client's
  retry of the final round on the other instance completes exactly once; the killed attempt leaves
  nothing behind.
- PostgreSQL stopped and started again under load: requests in the outage get 503 with a JSON-RPC error
  and Retry-After, never -32603 or a 500; nothing is half-written; service resumes by itself.
- Redis restarted (losing every session) while 2025-era flows wait for their users: a request during the
  outage gets 503; afterwards a lost session is a 404, the client opens a new one, and no flow completes
  twice.

Each prints its counts. The servers the tests restart are their own (tests/e2e/services.py): the
machine's PostgreSQL and Redis serve other test runs at the same time.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
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
from tests.e2e.deployment import Deployment, deployment
from tests.e2e.services import Cluster, postgres_bin, private_postgres, private_redis

pytestmark = pytest.mark.skipif(
    postgres_bin() is None, reason="PostgreSQL's server programs are not installed"
)

# The server processes' tool (tests/e2e/fault_urls.py), named here: importing that module would register
# it, and connect its counter to tool_completed, in the test process too.
TOOL = "held_write"
LATEST, LEGACY = "2026-07-28", "2025-11-25"
CAPABILITIES: dict[str, Any] = {"elicitation": {"form": {}}}
UNAVAILABLE = -32010
PATIENCE = 30.0  # seconds: only a server that never gets there takes this long
# Persistent connections, as production runs: a restart of PostgreSQL breaks the ones workers hold.
SETTINGS = """
ROOT_URLCONF = "tests.e2e.fault_urls"
FAULT_DIRECTORY = {directory!r}
DATABASES["default"]["CONN_MAX_AGE"] = 600
"""
CACHE_SESSIONS = """
CACHES = {{"default": {{"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": {location!r}}}}}
MCPFORMS = {{**MCPFORMS, "SESSION_STORE": "mcpforms.session_stores.CacheSessions"}}
"""


@dataclass
class Pair:
    """Two gunicorn instances of one deployment, and what was sent to them."""

    deployment: Deployment
    urls: tuple[str, str]
    token: str
    directory: Path
    http: httpx2.Client = field(default_factory=lambda: httpx2.Client(timeout=60))
    statuses: Counter[int] = field(default_factory=Counter)
    counting: threading.Lock = field(default_factory=threading.Lock)

    def headers(self, **extra: str) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {self.token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **extra,
        }

    def send(
        self, url: str, method: str = "POST", *, body: Any = None, headers: dict[str, str]
    ) -> httpx2.Response:
        content = None if body is None else json.dumps(body)
        response = self.http.request(method, url, content=content, headers=headers)
        with self.counting:
            self.statuses[response.status_code] += 1
        return response

    def rows(self, marker: str) -> dict[str, int]:
        """The held tool's rows per note, for the notes starting with ``marker``."""
        found = self.deployment.rows(
            "SELECT data->>'note', count(*) FROM mcpforms_submission "
            "WHERE tool_name = %s AND data->>'note' LIKE %s GROUP BY 1",
            TOOL,
            f"{marker}%",
        )
        return dict(found)

    def completions(self, marker: str) -> Counter[str]:
        """``tool_completed`` signals per note, for the notes starting with ``marker``."""
        log = self.directory / "completed"
        lines = log.read_text().splitlines() if log.exists() else []
        return Counter(note for note, _ in (line.split("\t") for line in lines) if note.startswith(marker))

    def open_transactions(self) -> int:
        """Sessions of the servers holding a transaction open (a handler between its writes and commit)."""
        ((count,),) = self.deployment.rows(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND state LIKE 'idle in transaction%%'",
            self.deployment.database,
        )
        return int(count)


def until(condition: Any, what: str, timeout: float = PATIENCE) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


def jsonrpc(message_id: int | str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": message_id, "method": method, "params": params}


def call_params(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"name": TOOL, "arguments": arguments, "_meta": wire.meta(CAPABILITIES)}


CALL_HEADERS = {"MCP-Protocol-Version": LATEST, "Mcp-Method": "tools/call", "Mcp-Name": TOOL}


def events(response: httpx2.Response) -> list[dict[str, Any]]:
    """The SSE events of a 2025-era stream: each with its id and its JSON data, if any."""
    assert response.headers["content-type"].startswith("text/event-stream"), response.text
    parsed = []
    for block in response.text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "id" in fields:
            data = json.loads(fields["data"]) if fields.get("data") else None
            parsed.append({"id": fields["id"], "data": data})
    return parsed


def assert_retry_later(response: httpx2.Response, service: str) -> None:
    """What a request gets while a service is out of reach: a 503 a client knows to retry."""
    assert response.status_code == 503, response.text
    assert int(response.headers["retry-after"]) >= 1
    error = response.json()["error"]
    assert error == {"code": UNAVAILABLE, "message": f"The {service} is unavailable; retry shortly"}


@contextmanager
def pair(directory: Path, database: str, *, port: int, extra: str = "") -> Iterator[Pair]:
    settings = SETTINGS.format(directory=str(directory)) + extra
    with (
        deployment(directory, database, settings=settings, port=port) as made,
        made.serving("gunicorn", name="a") as first,
        made.serving("gunicorn", name="b") as second,
    ):
        token = made.manage("mcpforms_token", "create", "staff", "--quiet").strip()
        made_pair = Pair(made, (first, second), token, directory)
        try:
            yield made_pair
        finally:
            made_pair.http.close()


@pytest.fixture(scope="module")
def postgres() -> Iterator[Cluster]:
    with private_postgres() as cluster:
        yield cluster


@pytest.fixture(scope="module")
def database_pair(tmp_path_factory: pytest.TempPathFactory, postgres: Cluster) -> Iterator[Pair]:
    with pair(tmp_path_factory.mktemp("faults-db"), "mcpforms_faults_db", port=postgres.port) as made:
        yield made


def report(capsys: pytest.CaptureFixture[str], line: str) -> None:
    with capsys.disabled():
        print(f"\n{line}")


# 1. A worker killed inside a handler --------------------------------------------------------------------


def test_a_worker_killed_before_its_commit_leaves_nothing_and_the_retry_completes_once(database_pair, capsys):
    cluster = database_pair
    first, second = cluster.urls
    marker = f"killed-{uuid.uuid4().hex[:8]}"
    headers = cluster.headers(**CALL_HEADERS)
    started = time.monotonic()
    asking = cluster.send(first, body=jsonrpc(1, "tools/call", call_params({})), headers=headers).json()
    assert asking["result"]["resultType"] == "input_required", asking
    final = call_params({}) | {
        "inputResponses": {TOOL: {"action": "accept", "content": {"note": marker}}},
        "requestState": asking["result"]["requestState"],
    }
    records_before = cluster.deployment.rows("SELECT count(*) FROM mcpforms_completedflow")[0][0]
    hold = cluster.directory / "hold"
    hold.touch()
    lost: list[BaseException] = []

    def final_round_on_the_first_instance() -> None:
        try:
            response = cluster.send(first, body=jsonrpc(1, "tools/call", final), headers=headers)
            lost.append(AssertionError(f"the killed worker answered: {response.status_code}"))
        except httpx2.HTTPError as error:  # the connection dies with the worker: no response
            lost.append(error)

    attempt = threading.Thread(target=final_round_on_the_first_instance)
    attempt.start()
    try:
        until(lambda: list(cluster.directory.glob("holding-*")), "the handler to hold its worker")
        (holding,) = cluster.directory.glob("holding-*")
        worker = int(holding.name.removeprefix("holding-"))
        # Written, not committed: invisible from outside, in a transaction left open.
        assert cluster.rows(marker) == {}
        assert cluster.open_transactions() == 1
        os.kill(worker, signal.SIGKILL)
        attempt.join(PATIENCE)
        assert not attempt.is_alive()
    finally:
        hold.unlink(missing_ok=True)
        holding_files = list(cluster.directory.glob("holding-*"))
        for leftover in holding_files:
            leftover.unlink()
    (error,) = lost
    assert isinstance(error, httpx2.HTTPError), error
    # PostgreSQL sees its client gone and rolls the transaction back: nothing of the attempt remains.
    until(lambda: cluster.open_transactions() == 0, "the killed attempt's transaction to end")
    assert cluster.rows(marker) == {}
    assert cluster.completions(marker) == Counter()
    assert cluster.deployment.rows("SELECT count(*) FROM mcpforms_completedflow")[0][0] == records_before

    retried = cluster.send(second, body=jsonrpc(1, "tools/call", final), headers=headers).json()["result"]
    again = cluster.send(first, body=jsonrpc(1, "tools/call", final), headers=headers).json()["result"]
    elapsed = time.monotonic() - started
    rows, signals = cluster.rows(marker), cluster.completions(marker)
    report(
        capsys,
        f"faults SIGKILL: worker {worker} killed inside the handler; 4 requests (1 ask, 1 killed final "
        f"round, 2 retries) in {elapsed:.1f} s; {sum(rows.values())} row, {signals[marker]} tool_completed "
        f"signal, {sum(rows.values()) - len(rows)} duplicates",
    )
    assert retried["resultType"] == "complete" and not retried.get("isError"), retried
    assert retried["structuredContent"]["note"] == marker
    assert retried["structuredContent"]["pid"] != worker
    assert again["structuredContent"] == retried["structuredContent"]  # the recorded outcome
    assert rows == {marker: 1}
    assert signals == Counter({marker: 1})
    (pid,) = cluster.deployment.rows(
        "SELECT data->>'pid' FROM mcpforms_submission WHERE data->>'note' = %s", marker
    )[0]
    assert int(pid) == retried["structuredContent"]["pid"]
    assert records_before + 1 == cluster.deployment.rows("SELECT count(*) FROM mcpforms_completedflow")[0][0]


# 2. PostgreSQL stopped and started under load ------------------------------------------------------------

THREADS = 4
OUTAGE = 2.0  # seconds PostgreSQL stays down
MAX_REQUESTS = 400


@dataclass
class Load:
    """Two-round flows on a few threads, each request to the other instance than the one before; a 503
    is retried after its Retry-After, as a client would."""

    cluster: Pair
    marker: str
    stop: threading.Event = field(default_factory=threading.Event)
    completed: list[tuple[str, float]] = field(default_factory=list)
    unavailable: int = 0
    sent: int = 0
    wrong: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def send(self, url: str, body: dict[str, Any]) -> dict[str, Any]:
        headers = self.cluster.headers(**CALL_HEADERS)
        while True:
            with self.lock:
                self.sent += 1
                assert self.sent <= MAX_REQUESTS, "the load ran past its bound"
            response = self.cluster.send(url, body=body, headers=headers)
            if response.status_code != 503:
                answer: dict[str, Any] = response.json()
                if response.status_code != 200 or "error" in answer:
                    self.wrong.append(f"{response.status_code} {response.text[:300]}")
                return answer
            try:
                assert_retry_later(response, "database")
            except AssertionError as error:
                self.wrong.append(str(error))
            with self.lock:
                self.unavailable += 1
            time.sleep(int(response.headers.get("retry-after", "1")))

    def flows(self, thread: int) -> None:
        turns = itertools.cycle(self.cluster.urls[thread % 2 :] + self.cluster.urls[: thread % 2])
        for number in itertools.count():
            if self.stop.is_set():
                return
            note = f"{self.marker} {thread}-{number}"
            asking = self.send(next(turns), jsonrpc(1, "tools/call", call_params({})))
            if "result" not in asking:
                return
            final = call_params({}) | {
                "inputResponses": {TOOL: {"action": "accept", "content": {"note": note}}},
                "requestState": asking["result"]["requestState"],
            }
            done = self.send(next(turns), jsonrpc(1, "tools/call", final))
            if "result" not in done or done["result"].get("structuredContent", {}).get("note") != note:
                self.wrong.append(f"flow {note} ended with {done}")
                return
            with self.lock:
                self.completed.append((note, time.monotonic()))


def test_postgresql_restarted_under_load_answers_503_then_resumes(database_pair, postgres, capsys):
    cluster = database_pair
    load = Load(cluster, f"outage-{uuid.uuid4().hex[:8]}")
    cluster.statuses.clear()
    started = time.monotonic()
    with ThreadPoolExecutor(THREADS) as pool:
        running = [pool.submit(load.flows, thread) for thread in range(THREADS)]
        try:
            until(lambda: len(load.completed) >= 8, "flows to complete before the outage")
            postgres.stop()
            down_at = time.monotonic()
            time.sleep(OUTAGE)
        finally:
            if not postgres.running():
                postgres.start()  # whatever happened, the cluster is up again
        up_at = time.monotonic()
        try:
            until(
                lambda: sum(at > up_at for _, at in load.completed) >= 8 or bool(load.wrong),
                "flows to complete after the outage",
            )
        finally:
            load.stop.set()
        for future in running:
            future.result(timeout=PATIENCE)
    elapsed = time.monotonic() - started
    rows = cluster.rows(load.marker)
    notes = {note for note, _ in load.completed}
    after = sum(at > up_at for _, at in load.completed)
    duplicates = sum(count - 1 for count in rows.values())
    report(
        capsys,
        f"faults PostgreSQL restart: {load.sent} requests in {elapsed:.1f} s on {THREADS} threads, "
        f"PostgreSQL down {up_at - down_at:.1f} s; {load.unavailable} answered 503 and retried; "
        f"{len(notes)} flows completed ({after} after the restart); {sum(rows.values())} rows, "
        f"{duplicates} duplicates, {len(set(rows) - notes)} half-written; "
        f"HTTP statuses {dict(sorted(cluster.statuses.items()))}",
    )
    assert load.wrong == []
    assert load.unavailable > 0, "the outage was not seen: the test proved nothing"
    assert set(cluster.statuses) <= {200, 503}
    assert rows == dict.fromkeys(notes, 1)  # every completed flow once, nothing of any other
    assert after >= 8


# 3. Redis restarted under 2025-era sessions ------------------------------------------------------------

WAITING = 4  # flows whose users are still answering when Redis restarts
DONE_BEFORE = 2


@dataclass
class Era2025Client:
    """A 2025-11-25 client of the pair, each request to the other instance than the one before."""

    cluster: Pair
    turns: Iterator[str]
    session: str = ""

    def send(self, method: str = "POST", *, body: Any = None, **extra: str) -> httpx2.Response:
        headers = self.cluster.headers(**extra)
        if self.session:
            headers |= {"Mcp-Session-Id": self.session, "MCP-Protocol-Version": LEGACY}
        return self.cluster.send(next(self.turns), method, body=body, headers=headers)

    def open(self) -> None:
        hello = {
            "protocolVersion": LEGACY,
            "capabilities": CAPABILITIES,
            "clientInfo": {"name": "faults", "version": "1.0"},
        }
        self.session = ""
        opened = self.send(body=jsonrpc(0, "initialize", hello))
        assert opened.status_code == 200, opened.text
        assert "mcp-session-id" in opened.headers, opened.text
        self.session = opened.headers["mcp-session-id"]
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert self.send(body=initialized).status_code == 202

    def ask(self) -> dict[str, Any]:
        """Call the tool; return its question (the stream's last event)."""
        stream = events(self.send(body=jsonrpc(1, "tools/call", {"name": TOOL, "arguments": {}})))
        question = stream[-1]
        assert question["data"]["method"] == "elicitation/create", stream
        return question

    def answer(self, question: dict[str, Any], note: str) -> httpx2.Response:
        reply = {
            "jsonrpc": "2.0",
            "id": question["data"]["id"],
            "result": {"action": "accept", "content": {"note": note}},
        }
        return self.send(body=reply)

    def result(self, question: dict[str, Any]) -> dict[str, Any]:
        stream = events(self.send("GET", **{"Last-Event-ID": question["id"]}))
        (response,) = [event["data"] for event in stream if event["data"] and event["data"].get("id") == 1]
        result: dict[str, Any] = response["result"]
        return result


@pytest.fixture(scope="module")
def cache_pair(tmp_path_factory: pytest.TempPathFactory, postgres: Cluster) -> Iterator[tuple[Pair, Any]]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    directory = tmp_path_factory.mktemp("faults-cache")
    with private_redis(directory) as redis:
        extra = CACHE_SESSIONS.format(location=f"redis://127.0.0.1:{redis.port}")
        with pair(directory, "mcpforms_faults_cache", port=postgres.port, extra=extra) as made:
            yield made, redis


def test_redis_restarted_under_2025_sessions_loses_them_cleanly(cache_pair, capsys):
    cluster, redis = cache_pair
    cluster.statuses.clear()
    marker = f"redis-{uuid.uuid4().hex[:8]}"
    started = time.monotonic()
    clients = [
        Era2025Client(cluster, itertools.cycle(cluster.urls[n % 2 :] + cluster.urls[: n % 2]))
        for n in range(DONE_BEFORE + WAITING)
    ]
    for client in clients:
        client.open()
    questions = [client.ask() for client in clients]
    for number, (client, question) in enumerate(zip(clients[:DONE_BEFORE], questions, strict=False)):
        assert client.answer(question, f"{marker} {number}").status_code == 202
        assert client.result(question)["structuredContent"]["note"] == f"{marker} {number}"

    waiting = list(enumerate(zip(clients, questions, strict=True)))[DONE_BEFORE:]
    unavailable = 0
    try:
        redis.stop()
        # In the outage: the user's answer, and a new client's initialize, each get a 503 to retry.
        number, (client, question) = waiting[0]
        assert_retry_later(client.answer(question, f"{marker} {number}"), "cache")
        newcomer = Era2025Client(cluster, itertools.cycle(cluster.urls))
        hello = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "new", "version": "1"}}
        assert_retry_later(newcomer.send(body=jsonrpc(0, "initialize", hello)), "cache")
        unavailable += 2
    finally:
        if redis.process is None:
            redis.start()

    lost = reopened = 0
    for number, (client, question) in waiting:
        note = f"{marker} {number}"
        answered = client.answer(question, note)
        while answered.status_code == 503:  # the cache client's pool reconnecting
            unavailable += 1
            time.sleep(int(answered.headers["retry-after"]))
            answered = client.answer(question, note)
        # The session went with Redis: 404, and the client starts over in a new one (2025-11-25 §
        # Session Management).
        assert answered.status_code == 404, answered.text
        lost += 1
        client.open()
        reopened += 1
        asked = client.ask()
        assert client.answer(asked, note).status_code == 202
        assert client.result(asked)["structuredContent"]["note"] == note
    elapsed = time.monotonic() - started
    rows, signals = cluster.rows(marker), cluster.completions(marker)
    expected = {f"{marker} {number}" for number in range(DONE_BEFORE + WAITING)}
    report(
        capsys,
        f"faults Redis restart: {sum(cluster.statuses.values())} requests in {elapsed:.1f} s; "
        f"{DONE_BEFORE} flows done before, {WAITING} waiting; {unavailable} answered 503 in the outage; "
        f"{lost} sessions lost (404), {reopened} reopened and completed; {sum(rows.values())} rows, "
        f"{sum(signals.values())} tool_completed signals, {sum(rows.values()) - len(rows)} duplicates; "
        f"HTTP statuses {dict(sorted(cluster.statuses.items()))}",
    )
    assert unavailable >= 2
    assert rows == dict.fromkeys(expected, 1)
    assert signals == Counter(dict.fromkeys(expected, 1))
    assert set(cluster.statuses) <= {200, 202, 404, 503}
