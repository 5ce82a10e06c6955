"""``Offering``: the tools, prompts and resources one MCP endpoint offers, and how it describes itself.

The methods read it; ``Server`` (``mcpforms.protocol.server``) adds the entry point that runs them.
"""

from __future__ import annotations

import itertools
import re
import weakref
from collections.abc import Callable, Hashable, Iterable, Mapping
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from mcpforms.conf import conf
from mcpforms.protocol.catalog import Catalog, Deferred
from mcpforms.protocol.context import DEFAULT_SERVER
from mcpforms.protocol.era2025.sessions import SessionStore, configured_store
from mcpforms.protocol.primitives import (
    Prompt,
    Resource,
    ResourceTemplate,
    StateVersion,
    TaskTurn,
    Tool,
    ToolHandler,
)
from mcpforms.protocol.tasks import EXTENSION as TASKS_EXTENSION
from mcpforms.protocol.tasks import TaskStore, configured_tasks

NO_ARGUMENTS: Mapping[str, Any] = {"type": "object", "additionalProperties": False}


@cache
def _package_version() -> str:
    try:
        return version("mcpforms")
    except PackageNotFoundError:  # running from a checkout that was never installed
        return "0"


_created = itertools.count(1)
KEY = re.compile(r"[A-Za-z0-9_.-]{1,64}")
# Every offering this process built, by creation number: the URL-mode page finds the server that minted
# its link by key, and the checks look for two sharing one. Weak: a test's throwaway server leaves with
# its last reference.
built: weakref.WeakValueDictionary[int, Offering] = weakref.WeakValueDictionary()
# The offering built last with each key: the one a key names (mcpforms.E020 reports two sharing one).
by_key: weakref.WeakValueDictionary[str, Offering] = weakref.WeakValueDictionary()


class Offering:
    """What one endpoint serves. ``name``, ``version`` and ``instructions`` default to the settings.

    ``key`` is the server's stable name among the project's servers (not its serverInfo ``name``): every
    requestState, URL-mode link, completion record and 2025-era session it makes is bound to it, so that
    no other server accepts them, even one with a tool of the same name.
    """

    def __init__(
        self,
        *,
        key: str | None = None,
        name: str | None = None,
        version: str | None = None,
        instructions: str | None = None,
        extensions: Mapping[str, Mapping[str, Any]] | None = None,
        sessions: SessionStore | None = None,
        tasks: TaskStore | None = None,
        allow_anonymous: bool | Iterable[str] | None = None,
    ) -> None:
        if key is not None and not KEY.fullmatch(key):
            raise ValueError(f"A server's key must be 1-64 letters, digits, '_', '.' or '-', not {key!r}.")
        self.created = next(_created)
        # Set by whoever builds the server: a numbered default is stable only while every process builds
        # its servers in the same order at import (mcpforms.W004 says so).
        self.key = key if key is not None else f"unnamed-{self.created}"
        self.key_given = key is not None
        built[self.created] = self
        by_key[self.key] = self
        self._allow_anonymous = (
            allow_anonymous
            if allow_anonymous is None or isinstance(allow_anonymous, bool)
            else frozenset(allow_anonymous)
        )
        self._sessions = sessions
        self._tasks = tasks
        self._name = name
        self._version = version
        self._instructions = instructions
        self.extensions: dict[str, dict[str, Any]] = {k: dict(v) for k, v in (extensions or {}).items()}
        self.tools: Catalog[Tool] = Catalog(lambda tool: tool.name, kind="tool")
        self.prompts: Catalog[Prompt] = Catalog(lambda prompt: prompt.name, kind="prompt")
        self.resources: Catalog[Resource] = Catalog(lambda resource: resource.uri, kind="resource")
        self.resource_templates: Catalog[ResourceTemplate] = Catalog(
            lambda template: template.uri_template, kind="resource template"
        )

    # Registration -------------------------------------------------------------------------------------

    def add_tool(self, tool: Tool) -> Tool:
        return self.tools.add(tool)

    def add_tool_source(
        self,
        source: Callable[[], Iterable[Tool | Deferred[Tool]]],
        *,
        version: Callable[[], Hashable] | None = None,
    ) -> None:
        """Serve the tools ``source()`` returns; with ``version``, re-read them only when it changes. A
        ``Deferred`` names a tool built when a listing or a call first reaches it."""
        self.tools.add_source(source, version=version)

    def tool(
        self,
        name: str | None = None,
        *,
        description: str | None = None,
        input_schema: Mapping[str, Any] = NO_ARGUMENTS,
        title: str | None = None,
        annotations: Mapping[str, Any] | None = None,
        output_schema: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        state_version: StateVersion | None = None,
        task_turn: TaskTurn | None = None,
    ) -> Callable[[ToolHandler], ToolHandler]:
        """Register the decorated ``handler(ctx, arguments)``; name and description default to its own."""

        def register(handler: ToolHandler) -> ToolHandler:
            self.add_tool(
                Tool(
                    name=name or handler.__name__,
                    description=description or (handler.__doc__ or "").strip(),
                    input_schema=input_schema,
                    handler=handler,
                    title=title,
                    annotations=annotations,
                    output_schema=output_schema,
                    meta=meta,
                    state_version=state_version,
                    task_turn=task_turn,
                )
            )
            return handler

        return register

    def add_prompt(self, prompt: Prompt) -> Prompt:
        return self.prompts.add(prompt)

    def add_prompt_source(
        self, source: Callable[[], Iterable[Prompt]], *, version: Callable[[], Hashable] | None = None
    ) -> None:
        self.prompts.add_source(source, version=version)

    def add_resource(self, resource: Resource) -> Resource:
        return self.resources.add(resource)

    def add_resource_template(self, template: ResourceTemplate) -> ResourceTemplate:
        return self.resource_templates.add(template)

    # Description --------------------------------------------------------------------------------------

    @property
    def info(self) -> dict[str, str]:
        """The Implementation object sent in every result's ``_meta`` (spec §2)."""
        return {
            "name": self._name or conf.SERVER_NAME,
            "version": self._version or conf.SERVER_VERSION or _package_version(),
        }

    @property
    def sessions(self) -> SessionStore:
        """Where this server's 2025-era sessions live: its own store, else ``MCPFORMS["SESSION_STORE"]``."""
        return self._sessions if self._sessions is not None else configured_store()

    @property
    def tasks(self) -> TaskStore | None:
        """Where this server's tasks live: its own store, else ``MCPFORMS["TASK_STORE"]`` (None: no tasks,
        and no tasks extension in ``server/discover``)."""
        return self._tasks if self._tasks is not None else configured_tasks()

    @property
    def anonymous_policy(self) -> bool | frozenset[str]:
        """Whom callers nobody authenticated may use: every tool (True), none (False), or those named.

        A server's own ``allow_anonymous``, else ``MCPFORMS["ALLOW_ANONYMOUS"]``. A list there names the
        default server's tools only: the same name on another server is another tool, which stays closed
        until that server names it itself.
        """
        if self._allow_anonymous is not None:
            return self._allow_anonymous
        setting = conf.ALLOW_ANONYMOUS
        if isinstance(setting, bool):
            return setting
        return frozenset(setting) if self.key == DEFAULT_SERVER else frozenset()

    @property
    def admits_anonymous(self) -> bool:
        """Whether anonymous callers get past the endpoint at all (else they are asked to authenticate)."""
        return bool(self.anonymous_policy)

    def anonymous_may_use(self, name: str) -> bool:
        """Whether an anonymous caller who got in may see and use the tool or prompt ``name``: any, unless
        the policy lists names. (Under False none gets in: the endpoint asks them to authenticate.)"""
        policy = self.anonymous_policy
        return not isinstance(policy, frozenset) or name in policy

    @property
    def instructions(self) -> str | None:
        return self._instructions if self._instructions is not None else conf.INSTRUCTIONS

    @property
    def completes(self) -> bool:
        """Whether anything offers argument completion, which decides the ``completions`` capability."""
        return any(p.complete for p in self.prompts.all()) or any(
            t.complete for t in self.resource_templates.all()
        )

    def capabilities(self) -> dict[str, Any]:
        """The ServerCapabilities of ``server/discover``.

        No ``listChanged`` nor ``subscribe``: ``subscriptions/listen`` is not served (spec §8.7), and a
        capability is only advertised when the methods it gates answer.
        """
        capabilities: dict[str, Any] = {"tools": {}}
        if self.prompts:
            capabilities["prompts"] = {}
        if self.resources or self.resource_templates:
            capabilities["resources"] = {}
        if self.completes:
            capabilities["completions"] = {}
        capabilities["extensions"] = {name: dict(settings) for name, settings in self.extensions.items()}
        if self.tasks is not None:
            # Exactly an empty object: task clients read anything else as "no tasks".
            capabilities["extensions"][TASKS_EXTENSION] = {}
        return capabilities
