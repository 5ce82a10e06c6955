"""Which ways a form tool is filled: for one client, as its rounds go, or for any client, as a listing says.

``serving`` asks it which way a request asks; ``manage.py mcpforms_tools`` and the demo's home page ask it
what to show, so that neither can tell a different story from what happens on the wire.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import mcpforms.sealing as sealing
from mcpforms.flow import Way
from mcpforms.protocol.capabilities import supports_elicitation
from mcpforms.schema import OTHER_PATH_TYPES
from mcpforms.tools import FormTool
from mcpforms.ui import supports_apps
from mcpforms.wizards import WizardTool

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
    if isinstance(tool, WizardTool):
        yield from _wizard_ways(tool, client)
        return
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


def _wizard_ways(tool: WizardTool, client: Capabilities | None) -> Iterator[Way]:
    """A wizard asks one step per round, each in its own way (``mcpforms.wizard_rounds``): the App shows
    every step where the wizard has one; else a step is a form elicitation, or the URL-mode page for a step
    with a password or a file, and for a step the user answers themselves when the client shows no form."""
    steps = _steps_of(tool)
    if tool.uses_app and _can(client, "app"):
        yield "app"
    if steps.askable and _can(client, "form"):
        yield "form"
    # The page keeps a step the user answered there sealed for the flow, with mcpforms[wizard-pages].
    confirmed_on_page = steps.confirmed and _cannot(client, "form") and sealing.available()
    if _can(client, "url") and (steps.page_first or confirmed_on_page):
        yield "url"


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


@dataclass(frozen=True)
class _Steps:
    """What the ways depend on in a wizard's steps (a formset step is none of these: only the App or the
    model's arguments fill it)."""

    #: A step a form elicitation asks: a field it can show, and no password or file the page must take.
    askable: bool
    #: A step asked on the page whatever the client: a required password or file, or one in a step the
    #: user answers themselves (``always_ask``).
    page_first: bool
    #: A step the user answers themselves that a form elicitation could ask.
    confirmed: bool
    #: The steps some client fills on the URL-mode page, in order.
    on_page: tuple[str, ...]


_wizards: weakref.WeakKeyDictionary[WizardTool, _Steps] = weakref.WeakKeyDictionary()


def _steps_of(tool: WizardTool) -> _Steps:
    found = _wizards.get(tool)
    if found is None:
        askable = page_first = confirmed = False
        on_page: list[str] = []
        for step in tool.steps:
            if step in tool.formsets or tool.condition_dict.get(step) is False:
                continue
            fields = tool.step_fields(None, step)
            always = step in tool.always_ask
            first = any(auto.page_only and (auto.required or always) for auto in fields)
            page_first |= first
            askable |= not first and any(auto.type not in OTHER_PATH_TYPES for auto in fields)
            confirmed |= always and not first
            if first or (always and sealing.available()):
                on_page.append(step)
        found = _wizards[tool] = _Steps(
            askable=askable, page_first=page_first, confirmed=confirmed, on_page=tuple(on_page)
        )
    return found


def page_steps(tool: WizardTool) -> tuple[str, ...]:
    """The steps of ``tool`` that some client fills on the URL-mode page (a wizard's page shows one step,
    never the whole form): a step with a password or a file, and one the user answers for a client that
    shows no form elicitation."""
    return _steps_of(tool).on_page
