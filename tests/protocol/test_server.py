"""``Server``: the default one, and the settings it reads. ``Server.handle`` answering a message with a
handler of one's own is docs/howto/hand-written-tools.md's example, which the docs' harness runs."""

from __future__ import annotations

from django.test import override_settings

from mcpforms.protocol.server import Server, default_server


def test_default_server_exists():
    assert isinstance(default_server, Server)


def test_cached_settings_follow_setting_changes():
    from mcpforms.conf import conf

    assert conf.PAGE_SIZE == 100
    with override_settings(MCPFORMS={"PAGE_SIZE": 7}):
        assert conf.PAGE_SIZE == 7
    assert conf.PAGE_SIZE == 100
