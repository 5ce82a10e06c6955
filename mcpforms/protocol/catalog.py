"""A sorted, cached collection of tools (or prompts, resources…) fed statically and by dynamic sources.

Tools registered at import time never change; tools from a source (admin-defined forms in the database)
do. A source may come with a cheap ``version()`` (a counter, the newest ``updated_at``…): the sorted list
and its wire entries are then rebuilt only when a version moves. A source without one is read every time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable
from typing import Generic, TypeVar

T = TypeVar("T")
Source = Callable[[], Iterable[T]]
Version = Callable[[], Hashable]

_UNVERSIONED = object()


class Catalog(Generic[T]):
    """Items keyed by name: static ones win over a source's, and listing is always sorted by key."""

    def __init__(self, key: Callable[[T], str], *, kind: str) -> None:
        self._key = key
        self._kind = kind
        self._static: dict[str, T] = {}
        self._sources: list[tuple[Source[T], Version | None]] = []
        self._cached: tuple[tuple[Hashable, ...], tuple[T, ...], dict[str, T]] | None = None
        self._lock = threading.Lock()

    def add(self, item: T) -> T:
        key = self._key(item)
        with self._lock:
            if key in self._static:
                raise ValueError(f"A {self._kind} named {key!r} is already registered.")
            self._static[key] = item
            self._cached = None
        return item

    def remove(self, key: str) -> None:
        with self._lock:
            self._static.pop(key, None)
            self._cached = None

    def add_source(self, source: Source[T], *, version: Version | None = None) -> None:
        with self._lock:
            self._sources.append((source, version))
            self._cached = None

    def changed(self) -> None:
        """Forget the cached list: call it when a source without ``version`` knows it changed."""
        self._cached = None

    def __bool__(self) -> bool:
        return bool(self._static or self._sources)

    def _snapshot(self) -> tuple[tuple[T, ...], dict[str, T]]:
        versions = tuple(_UNVERSIONED if version is None else version() for _, version in self._sources)
        cached = self._cached
        if cached is not None and cached[0] == versions and _UNVERSIONED not in versions:
            return cached[1], cached[2]
        by_key = dict(self._static)
        for source, _ in self._sources:
            for item in source():
                by_key.setdefault(self._key(item), item)
        ordered = tuple(by_key[key] for key in sorted(by_key))
        snapshot = (ordered, by_key)
        if _UNVERSIONED not in versions:
            self._cached = (versions, *snapshot)
        return snapshot

    def all(self) -> tuple[T, ...]:
        """Return every item, sorted by key (deterministic, spec §4.2)."""
        return self._snapshot()[0]

    def get(self, key: str) -> T | None:
        return self._snapshot()[1].get(key)
