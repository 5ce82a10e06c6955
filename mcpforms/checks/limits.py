"""Limits on what a client may send (``mcpforms.api``, ``mcpforms.protocol``, ``mcpforms.tools``)."""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Error, Tags

from mcpforms.checks.common import invalid_values, settings_check
from mcpforms.conf import DEFAULTS, SETTINGS, Section


@settings_check(Tags.security)
def check_limits(configured: dict[str, Any]) -> list[CheckMessage]:
    """Each limit is a positive integer, the depth one Python can recurse through, and a requestState the
    server mints can come back: it fits in one string and in one body."""
    invalid = invalid_values(configured, Section.LIMITS)
    if any(message.id == SETTINGS[name].check for name, message in invalid.items()):
        return list(invalid.values())  # a limit that is no number cannot be compared with the others
    messages = list(invalid.values())
    limits = {**DEFAULTS, **configured}
    state = limits["MAX_STATE_BYTES"]
    room = min(limits["MAX_STRING_LENGTH"], limits["MAX_BODY_BYTES"])
    if state > room:
        messages.append(
            Error(
                f"MCPFORMS['MAX_STATE_BYTES'] is {state}, more than MAX_STRING_LENGTH or MAX_BODY_BYTES "
                f"allow ({room}): a requestState that long would be refused when the client echoes it.",
                hint="Keep MAX_STATE_BYTES at most MAX_STRING_LENGTH and well under MAX_BODY_BYTES.",
                id="mcpforms.E013",
            )
        )
    return messages
