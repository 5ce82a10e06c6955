"""Cursor pagination of the list methods (spec §4.3).

The cursor names the last key of the page it ends, not an offset: a tool added or removed between two
pages shifts nothing. It is opaque to the client, and anything that does not decode is -32602.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from mcpforms.protocol.errors import invalid_params

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


def page(
    items: Sequence[T], *, key: Callable[[T], str], cursor: Any, size: int
) -> tuple[Sequence[T], str | None]:
    """Return the page after ``cursor`` (None for the first) and the cursor of the next page, if any."""
    start = 0
    if cursor is not None:
        after = _decode(cursor)
        # Items are sorted by key, so the page starts at the first key past the cursor's.
        start = next((index for index, item in enumerate(items) if key(item) > after), len(items))
    chunk = items[start : start + size]
    more = start + size < len(items)
    return chunk, (_encode(key(chunk[-1])) if more and chunk else None)
