"""The catalog: static items and sources merged and sorted, read again only when a version moves, and items
a source names before building them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mcpforms.protocol.catalog import Catalog, Deferred, listed
from mcpforms.protocol.primitives import Tool
from mcpforms.protocol.server import Server


def handler(ctx: Any, arguments: Any) -> dict[str, Any]:
    return {"content": []}


def tool(name: str) -> Tool:
    return Tool(name, f"The {name} tool.", {"type": "object"}, handler)


def test_duplicate_names_are_refused():
    server = Server()
    server.add_tool(tool("a"))
    with pytest.raises(ValueError, match="already registered"):
        server.add_tool(tool("a"))


def test_sources_are_merged_sorted_and_static_wins():
    server = Server()
    server.add_tool(tool("m"))
    dynamic = Tool("m", "From the source.", {"type": "object"}, handler)
    server.add_tool_source(lambda: [tool("z"), dynamic, tool("a")])
    assert [t.name for t in server.tools.all()] == ["a", "m", "z"]
    found = server.tools.get("m")
    assert found is not None and found.description == "The m tool."


def test_a_versioned_source_is_read_only_when_its_version_moves():
    calls: list[int] = []
    version = [1]

    def source() -> list[Tool]:
        calls.append(1)
        return [tool(f"t{version[0]}")]

    catalog: Catalog[Tool] = Catalog(lambda t: t.name, kind="tool")
    catalog.add_source(source, version=lambda: version[0])
    assert [t.name for t in catalog.all()] == ["t1"]
    assert catalog.get("t1") is not None
    assert len(calls) == 1
    version[0] = 2
    assert [t.name for t in catalog.all()] == ["t2"]
    assert len(calls) == 2


def test_an_unversioned_source_is_read_every_time():
    calls: list[int] = []
    catalog: Catalog[Tool] = Catalog(lambda t: t.name, kind="tool")

    def source() -> list[Tool]:
        calls.append(1)
        return [tool("a")]

    catalog.add_source(source)
    catalog.all()
    catalog.all()
    assert len(calls) == 2


def test_a_lookup_stops_at_the_first_source_that_has_the_name():
    read: list[str] = []

    def version(name: str) -> Callable[[], int]:
        def read_version() -> int:
            read.append(name)
            return 0

        return read_version

    catalog: Catalog[Tool] = Catalog(lambda t: t.name, kind="tool")
    assert not catalog
    catalog.add_source(lambda: [tool("a")], version=version("first"))
    catalog.add_source(lambda: [tool("a"), tool("b")], version=version("second"))
    assert catalog
    found = catalog.get("a")
    assert found is not None and read == ["first"]  # the second source's version was never read
    assert catalog.get("b") is not None and read == ["first", "first", "second"]
    assert [t.name for t in catalog.all()] == ["a", "b"]


# ---- items named by their source, built on first use ------------------------------------------------------


def deferred(name: str, built: list[str], *, exists: bool = True) -> Deferred[Tool]:
    def build() -> Tool | None:
        built.append(name)
        return tool(name) if exists else None

    return Deferred(name, build)


def test_a_deferred_item_is_built_once_when_a_lookup_or_a_listing_reaches_it():
    built: list[str] = []
    catalog: Catalog[Tool] = Catalog(lambda t: t.name, kind="tool")
    catalog.add_source(lambda: [deferred(name, built) for name in "cab"], version=lambda: 1)
    assert [slot.key for slot in catalog.slots()] == ["a", "b", "c"] and built == []
    found = catalog.get("b")
    assert found is not None and found.name == "b" and built == ["b"]
    assert [t.name for t in catalog.all()] == ["a", "b", "c"]
    catalog.get("b")
    assert sorted(built) == ["a", "b", "c"]


def test_a_deferred_item_that_does_not_exist_leaves_its_key_to_the_next_source():
    built: list[str] = []
    catalog: Catalog[Tool] = Catalog(lambda t: t.name, kind="tool")
    catalog.add_source(lambda: [deferred("a", built, exists=False), deferred("b", built)], version=lambda: 1)
    later = Tool("a", "The later source's.", {"type": "object"}, handler)
    catalog.add_source(lambda: [later], version=lambda: 1)
    assert catalog.get("a") is later
    assert catalog.all() == (later, tool("b"))


def test_a_listing_leaves_out_an_item_that_cannot_be_built_and_tries_again_next_time(caplog):
    failures = [RuntimeError("the database is away")]

    def build() -> Tool:
        if failures:
            raise failures.pop()
        return tool("a")

    slot: Deferred[Tool] = Deferred("a", build)
    assert listed(slot) is None
    assert "'a' cannot be listed" in caplog.text and "the database is away" in caplog.text
    assert listed(slot) == tool("a")
