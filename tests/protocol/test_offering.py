"""What an endpoint offers and how it describes itself: registration, serverInfo, capabilities, its key."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings

from mcpforms.protocol.primitives import Prompt, Resource
from mcpforms.protocol.server import Server
from mcpforms.protocol.tasks import EXTENSION as TASKS


def handler(ctx: Any, arguments: Any) -> dict[str, Any]:
    return {"content": []}


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


@override_settings(MCPFORMS={"SERVER_NAME": "from-settings", "SERVER_VERSION": "3"})
def test_info_defaults_to_settings():
    assert Server().info == {"name": "from-settings", "version": "3"}
    assert Server(name="own", version="1").info == {"name": "own", "version": "1"}


def test_extensions_are_advertised():
    server = Server(extensions={"io.modelcontextprotocol/ui": {}})
    # The tasks extension comes with the task store (MCPFORMS["TASK_STORE"], the database by default).
    assert server.capabilities()["extensions"] == {"io.modelcontextprotocol/ui": {}, TASKS: {}}
    with override_settings(MCPFORMS={"TASK_STORE": None}):
        assert server.capabilities()["extensions"] == {"io.modelcontextprotocol/ui": {}}


@pytest.mark.parametrize("key", ["", "has space", "x" * 65, "slash/key", "ünïcode"])
def test_a_key_that_could_not_be_bound_into_a_token_is_refused(key):
    with pytest.raises(ValueError, match="1-64 letters, digits"):
        Server(key=key)


@override_settings(MCPFORMS={"TASK_STORE": None})
def test_a_capability_is_advertised_once_something_is_served_under_it():
    server = Server()
    assert server.capabilities() == {"tools": {}, "extensions": {}}
    server.add_resource(Resource("test://r", "r", lambda ctx, uri: {"contents": []}))
    assert server.capabilities() == {"tools": {}, "resources": {}, "extensions": {}}
    server.add_prompt(Prompt("p", "d", handler))
    assert "completions" not in server.capabilities()
    server.add_prompt(Prompt("q", "d", handler, complete=lambda ctx, name, value, filled: []))
    assert server.capabilities() == {
        "tools": {},
        "prompts": {},
        "resources": {},
        "completions": {},
        "extensions": {},
    }
