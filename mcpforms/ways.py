"""Which ways a form tool is filled: for one client, as its rounds go, or for any client, as a listing says.

``serving`` asks it which way a request asks; ``manage.py mcpforms_tools`` and the demo's home page ask it
what to show, so that neither can tell a different story from what happens on the wire.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from mcpforms.flow import Way
from mcpforms.protocol.capabilities import supports_elicitation
from mcpforms.schema import OTHER_PATH_TYPES
from mcpforms.tools import FormTool
from mcpforms.ui import supports_apps

Capabilities = Mapping[str, Any]


def ways_to_fill(tool: FormTool, capabilities: Capabilities | None = None) -> tuple[Way, ...]:
    """The ways ``tool``'s form is filled, most preferred first.

    For the client that declared ``capabilities``: the one way its rounds use, or none when it can be
    asked nothing (the tool then runs on valid arguments alone, or says what it lacks). For any client
    (None): every way some client gets.
    """
    ways = _ways(tool, capabilities)
    if capabilities is None:
        return tuple(ways)
    first = next(ways, None)  # a host that renders the UI gets it rather than an elicitation (spec §11.5)
    return () if first is None else (first,)


def _ways(tool: FormTool, client: Capabilities | None) -> Iterator[Way]:
    if tool.path == "url":
        if _can(client, "url"):
            yield "url"  # every call goes to the page, whatever ``ask`` says
        return
    form = _form_of(tool)
    if form.page_first and tool.ask != "never":
        # A required password or file only comes from the page: the flow sends the user there at once.
        if _can(client, "url"):
            yield "url"
        return
    if tool.uses_app and _can(client, "app"):
        yield "app"
    if form.askable and tool.ask != "never" and _can(client, "form"):
        yield "form"
    if tool.ask == "always" and _can(client, "url") and _cannot(client, "form"):
        yield "url"  # the user confirms on the page, when a form elicitation cannot ask them


def _can(client: Capabilities | None, way: Way) -> bool:
    """Whether the client (any client, for None) can be asked that way."""
    return client is None or _supports(client, way)


def _cannot(client: Capabilities | None, way: Way) -> bool:
    """Whether the client (some client, for None) cannot be asked that way."""
    return client is None or not _supports(client, way)


def _supports(client: Capabilities, way: Way) -> bool:
    if way == "app":
        return supports_apps(client)
    return supports_elicitation(client, way)


@dataclass(frozen=True)
class _Form:
    """What the ways depend on in a tool's form."""

    #: A required password or file field, which only the URL-mode page may collect.
    page_first: bool
    #: A field a form elicitation can ask (not a password, a file or a hidden field).
    askable: bool


# Read once per tool, as its listing reads the form (``FormTool.input_schema``): rounds ask on every call.
_forms: weakref.WeakKeyDictionary[FormTool, _Form] = weakref.WeakKeyDictionary()


def _form_of(tool: FormTool) -> _Form:
    found = _forms.get(tool)
    if found is None:
        fields = tool.fields_for(None)
        found = _forms[tool] = _Form(
            page_first=any(auto.page_only and auto.required for auto in fields),
            askable=any(auto.type not in OTHER_PATH_TYPES for auto in fields),
        )
    return found
