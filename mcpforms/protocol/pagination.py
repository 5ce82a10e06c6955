"""Cursor pagination of the list methods (spec §4.3).

The cursor names the last key of the page it ends, not an offset: a tool added or removed between two
pages shifts nothing. It is opaque to the client, and anything that does not decode is -32602.
"""

from __future__ import annotations

import base64
import binascii
from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, overload

from mcpforms.protocol.errors import invalid_params

S = TypeVar("S")
T = TypeVar("T")


def _encode(key: str) -> str:
    return base64.urlsafe_b64encode(key.encode()).decode()


def _decode(cursor: Any) -> str:
    if not isinstance(cursor, str):
        raise invalid_params("Invalid cursor")
    try:
        return base64.urlsafe_b64decode(cursor.encode("ascii")).decode()
    except (binascii.Error, UnicodeError, ValueError):
        raise invalid_params("Invalid cursor") from None


def _same(item: Any) -> Any:
    return item


@overload
def page(
    items: Sequence[T], *, key: Callable[[T], str], cursor: Any, size: int
) -> tuple[list[T], str | None]: ...


@overload
def page(
    items: Sequence[S],
    *,
    key: Callable[[S], str],
    cursor: Any,
    size: int,
    pick: Callable[[S], T | None],
    peek: Callable[[S], bool] | None = None,
) -> tuple[list[T], str | None]: ...


def page(
    items: Sequence[Any],
    *,
    key: Callable[[Any], str],
    cursor: Any,
    size: int,
    pick: Callable[[Any], Any] = _same,
    peek: Callable[[Any], bool] | None = None,
) -> tuple[list[Any], str | None]:
    """Return the page after ``cursor`` (None for the first) and the cursor of the next page, if any.

    ``items`` are sorted by key. ``pick`` turns an item into what the page shows, or None to pass over it
    (one the caller may not see, one that does not exist); it is asked only about this page's items.
    Whether a next page exists, ``peek`` tells of the items after it (by default, ``pick``).
    """
    # The page starts at the first key past the cursor's: found by bisection, not by a scan.
    index = 0 if cursor is None else bisect_right(items, _decode(cursor), key=key)
    chunk: list[Any] = []
    while index < len(items) and len(chunk) < size:
        picked = pick(items[index])
        if picked is not None:
            chunk.append(picked)
        index += 1
    listed = peek or (lambda item: pick(item) is not None)
    more = bool(chunk) and any(listed(items[later]) for later in range(index, len(items)))
    # The chunk ends with the item just before `index`: the next page starts past its key.
    return chunk, (_encode(key(items[index - 1])) if more else None)
