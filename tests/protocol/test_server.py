"""``Server``: the default one, and the entry point that answers a message, as the README shows it."""

from __future__ import annotations

from typing import Any

from django.test import override_settings

from mcpforms.protocol.server import Server, default_server
from tests import wire


def test_default_server_exists():
    assert isinstance(default_server, Server)


def test_the_readme_handler_example_runs():
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", readme, flags=re.DOTALL) if "def greet(" in b]
    namespace: dict[str, Any] = {"__name__": "readme"}
    exec(compile(block, "README.md", "exec"), namespace)
    server: Server = namespace["server"]
    call = wire.message("tools/call", {"name": "greet"}, capabilities={"elicitation": {}})
    first = server.handle(call).body
    assert first is not None and first["result"]["resultType"] == "input_required"
    call["params"]["inputResponses"] = {"ask": {"action": "accept", "content": {"name": "Ada"}}}
    second = server.handle(call).body
    assert second is not None and second["result"]["content"] == [{"type": "text", "text": "Hello, Ada!"}]


def test_cached_settings_follow_setting_changes():
    from mcpforms.conf import conf

    assert conf.PAGE_SIZE == 100
    with override_settings(MCPFORMS={"PAGE_SIZE": 7}):
        assert conf.PAGE_SIZE == 7
    assert conf.PAGE_SIZE == 100
