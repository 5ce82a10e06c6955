"""Cursor pagination: opaque cursors naming the last key, and pages that build only what they show."""

from __future__ import annotations

import base64

import pytest

from mcpforms.protocol.pagination import page


@pytest.mark.parametrize(
    ("cursor", "size", "expected", "next_key"),
    [(None, 2, ["a", "b"], "b"), ("b", 2, ["c", "d"], None), ("bb", 1, ["c"], "c"), ("z", 2, [], None)],
)
def test_page(cursor, size, expected, next_key):
    encoded = None if cursor is None else base64.urlsafe_b64encode(cursor.encode()).decode()
    items, next_cursor = page(["a", "b", "c", "d"], key=lambda k: k, cursor=encoded, size=size)
    assert list(items) == expected
    assert next_cursor == (None if next_key is None else base64.urlsafe_b64encode(next_key.encode()).decode())


@pytest.mark.parametrize("size", [1, 2, 3, 7])
def test_a_page_picks_only_what_it_needs_and_pages_as_if_filtered_first(size):
    keys = [f"k{number}" for number in range(7)]
    shown = ["k1", "k2", "k5"]
    picked: list[list[str]] = []

    def pick(key: str) -> str | None:
        picked[-1].append(key)
        return key if key in shown else None

    pages, cursor = [], None
    while True:
        picked.append([])
        chunk, cursor = page(keys, key=lambda k: k, cursor=cursor, size=size, pick=pick)
        pages.append(chunk)
        if cursor is None:
            break
    assert pages == [shown[start : start + size] for start in range(0, len(shown), size)]
    # A page picks its own items and, to know whether another page follows, the next one shown: no more.
    for asked, following in zip(picked, pages[1:], strict=False):
        assert max(asked) == following[0]


def test_a_page_asks_peek_rather_than_pick_whether_more_follow():
    picked: list[str] = []

    def pick(key: str) -> str:
        picked.append(key)
        return key

    chunk, cursor = page(
        ["a", "b", "c"], key=lambda k: k, cursor=None, size=2, pick=pick, peek=lambda k: True
    )
    assert (chunk, picked) == (["a", "b"], ["a", "b"])
    assert cursor is not None
    chunk, cursor = page(
        ["a", "b", "c"], key=lambda k: k, cursor=None, size=2, pick=pick, peek=lambda k: False
    )
    assert cursor is None
