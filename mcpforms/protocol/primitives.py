"""Tools, prompts, resources and resource templates: what a server offers, and the handler behind each.

Every handler runs on every round of a multi round-trip request: it gets the ``RequestContext`` and returns
either a complete result or an input_required result (``mcpforms.schema.form_input_request`` builds one).
Each object computes its ``tools/list``-style wire entry once, so listing costs no introspection.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any
from urllib.parse import unquote

from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.param_headers import ParamHeaders, param_headers
from mcpforms.protocol.tasks import Ask, Wait

ToolHandler = Callable[[RequestContext, dict[str, Any]], dict[str, Any]]
TaskTurn = Callable[[RequestContext, dict[str, Any]], "dict[str, Any] | Ask | Wait"]
PromptHandler = Callable[[RequestContext, dict[str, str]], dict[str, Any]]
ResourceHandler = Callable[[RequestContext, str], dict[str, Any]]
TemplateHandler = Callable[[RequestContext, str, dict[str, str]], dict[str, Any]]
# (ctx, argument name, partial value, other arguments already filled) -> suggestions, best first.
Completer = Callable[[RequestContext, str, str, dict[str, str]], Sequence[str]]
StateVersion = Callable[[], str | None]
Visibility = Callable[[RequestContext], bool]

# The one name rule for tools and prompts, wherever they come from (code, the admin, a hand-written
# Tool): 1-64 characters within SEP-986's set, less "/", so a name reads the same in every client.
NAME_PATTERN = r"[A-Za-z0-9_.-]{1,64}"
NAME_RULE = "1-64 characters of A-Z a-z 0-9 _ . -"
TOOL_NAME = re.compile(NAME_PATTERN)


def _plain(mapping: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A mapping as an entry carries it: a dict as it is, not copied (a thousand tools would hold a copy of
    each schema; entries are serialised, never changed), anything else as a dict."""
    return mapping if mapping is None or isinstance(mapping, dict) else dict(mapping)


def _drop_none(entry: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in entry.items() if value is not None}


# What a JSON Schema says a value may or must be, as opposed to its shape: choices and defaults.
_VALUE_KEYWORDS = frozenset({"enum", "const", "oneOf", "anyOf", "default", "examples"})
# Where a schema holds schemas: by name (``properties``), one (``items``), or several (``allOf``).
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions"})
_SCHEMA_ONE = frozenset({"items", "additionalProperties", "not", "contains", "propertyNames"})
_SCHEMA_LISTS = frozenset({"allOf", "prefixItems"})


def _without_values(schema: Any) -> Any:
    """``schema`` with every choice and default left out, at any depth: only the shape remains. Property
    names are data, not keywords: a field called "default" stays."""
    if not isinstance(schema, Mapping):
        return schema
    kept: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _VALUE_KEYWORDS:
            continue
        if key in _SCHEMA_MAPS and isinstance(value, Mapping):
            kept[key] = {name: _without_values(item) for name, item in value.items()}
        elif key in _SCHEMA_ONE:
            kept[key] = _without_values(value)
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            kept[key] = [_without_values(item) for item in value]
        else:
            kept[key] = value
    return kept


@dataclass(frozen=True)
class Tool:
    """A tool: ``handler(ctx, arguments)`` returns a CallToolResult or an input_required result.

    ``state_version``, when given, names the current version of the tool's definition; a requestState
    minted for another version is rejected, so an admin editing a form invalidates flows in progress.
    """

    name: str
    description: str
    input_schema: Mapping[str, Any]
    handler: ToolHandler = field(compare=False)
    title: str | None = None
    annotations: Mapping[str, Any] | None = None
    output_schema: Mapping[str, Any] | None = None
    meta: Mapping[str, Any] | None = None
    state_version: StateVersion | None = field(default=None, compare=False)
    # Who may see the tool at all: a caller for whom this is False finds it neither listed nor callable.
    visible: Visibility | None = field(default=None, compare=False)
    # Whether the tool exists for the client at all, whoever calls (an app-only tool, for hosts that
    # render MCP Apps): a client for whom this is False is told it does not exist, never to sign in,
    # since signing in would not change what the client can do.
    offered: Visibility | None = field(default=None, compare=False)
    # The work of a task this tool's handler started (mcpforms.task_store.start_task), run once per turn
    # outside the request, with the task's arguments and the answers its input requests got so far: a
    # CallToolResult completes the task, an input_required result asks the client through tasks/update,
    # a ``Wait`` leaves it working; ToolError completes it with isError, a ProtocolError fails it.
    task_turn: TaskTurn | None = field(default=None, compare=False)

    def visible_to(self, ctx: RequestContext) -> bool:
        return self.offered_to(ctx) and (self.visible is None or self.visible(ctx))

    def offered_to(self, ctx: RequestContext) -> bool:
        return self.offered is None or self.offered(ctx)

    def __post_init__(self) -> None:
        if not TOOL_NAME.fullmatch(self.name):
            raise ValueError(f"Tool name {self.name!r} must be {NAME_RULE}.")
        if not self.description:
            raise ValueError(f"Tool {self.name!r} needs a description: clients show it to the model.")
        if self.input_schema.get("type") != "object":
            raise ValueError(f'Tool {self.name!r}: the root of input_schema must have "type": "object".')

    @cached_property
    def entry(self) -> dict[str, Any]:
        """The tool as ``tools/list`` lists it."""
        return _drop_none(
            {
                "name": self.name,
                "title": self.title,
                "description": self.description,
                "inputSchema": _plain(self.input_schema),
                "outputSchema": _plain(self.output_schema),
                "annotations": _plain(self.annotations),
                "_meta": _plain(self.meta),
            }
        )

    @cached_property
    def sign_in_entry(self) -> dict[str, Any]:
        """The tool as ``tools/list`` lists it to an anonymous caller who may use it once signed in: what
        it is for and what it takes, never the data its schema offers a user (choices, which a form may
        read from the database, and defaults), nor a UI it cannot open yet."""
        entry = {key: value for key, value in self.entry.items() if key != "_meta"}
        entry["inputSchema"] = _without_values(entry["inputSchema"])
        return entry

    @cached_property
    def param_headers(self) -> ParamHeaders:
        """The arguments clients mirror into ``Mcp-Param-*`` headers (``x-mcp-header``)."""
        return param_headers(self.input_schema)


@dataclass(frozen=True)
class PromptArgument:
    name: str
    description: str | None = None
    required: bool = False


@dataclass(frozen=True)
class Prompt:
    """A prompt: ``handler(ctx, arguments)`` returns a GetPromptResult or an input_required result."""

    name: str
    description: str
    handler: PromptHandler = field(compare=False)
    arguments: tuple[PromptArgument, ...] = ()
    title: str | None = None
    meta: Mapping[str, Any] | None = None
    complete: Completer | None = field(default=None, compare=False)
    # As a tool's: a caller for whom this is False finds the prompt neither listed, nor gettable, nor
    # completable.
    visible: Visibility | None = field(default=None, compare=False)

    def visible_to(self, ctx: RequestContext) -> bool:
        return self.visible is None or self.visible(ctx)

    @cached_property
    def entry(self) -> dict[str, Any]:
        arguments = [
            _drop_none({"name": a.name, "description": a.description, "required": a.required})
            for a in self.arguments
        ]
        return _drop_none(
            {
                "name": self.name,
                "title": self.title,
                "description": self.description,
                "arguments": arguments or None,
                "_meta": _plain(self.meta),
            }
        )

    @cached_property
    def required_arguments(self) -> tuple[str, ...]:
        return tuple(argument.name for argument in self.arguments if argument.required)


@dataclass(frozen=True)
class Resource:
    """A resource: ``handler(ctx, uri)`` returns a ReadResourceResult or an input_required result."""

    uri: str
    name: str
    handler: ResourceHandler = field(compare=False)
    description: str | None = None
    mime_type: str | None = None
    title: str | None = None
    meta: Mapping[str, Any] | None = None

    @cached_property
    def entry(self) -> dict[str, Any]:
        return _drop_none(
            {
                "uri": self.uri,
                "name": self.name,
                "title": self.title,
                "description": self.description,
                "mimeType": self.mime_type,
                "_meta": _plain(self.meta),
            }
        )


_VARIABLE = re.compile(r"\{([A-Za-z0-9_]+)\}")


@dataclass(frozen=True)
class ResourceTemplate:
    """Resources named by an RFC 6570 level-1 template such as ``test://template/{id}/data``.

    ``handler(ctx, uri, variables)`` gets the expanded variables, each matching one path segment.
    """

    uri_template: str
    name: str
    handler: TemplateHandler = field(compare=False)
    description: str | None = None
    mime_type: str | None = None
    title: str | None = None
    meta: Mapping[str, Any] | None = None
    complete: Completer | None = field(default=None, compare=False)

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        parts = _VARIABLE.split(self.uri_template)
        # split() alternates literal text and variable names: escape the first, capture the second.
        regex = "".join(
            re.escape(part) if index % 2 == 0 else f"(?P<{part}>[^/?#]+)" for index, part in enumerate(parts)
        )
        return re.compile(regex)

    def match(self, uri: str) -> dict[str, str] | None:
        """Return the template variables of ``uri``, or None when the template does not name it."""
        found = self.pattern.fullmatch(uri)
        return None if found is None else {name: unquote(value) for name, value in found.groupdict().items()}

    @cached_property
    def entry(self) -> dict[str, Any]:
        return _drop_none(
            {
                "uriTemplate": self.uri_template,
                "name": self.name,
                "title": self.title,
                "description": self.description,
                "mimeType": self.mime_type,
                "_meta": _plain(self.meta),
            }
        )
