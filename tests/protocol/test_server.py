"""Server registration: static and dynamic tools, sorted and cached listings, and the primitives' entries."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import override_settings

from mcpforms.protocol import Prompt, PromptArgument, Resource, ResourceTemplate, Server, Tool, default_server
from mcpforms.protocol.catalog import Catalog, Deferred, listed
from mcpforms.protocol.pagination import page


def handler(ctx: Any, arguments: Any) -> dict[str, Any]:
    return {"content": []}


def tool(name: str) -> Tool:
    return Tool(name, f"The {name} tool.", {"type": "object"}, handler)


def test_decorator_defaults_to_the_function():
    server = Server()

    @server.tool()
    def lookup(ctx: Any, arguments: Any) -> dict[str, Any]:
        """Look something up."""
        return {"content": []}

    registered = server.tools.get("lookup")
    assert registered is not None
    assert registered.entry == {
        "name": "lookup",
        "description": "Look something up.",
        "inputSchema": {"type": "object", "additionalProperties": False},
    }


def test_duplicate_names_are_refused():
    server = Server()
    server.add_tool(tool("a"))
    with pytest.raises(ValueError, match="already registered"):
        server.add_tool(tool("a"))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "bad name"}, "must be 1-64"),
        ({"name": "x" * 65}, "must be 1-64"),
        ({"description": ""}, "needs a description"),
        ({"input_schema": {"type": "array"}}, "root of input_schema"),
    ],
)
def test_tool_validation(kwargs, message):
    values: dict[str, Any] = {"name": "ok", "description": "d", "input_schema": {"type": "object"}} | kwargs
    with pytest.raises(ValueError, match=message):
        Tool(handler=handler, **values)


def test_entries_carry_only_what_is_set():
    full = Tool(
        "t",
        "d",
        {"type": "object"},
        handler,
        title="T",
        annotations={"readOnlyHint": True},
        output_schema={"type": "object"},
        meta={"ui": {}},
    )
    assert full.entry == {
        "name": "t",
        "title": "T",
        "description": "d",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": True},
        "_meta": {"ui": {}},
    }
    prompt = Prompt("p", "d", handler, arguments=(PromptArgument("a", "A"),))
    assert prompt.entry == {
        "name": "p",
        "description": "d",
        "arguments": [{"name": "a", "description": "A", "required": False}],
    }
    assert Resource("test://r", "r", handler, mime_type="text/plain").entry == {
        "uri": "test://r",
        "name": "r",
        "mimeType": "text/plain",
    }


@pytest.mark.parametrize(
    ("uri", "variables"),
    [
        ("test://t/1/data", {"id": "1"}),
        ("test://t/a%2Fb/data", {"id": "a/b"}),
        ("test://t/1/2/data", None),
        ("test://t//data", None),
        ("test://t/1/data/x", None),
        ("test://t.1.data", None),
    ],
)
def test_template_match(uri, variables):
    template = ResourceTemplate("test://t/{id}/data", "t", lambda ctx, uri, variables: {})
    assert template.match(uri) == variables


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


@override_settings(MCPFORMS={"SERVER_NAME": "from-settings", "SERVER_VERSION": "3"})
def test_info_defaults_to_settings():
    assert Server().info == {"name": "from-settings", "version": "3"}
    assert Server(name="own", version="1").info == {"name": "own", "version": "1"}


def test_extensions_are_advertised():
    server = Server(extensions={"io.modelcontextprotocol/ui": {}})
    assert server.capabilities()["extensions"] == {"io.modelcontextprotocol/ui": {}}


def test_default_server_exists():
    assert isinstance(default_server, Server)


@pytest.mark.parametrize(
    ("cursor", "size", "expected", "next_key"),
    [(None, 2, ["a", "b"], "b"), ("b", 2, ["c", "d"], None), ("bb", 1, ["c"], "c"), ("z", 2, [], None)],
)
def test_page(cursor, size, expected, next_key):
    import base64

    encoded = None if cursor is None else base64.urlsafe_b64encode(cursor.encode()).decode()
    items, next_cursor = page(["a", "b", "c", "d"], key=lambda k: k, cursor=encoded, size=size)
    assert list(items) == expected
    assert next_cursor == (None if next_key is None else base64.urlsafe_b64encode(next_key.encode()).decode())


def test_the_readme_handler_example_runs():
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", readme, flags=re.DOTALL) if "def greet(" in b]
    namespace: dict[str, Any] = {"__name__": "readme"}
    exec(compile(block, "README.md", "exec"), namespace)
    server: Server = namespace["server"]
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    }
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "greet", "_meta": meta}}
    first = server.handle(call).body
    assert first is not None and first["result"]["resultType"] == "input_required"
    call["params"]["inputResponses"] = {"ask": {"action": "accept", "content": {"name": "Ada"}}}  # type: ignore[index]
    second = server.handle(call).body
    assert second is not None and second["result"]["content"] == [{"type": "text", "text": "Hello, Ada!"}]


def test_cached_settings_follow_setting_changes():
    from mcpforms.conf import conf

    assert conf.PAGE_SIZE == 100
    with override_settings(MCPFORMS={"PAGE_SIZE": 7}):
        assert conf.PAGE_SIZE == 7
    assert conf.PAGE_SIZE == 100


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
