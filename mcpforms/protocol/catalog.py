"""A sorted, cached collection of tools (or prompts, resources…) fed statically and by dynamic sources.

Items added at import time never change; items from a source (admin-defined forms in the database) may. A
source may come with a cheap ``version()`` (a counter, the newest ``updated_at``…): its items are then read
again only when that version moves. A source without one is read every time it is consulted.

A source may name an item before building it: it returns a ``Deferred`` (the key, and how to build the
item) in its place. Listing sorts and pages by key alone, and an item is built the first time a page or a
lookup reaches it, so a thousand form tools cost no conversion until a client asks for them, and then only
the ones it asks for. A build may find there is no such item after all (it returns None): the key then
falls to the next layer that has it, or to nobody.

Looking one item up consults the sources in the order they were added and stops at the first that has
it: a call to a tool of the first source never pays for reading the version of a later one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable, Iterable, Sequence
from functools import partial
from typing import ClassVar, Generic, TypeVar

from mcpforms.protocol.context import RequestContext

T = TypeVar("T")
Version = Callable[[], Hashable]

logger = logging.getLogger(__name__)

_UNREAD = object()


class Deferred(Generic[T]):
    """An item known by its key before it is built: ``get()`` builds it on first use and keeps it.

    Pass ``build``, or subclass and override ``build()``. It returns None when there is no such item after
    all. A build that raises is not kept: the next ``get()`` tries again. Two threads may build the same
    item at once; a build makes the same item each time, so the second only repeats the work.
    """

    __slots__ = ("_build", "_done", "_item", "key")
    #: Whether what the slot knows holds for its item: the item exists (``build`` never returns None) and
    #: whoever ``visible_to`` admits may see it. A listing then counts the item without building it.
    certain: ClassVar[bool] = False

    def __init__(self, key: str, build: Callable[[], T | None] | None = None) -> None:
        self.key = key
        self._build = build
        self._item: T | None = None
        self._done = False

    @classmethod
    def of(cls, key: str, item: T) -> Deferred[T]:
        """An item already built."""
        made: Deferred[T] = Deferred(key)
        made._item, made._done = item, True
        return made

    def build(self) -> T | None:
        build = self._build
        # None: another thread built the item meanwhile (or a subclass forgot to override this method).
        return self._item if build is None else build()

    def visible_to(self, ctx: RequestContext) -> bool:
        """Whether ``ctx`` may see the item, as far as that is known before building it: a listing passes
        over what this says is hidden without building it. By default, as far as anyone knows, yes."""
        return True

    def get(self) -> T | None:
        if not self._done:
            self._item = self.build()
            self._done, self._build = True, None  # what the build needed may go now
        return self._item

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.key!r}{' built' if self._done else ''}>"


def _first(candidates: Sequence[T | Deferred[T]]) -> T | None:
    """The first of a key's candidates, in precedence order, that turns out to exist."""
    for candidate in candidates:
        item = candidate.get() if isinstance(candidate, Deferred) else candidate
        if item is not None:
            return item
    return None


def listed(slot: Deferred[T]) -> T | None:
    """The slot's item for a listing, or None when there is none or it cannot be built: a broken item is
    logged and left out, so it costs the listing that item rather than the whole page."""
    try:
        return slot.get()
    except Exception:
        logger.exception("%r cannot be listed", slot.key)
        return None


Source = Callable[[], Iterable[T | Deferred[T]]]


class _Feed(Generic[T]):
    """One source and what it returned for its last version."""

    def __init__(self, source: Source[T], version: Version | None, key: Callable[[T], str]) -> None:
        self._source = source
        self._version = version
        self._key = key
        self._seen: Hashable = _UNREAD
        self._items: dict[str, T | Deferred[T]] = {}
        self.generation = 0  # moves whenever the items were read again

    def items(self) -> dict[str, T | Deferred[T]]:
        version = _UNREAD if self._version is None else self._version()
        if version is _UNREAD or version != self._seen:
            self._items = {
                item.key if isinstance(item, Deferred) else self._key(item): item for item in self._source()
            }
            self._seen = version
            self.generation += 1
        return self._items

    @property
    def versioned(self) -> bool:
        return self._version is not None


class Catalog(Generic[T]):
    """Items keyed by name: static ones win over a source's, an earlier source over a later one, and
    listing is always sorted by key."""

    def __init__(self, key: Callable[[T], str], *, kind: str) -> None:
        self._key = key
        self._kind = kind
        self._static: dict[str, T] = {}
        self._feeds: list[_Feed[T]] = []
        # The sorted slots for the feeds' generations, and every built item for those slots.
        self._sorted: tuple[tuple[int, ...], tuple[Deferred[T], ...]] | None = None
        self._built: tuple[tuple[Deferred[T], ...], tuple[T, ...]] | None = None
        self._lock = threading.Lock()

    def add(self, item: T) -> T:
        key = self._key(item)
        with self._lock:
            if key in self._static:
                raise ValueError(f"A {self._kind} named {key!r} is already registered.")
            self._static[key] = item
            self._sorted = None
        return item

    def add_source(self, source: Source[T], *, version: Version | None = None) -> None:
        with self._lock:
            self._feeds.append(_Feed(source, version, self._key))
            self._sorted = None

    def __bool__(self) -> bool:
        return bool(self._static or self._feeds)

    def declared(self) -> tuple[T, ...]:
        """The items added one by one, without reading any source (which may need a database)."""
        with self._lock:
            return tuple(self._static.values())

    def slots(self) -> tuple[Deferred[T], ...]:
        """Every key, sorted (deterministic, spec §4.2), each with its item built on first use: what a
        listing pages through without building what it does not show."""
        with self._lock:
            layers = [feed.items() for feed in self._feeds]
            generations = tuple(feed.generation for feed in self._feeds)
            if self._sorted is not None and self._sorted[0] == generations:
                return self._sorted[1]
            # Precedence order: the static items, then each source in the order it was added.
            found: dict[str, list[T | Deferred[T]]] = {key: [item] for key, item in self._static.items()}
            for layer in layers:
                for key, item in layer.items():
                    found.setdefault(key, []).append(item)
            ordered = tuple(_slot(key, found[key]) for key in sorted(found))
            if all(feed.versioned for feed in self._feeds):
                self._sorted = (generations, ordered)
            return ordered

    def all(self) -> tuple[T, ...]:
        """Return every item, sorted by key, building whatever was not built yet."""
        slots = self.slots()
        built = self._built
        if built is not None and built[0] is slots:
            return built[1]
        items = tuple(item for slot in slots if (item := slot.get()) is not None)
        self._built = (slots, items)  # keeping `slots` alive keeps `is` from matching a newer tuple
        return items

    def get(self, key: str) -> T | None:
        if key in self._static:
            return self._static[key]
        for feed in list(self._feeds):
            with self._lock:
                found = feed.items().get(key)
            if found is not None:
                item = found.get() if isinstance(found, Deferred) else found
                if item is not None:
                    return item
        return None


def _slot(key: str, candidates: list[T | Deferred[T]]) -> Deferred[T]:
    head = candidates[0]
    if not isinstance(head, Deferred):
        return Deferred.of(key, head)  # a built item exists: it wins the key outright
    if len(candidates) == 1:
        return head
    return Deferred(key, partial(_first, tuple(candidates)))
