"""A sorted, cached collection of tools (or prompts, resources…) fed statically and by dynamic sources.

Items added at import time never change; items from a source (admin-defined forms in the database) may. A
source may come with a cheap ``version()`` (a counter, the newest ``updated_at``…): its items are then read
again only when that version moves. A source without one is read every time it is consulted.

Looking one item up consults the sources in the order they were added and stops at the first that has
it: a call to a tool of the first source never pays for reading the version of a later one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable
from typing import Generic, TypeVar

T = TypeVar("T")
Source = Callable[[], Iterable[T]]
Version = Callable[[], Hashable]

_UNREAD = object()


class _Feed(Generic[T]):
    """One source and what it returned for its last version."""

    def __init__(self, source: Source[T], version: Version | None, key: Callable[[T], str]) -> None:
        self._source = source
        self._version = version
        self._key = key
        self._seen: Hashable = _UNREAD
        self._items: dict[str, T] = {}
        self.generation = 0  # moves whenever the items were read again

    def items(self) -> dict[str, T]:
        version = _UNREAD if self._version is None else self._version()
        if version is _UNREAD or version != self._seen:
            self._items = {self._key(item): item for item in self._source()}
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
        self._sorted: tuple[tuple[int, ...], tuple[T, ...]] | None = None
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

    def all(self) -> tuple[T, ...]:
        """Return every item, sorted by key (deterministic, spec §4.2)."""
        with self._lock:
            layers = [feed.items() for feed in self._feeds]
            generations = tuple(feed.generation for feed in self._feeds)
            cacheable = all(feed.versioned for feed in self._feeds)
            if cacheable and self._sorted is not None and self._sorted[0] == generations:
                return self._sorted[1]
            merged: dict[str, T] = {}
            for layer in reversed(layers):
                merged |= layer
            merged |= self._static
            ordered = tuple(merged[key] for key in sorted(merged))
            if cacheable:
                self._sorted = (generations, ordered)
            return ordered

    def get(self, key: str) -> T | None:
        if key in self._static:
            return self._static[key]
        with self._lock:
            for feed in self._feeds:
                item = feed.items().get(key)
                if item is not None:
                    return item
        return None
