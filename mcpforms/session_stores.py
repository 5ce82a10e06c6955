"""Session stores for the 2025 era that every worker shares: ``DatabaseSessions`` (the default) and
``CacheSessions``. Name one in ``MCPFORMS["SESSION_STORE"]``; ``mcpforms.protocol.era2025.sessions`` says
what a store does."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import time
from dataclasses import replace
from datetime import timedelta
from typing import Any, TypeVar

from django.core.cache import caches
from django.db import IntegrityError, transaction
from django.db.models import Count, Min, Model, QuerySet
from django.utils import timezone

from mcpforms.conf import conf
from mcpforms.models import Era2025Call, Era2025Session, StreamEvent, sweep
from mcpforms.protocol.era2025.sessions import Event, PendingCall, Session, Stream, Tally
from mcpforms.protocol.state import ANONYMOUS

Row = TypeVar("Row", bound=Model)


def _call_id(server_request_id: str) -> str:
    # The server's request ids are "<call id>-<n>" (mcpforms.protocol.era2025.shim).
    return server_request_id.rpartition("-")[0]


class DatabaseSessions:
    """Sessions, pending calls and their streams in the database: any worker serves any request."""

    def create(self, session: Session) -> None:
        sweep(Era2025Session.expired)  # many clients never DELETE their session
        Era2025Session.objects.create(
            id=session.id,
            version=session.version,
            capabilities=dict(session.capabilities),
            client_info=dict(session.client_info) if session.client_info is not None else None,
            principal=session.principal,
            server=session.server,
            address=session.address or "",
        )

    def get(self, session_id: str) -> Session | None:
        horizon = timezone.now() - timedelta(seconds=conf.SESSION_MAX_AGE)
        row = _first(Era2025Session.objects.filter(pk=session_id, created__gte=horizon))
        if row is None:
            return None
        return Session(
            id=row.id,
            version=row.version,
            capabilities=row.capabilities,
            client_info=row.client_info,
            principal=row.principal,
            server=row.server,
            address=row.address or None,
            log_level=row.log_level or None,
        )

    def adopt(self, session_id: str, principal: str) -> Session | None:
        if principal == ANONYMOUS:
            return None  # a session only ever passes from nobody to a user
        horizon = timezone.now() - timedelta(seconds=conf.SESSION_MAX_AGE)
        with transaction.atomic():
            # One conditional UPDATE: of users racing to adopt the session, the database lets one match.
            won = Era2025Session.objects.filter(
                pk=session_id, principal=ANONYMOUS, created__gte=horizon
            ).update(principal=principal, address="")
            if won:
                # Their streams go with them (StreamEvent cascades). An anonymous request already past
                # its session check may still write its call back; that row is unreachable all the same:
                # only the anonymous stream saw its ids, and the anonymous caller is told 404 from now on.
                Era2025Call.objects.filter(session_id=session_id).delete()
        session = self.get(session_id)
        return session if session is not None and session.principal == principal else None

    def count_sessions(self, *, principal: str, address: str | None = None) -> Tally:
        horizon = timezone.now() - timedelta(seconds=conf.SESSION_MAX_AGE)
        rows = Era2025Session.objects.filter(principal=principal, created__gte=horizon)
        if address is not None:
            rows = rows.filter(address=address)
        return _tally(rows.aggregate(count=Count("pk"), oldest=Min("created")))

    def count_calls(self, session_id: str) -> Tally:
        horizon = timezone.now() - timedelta(seconds=conf.STATE_MAX_AGE)
        rows = Era2025Call.objects.filter(session_id=session_id, created__gte=horizon)
        return _tally(rows.aggregate(count=Count("pk"), oldest=Min("created")))

    def end(self, session_id: str) -> bool:
        # Three DELETEs, innermost rows first, rather than the ORM's cascade, which reads every row it
        # would delete back first: none of these models has a signal or another row pointing at it.
        with transaction.atomic():
            StreamEvent.objects.filter(call__session_id=session_id)._raw_delete(StreamEvent.objects.db)
            Era2025Call.objects.filter(session_id=session_id)._raw_delete(Era2025Call.objects.db)
            deleted = Era2025Session.objects.filter(pk=session_id)._raw_delete(Era2025Session.objects.db)
        return bool(deleted)

    def set_log_level(self, session_id: str, level: str) -> None:
        Era2025Session.objects.filter(pk=session_id).update(log_level=level)

    def save_call(self, call: PendingCall, events: tuple[Event, ...] = ()) -> None:
        fields = {
            "session_id": call.session,
            "request_id": call.request_id,
            "method": call.method,
            "params": dict(call.params),
            "request_state": call.request_state,
            "asked": dict(call.asked),
            "answers": dict(call.answers),
            "events": call.events,
            "done": call.done,
            "pages": list(call.pages),
            "waiting": call.waiting,
        }
        rows = [
            StreamEvent(
                call_id=call.id,
                seq=int(event.id.rpartition(":")[2]),
                data=dict(event.data) if event.data is not None else None,
                retry_ms=event.retry_ms,
            )
            for event in events
        ]
        with transaction.atomic():
            # Only the request that makes the call (a new id) writes the first event of its stream
            # (era2025.shim): that save is an INSERT alone. Any other is one UPDATE, and an INSERT when it
            # matched nothing (the call expired meanwhile), rather than update_or_create's locking read and
            # savepoints.
            created = any(row.seq == 1 for row in rows)
            if not created:
                created = not Era2025Call.objects.filter(pk=call.id).update(**fields)
            if created:
                Era2025Call.objects.create(id=call.id, **fields)
            # Two workers may write the same events at once (both saw the page done): keep one copy.
            StreamEvent.objects.bulk_create(rows, ignore_conflicts=True)
        if created:
            sweep(Era2025Call.expired)

    def answer(self, session_id: str, request_id: str, result: Any) -> PendingCall | None:
        try:
            with transaction.atomic():
                row = _first(
                    Era2025Call.objects.select_for_update().filter(
                        pk=_call_id(request_id), session_id=session_id, done=False
                    )
                )
                if row is None:
                    return None
                key = row.asked.get(request_id)
                if key is None or key in row.answers:
                    return None  # not asked in this round, or answered already: a retry of the same POST
                row.answers = {**row.answers, key: result}
                row.save(update_fields=["answers"])
                call = _pending(row)
        except IntegrityError:
            return None
        return call if call.complete else None

    def events_after(self, call_id: str, session_id: str, seen: int) -> Stream | None:
        # One query when the stream has something new (each event brings its call along, as the same
        # snapshot of both), the call alone when it has not.
        found = list(
            StreamEvent.objects.filter(
                call_id=call_id, call__session_id=session_id, seq__gt=seen
            ).select_related("call")
        )
        row = (
            found[0].call if found else _first(Era2025Call.objects.filter(pk=call_id, session_id=session_id))
        )
        if row is None:
            return None
        events = [
            Event(id=f"{call_id}:{event.seq}", data=event.data, retry_ms=event.retry_ms) for event in found
        ]
        return _pending(row), events


def _first(rows: QuerySet[Row]) -> Row | None:
    """The row of a query by primary key, or None: ``first()`` would also order the one row by its key,
    which is a needless part of the work of building the query, on every request of a session."""
    return next(iter(rows[:1]), None)


def _tally(found: dict[str, Any]) -> Tally:
    oldest = found["oldest"]
    return Tally(found["count"], oldest.timestamp() if oldest is not None else None)


def _pending(row: Era2025Call) -> PendingCall:
    return PendingCall(
        id=row.id,
        session=row.session_id,
        request_id=row.request_id,
        method=row.method,
        params=row.params,
        request_state=row.request_state,
        asked=row.asked,
        answers=row.answers,
        events=row.events,
        done=row.done,
        pages=tuple(row.pages),
        waiting=row.waiting,
    )


class CacheSessions:
    """Sessions and pending calls in Django's ``default`` cache: for a deployment that runs Redis or
    Memcached there and would rather keep this traffic out of the database. A session expires after
    ``SESSION_MAX_AGE`` seconds, a pending call after ``STATE_MAX_AGE``. Only a cache every worker shares
    will do (not ``LocMemCache``).

    A cache cannot count its keys, so the budgets read counters: for each scope (a principal, an
    anonymous address, a session's calls), one per ``BUCKETS``-th of the lifetime, incremented when a
    session (call) is made and decremented when a session ends. The live ones are the sum over the
    buckets of one lifetime: the oldest bucket may still count a few that just expired, so a budget
    frees up to a ``BUCKETS``-th of a lifetime late, never early. ``incr`` is atomic on every shared
    cache, so workers never lose a count.

    Adopting a session (a client that signed in on the session it opened anonymously) is an ``add`` of
    an adoption key naming the user: the first ``add`` wins, and that key, read with the session in one
    ``get_many``, is what says whose the session is, so a worker that writes back the session it read
    before (``set_log_level``) cannot make it anonymous again. A cache cannot list a session's calls to
    delete them: the calls of an adopted session live under keys of their own (and count on a counter
    of their own), so the ones it held as nobody's are no longer found, and expire."""

    BUCKETS = 24

    @property
    def _cache(self) -> Any:
        return caches["default"]

    def _key(self, kind: str, *ids: str) -> str:
        # The ids come from the client too (Mcp-Session-Id, Last-Event-ID, the id of an answer), and
        # memcached refuses a key with a space or a control character or longer than 250 bytes (Django's
        # memcache_key_warnings). Their digest is a key of 64 hex digits whatever they hold, and an id the
        # server never minted finds nothing: Session not found, as an unknown one. JSON keeps the ids
        # apart whatever characters they hold, and escapes what is no UTF-8.
        digest = hashlib.sha256(json.dumps(ids).encode()).hexdigest()
        return f"mcpforms:{kind}:{digest}"

    def create(self, session: Session) -> None:
        opened = time.time()
        # Stored with when it was opened: ending it takes it off the counter it was counted on.
        self._cache.set(self._key("session", session.id), (session, opened), timeout=conf.SESSION_MAX_AGE)
        for scope in self._session_scopes(session):
            self._count(scope, conf.SESSION_MAX_AGE, opened, by=1)

    def _opened(self, session_id: str) -> tuple[Session, float | None] | None:
        key, adoption = self._key("session", session_id), self._key("adopted", session_id)
        found = self._cache.get_many([key, adoption])
        stored = found.get(key)
        if isinstance(stored, Session):  # stored before sessions were counted
            session, opened = stored, None
        elif isinstance(stored, tuple) and len(stored) == 2 and isinstance(stored[0], Session):
            session, opened = stored
        else:
            return None
        if isinstance(found.get(adoption), str):
            session = replace(session, principal=found[adoption], address=None)
        return session, opened

    @staticmethod
    def _left(opened: float | None) -> int:
        """The seconds the session opened at ``opened`` has left: what a rewrite of it keeps."""
        if opened is None:
            return conf.SESSION_MAX_AGE
        return math.ceil(conf.SESSION_MAX_AGE - (time.time() - opened))

    def get(self, session_id: str) -> Session | None:
        found = self._opened(session_id)
        return found[0] if found is not None else None

    def end(self, session_id: str) -> bool:
        found = self._opened(session_id)
        # Only the request whose delete removed it takes it off its counters, however many end it at once.
        if not self._cache.delete(self._key("session", session_id)):
            return False
        if found is not None and found[1] is not None:
            for scope in self._session_scopes(found[0]):
                self._count(scope, conf.SESSION_MAX_AGE, found[1], by=-1)
        return True

    def set_log_level(self, session_id: str, level: str) -> None:
        found = self._opened(session_id)
        if found is None:
            return
        session, opened = found
        # The session keeps its end: the rest of its lifetime, not a new one.
        left = self._left(opened)
        if left > 0:
            self._cache.set(
                self._key("session", session_id), (replace(session, log_level=level), opened), timeout=left
            )

    def adopt(self, session_id: str, principal: str) -> Session | None:
        found = self._opened(session_id)
        if found is None or principal == ANONYMOUS:
            return None
        session, opened = found
        if session.principal != ANONYMOUS:
            return session if session.principal == principal else None
        left = self._left(opened)
        # add() is atomic on every shared cache: of users racing to adopt the session, one adds the key.
        if left <= 0 or not self._cache.add(self._key("adopted", session_id), principal, timeout=left):
            again = self._opened(session_id)
            return again[0] if again is not None and again[0].principal == principal else None
        adopted = replace(session, principal=principal, address=None)
        self._cache.set(self._key("session", session_id), (adopted, opened), timeout=left)
        if opened is not None:
            # Counted where it was made: taking it off nobody's counters and onto the user's keeps what
            # end() takes off right.
            for scope in self._session_scopes(session):
                self._count(scope, conf.SESSION_MAX_AGE, opened, by=-1)
            for scope in self._session_scopes(adopted):
                self._count(scope, conf.SESSION_MAX_AGE, opened, by=1)
        return adopted

    def _adopted(self, session_id: str) -> bool:
        return self._cache.get(self._key("adopted", session_id)) is not None

    @staticmethod
    def _call_kind(adopted: bool) -> str:
        # The calls of an adopted session are kept apart from the ones it held as nobody's (class doc).
        return "adopted-call" if adopted else "call"

    @staticmethod
    def _calls_scope(session_id: str, adopted: bool) -> tuple[str, ...]:
        return ("calls", session_id, "adopted") if adopted else ("calls", session_id)

    def _call(self, call_id: str, session_id: str) -> PendingCall | None:
        """The session's call ``call_id``: of the ones made since its adoption, once it is adopted."""
        plain, since_adoption = self._key("call", call_id), self._key("adopted-call", call_id)
        adoption = self._key("adopted", session_id)
        found = self._cache.get_many([plain, since_adoption, adoption])
        call = found.get(since_adoption if adoption in found else plain)
        return call if isinstance(call, PendingCall) and call.session == session_id else None

    def count_sessions(self, *, principal: str, address: str | None = None) -> Tally:
        scope = ("address", principal, address) if address is not None else ("principal", principal)
        return self._tally(scope, conf.SESSION_MAX_AGE)

    def count_calls(self, session_id: str) -> Tally:
        return self._tally(self._calls_scope(session_id, self._adopted(session_id)), conf.STATE_MAX_AGE)

    @staticmethod
    def _session_scopes(session: Session) -> list[tuple[str, ...]]:
        scopes: list[tuple[str, ...]] = [("principal", session.principal)]
        if session.address is not None:
            scopes.append(("address", session.principal, session.address))
        return scopes

    def _bucket_seconds(self, lifetime: int) -> int:
        return max(1, math.ceil(lifetime / self.BUCKETS))

    def _count(self, scope: tuple[str, ...], lifetime: int, at: float, *, by: int) -> None:
        size = self._bucket_seconds(lifetime)
        key = self._key("count", *scope, str(int(at // size)))
        # A bucket outlives every session counted in it: it was made at most one bucket before them.
        self._cache.add(key, 0, timeout=lifetime + size)
        # ValueError: the bucket expired in between, and what it counted has expired with it.
        with contextlib.suppress(ValueError):
            self._cache.incr(key, by)

    def _tally(self, scope: tuple[str, ...], lifetime: int) -> Tally:
        size, now = self._bucket_seconds(lifetime), time.time()
        buckets = range(int((now - lifetime) // size), int(now // size) + 1)
        keys = {bucket: self._key("count", *scope, str(bucket)) for bucket in buckets}
        found = self._cache.get_many(list(keys.values()))
        counts = {bucket: max(0, int(found.get(key, 0))) for bucket, key in keys.items()}
        # The oldest bucket's end: the latest its sessions were made, so the wait it implies is not short.
        oldest = next((min((bucket + 1) * size, now) for bucket, count in counts.items() if count), None)
        return Tally(sum(counts.values()), float(oldest) if oldest is not None else None)

    def save_call(self, call: PendingCall, events: tuple[Event, ...] = ()) -> None:
        timeout = conf.STATE_MAX_AGE
        adopted = self._adopted(call.session)
        key = self._key(self._call_kind(adopted), call.id)
        # add() tells the one worker that stores a call first, which counts it for its session's budget.
        if self._cache.add(key, call, timeout=timeout):
            self._count(self._calls_scope(call.session, adopted), timeout, time.time(), by=1)
        else:
            self._cache.set(key, call, timeout=timeout)
        for event in events:
            self._cache.set(self._key("event", event.id), event, timeout=timeout)

    def answer(self, session_id: str, request_id: str, result: Any) -> PendingCall | None:
        call_id = _call_id(request_id)
        call = self._call(call_id, session_id)
        if call is None or call.done:
            return None
        key = call.asked.get(request_id)
        # add() is atomic on every shared cache backend: one answer per request, whoever posts it twice.
        if key is None or not self._cache.add(
            self._key("answer", request_id), result, timeout=conf.STATE_MAX_AGE
        ):
            return None
        answers = {
            asked_key: self._cache.get(self._key("answer", asked_id))
            for asked_id, asked_key in call.asked.items()
        }
        if any(value is None for value in answers.values()):
            return None
        # Every answer is in: one poster claims the round, however many completed it at once.
        if not self._cache.add(
            self._key("round", call.id, str(call.events)), True, timeout=conf.STATE_MAX_AGE
        ):
            return None
        return replace(call, answers=answers)

    def events_after(self, call_id: str, session_id: str, seen: int) -> Stream | None:
        call = self._call(call_id, session_id)
        if call is None:
            return None
        keys = [self._key("event", f"{call_id}:{seq}") for seq in range(seen + 1, call.events + 1)]
        found = self._cache.get_many(keys)
        return call, [found[key] for key in keys if key in found]
