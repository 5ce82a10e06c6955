"""The methods: what each one does with a validated request, in either era.

Each function takes a ``Call`` whose envelope and params already passed the ladder and returns the raw
result, written once in the 2026-07-28 style; ``dispatch`` finishes it for a 2026 client (resultType,
serverInfo, cache hints, the -32021 check), ``era2025.shim`` turns it into what a 2025 session expects.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from operator import attrgetter
from typing import Any, TypeVar

from mcp_types.methods import validate_client_request
from pydantic import ValidationError

from mcpforms.conf import conf
from mcpforms.protocol.catalog import Deferred, listed
from mcpforms.protocol.context import EVERY_SCOPE, Access, Notify, RequestContext, tool_binding
from mcpforms.protocol.envelope import Envelope
from mcpforms.protocol.errors import (
    INTERNAL_ERROR,
    ProtocolError,
    SignInRequired,
    ToolError,
    invalid_params,
    invalid_state,
    method_not_found,
)
from mcpforms.protocol.jsonrpc import Message
from mcpforms.protocol.offering import Offering
from mcpforms.protocol.pagination import page
from mcpforms.protocol.param_headers import check_param_headers
from mcpforms.protocol.primitives import Prompt, Resource, ResourceTemplate, Tool
from mcpforms.protocol.state import InvalidState, StaleState, StateLimit, load_state
from mcpforms.protocol.tasks import (
    TASK_METHODS,
    TaskStore,
    check_task_params,
    opted_in,
    tasks_required,
    unknown_task,
)
from mcpforms.protocol.versions import SUPPORTED_VERSIONS, VERSION_2026

logger = logging.getLogger(__name__)

Seen = TypeVar("Seen", Tool, Prompt)

# Spec §6.1: the only methods whose result may be input_required.
INPUT_REQUIRED_METHODS: frozenset[str] = frozenset({"tools/call", "prompts/get", "resources/read"})
# The spec caps a completion at 100 values (completion/complete, `values` maxItems).
MAX_COMPLETIONS = 100


@dataclass(frozen=True)
class Call:
    """A request that passed the ladder, with who sent it."""

    server: Offering
    message: Message
    envelope: Envelope
    user: Any
    principal: str
    notify: Notify | None
    headers: Mapping[str, str] | None = None
    access: Access = EVERY_SCOPE
    # The budget scope of an anonymous caller's address (``RequestContext.address``).
    address: str | None = None

    @property
    def params(self) -> dict[str, Any]:
        return self.message.params


def _context(call: Call, *, binding: str, arguments: Any, state_version: str | None) -> RequestContext:
    """Build the handler's context, verifying the echoed requestState against this very call (spec §6.4)."""
    params = call.params
    responses = params.get("inputResponses")
    if "inputResponses" in params and not (
        isinstance(responses, dict) and all(isinstance(entry, dict) for entry in responses.values())
    ):
        raise invalid_params("inputResponses must be an object whose entries are objects")
    state = None
    stale = False
    if params.get("requestState") is not None:
        try:
            state = load_state(
                params["requestState"],
                server=call.server.key,
                tool=binding,
                arguments=arguments,
                principal=call.principal,
                version=state_version,
            )
        except StaleState:
            stale = True  # the definition changed mid-flow: the handler asks again, it is no attack
        except InvalidState:
            raise invalid_state() from None
    return RequestContext(
        method=call.message.method,
        binding=binding,
        arguments=arguments,
        client_capabilities=call.envelope.client_capabilities,
        meta=params["_meta"],
        user=call.user,
        principal=call.principal,
        server=call.server.key,
        client_info=call.envelope.client_info,
        input_responses=responses,
        request_state=state,
        stale_state=stale,
        progress_token=call.envelope.progress_token,
        log_level=call.envelope.log_level,
        state_version=state_version,
        access=call.access,
        accepts_tasks=_accepts_tasks(call),
        address=call.address,
        _notify=call.notify,
    )


def _accepts_tasks(call: Call) -> bool:
    """Whether a call may become a task: the server keeps tasks and the client opted in to them in this
    very request, on 2026-07-28 (the extension is not defined on 2025-11-25, whatever a session declared)."""
    return (
        call.server.tasks is not None
        and call.envelope.protocol_version == VERSION_2026
        and opted_in(call.envelope.client_capabilities)
    )


def discover(call: Call) -> dict[str, Any]:
    result: dict[str, Any] = {
        "supportedVersions": list(SUPPORTED_VERSIONS),
        "capabilities": call.server.capabilities(),
    }
    if instructions := call.server.instructions:
        result["instructions"] = instructions
    return result


def _listing(
    call: Call,
    items: Sequence[Any],
    *,
    key: Callable[[Any], str],
    field: str,
    pick: Callable[[Any], Any] | None = None,
    peek: Callable[[Any], bool] | None = None,
    entry: Callable[[Any], dict[str, Any]] = attrgetter("entry"),
) -> dict[str, Any]:
    """One page of ``items``, sorted by ``key``; ``pick`` and ``peek`` as ``pagination.page`` has them;
    ``entry`` is what the page shows of an item."""
    cursor, size = call.params.get("cursor"), conf.PAGE_SIZE
    if pick is None:
        chunk, next_cursor = page(items, key=key, cursor=cursor, size=size)
    else:
        chunk, next_cursor = page(items, key=key, cursor=cursor, size=size, pick=pick, peek=peek)
    result: dict[str, Any] = {field: [entry(item) for item in chunk]}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


def _caller(call: Call, name: str) -> RequestContext:
    """Who is asking, for a tool's visibility: no arguments, no state (those are checked later)."""
    return RequestContext(
        method=call.message.method,
        binding=name,
        arguments={},
        client_capabilities=call.envelope.client_capabilities,
        meta=call.params.get("_meta") or {},
        user=call.user,
        principal=call.principal,
        server=call.server.key,
        access=call.access,
    )


def hidden(ctx: RequestContext, what: str, unknown: ProtocolError) -> ProtocolError:
    """What a caller hears of ``what``, which exists but which they may not see: ``unknown``, the
    answer for a name that does not exist, so that nothing says it does — unless they are anonymous and
    may sign in (OAuth at the edge), which may open it: then ``SignInRequired``, the 401 that makes a
    host offer sign-in. Offering OAuth tells anonymous callers that much about which names exist."""
    return SignInRequired(what) if ctx.may_sign_in else unknown


def list_tools(call: Call) -> dict[str, Any]:
    caller = _caller(call, "tools/list")

    # A tool is built (a form converted) when a page shows it, and only if the caller may see it.
    def shown(slot: Deferred[Tool]) -> Tool | None:
        tool = listed(slot) if slot.visible_to(caller) else None
        # A certain slot's visible_to is its tool's visibility: asking the tool again would repeat it.
        return tool if tool is not None and (slot.certain or tool.visible_to(caller)) else None

    # Whether a next page exists is known without building the tools it will show, where their slots know.
    def coming(slot: Deferred[Tool]) -> bool:
        return slot.visible_to(caller) and (slot.certain or shown(slot) is not None)

    # An anonymous caller who may sign in is shown, besides what they may use, what signing in opens:
    # those tools are listed by what they are for, not with the data their schemas offer a user.
    as_caller = replace(caller, method="tools/call") if caller.may_sign_in else None

    def entry(tool: Tool) -> dict[str, Any]:
        return tool.sign_in_entry if as_caller is not None and not tool.visible_to(as_caller) else tool.entry

    slots = call.server.tools.slots()
    return _listing(
        call, slots, key=lambda slot: slot.key, field="tools", pick=shown, peek=coming, entry=entry
    )


def list_prompts(call: Call) -> dict[str, Any]:
    caller = _caller(call, "prompts/list")
    prompts = [prompt for prompt in call.server.prompts.all() if prompt.visible_to(caller)]
    return _listing(call, prompts, key=lambda p: p.name, field="prompts")


def _prompt(call: Call, name: Any) -> Prompt:
    """The prompt ``name``, as ``_seen`` lets the caller have it."""
    return _seen(call, call.server.prompts.get(name) if isinstance(name, str) else None, "prompt", name)


def _seen(call: Call, item: Seen | None, kind: str, name: Any) -> Seen:
    """``item``, the tool or prompt named ``name``, when it exists and the caller may see it; else -32602,
    the same for both, since a name the caller may not see is, to them, no name at all (or the 401 of
    ``hidden`` for an anonymous caller who may sign in)."""
    if item is None:
        raise invalid_params(f"Unknown {kind}: {name}")
    caller = _caller(call, f"{kind}:{name}")
    if not item.visible_to(caller):
        unknown = invalid_params(f"Unknown {kind}: {name}")
        if isinstance(item, Tool) and not item.offered_to(caller):
            raise unknown  # the client cannot use it, whoever signs in
        raise hidden(caller, f"the {kind} {name!r}", unknown)
    return item


def list_resources(call: Call) -> dict[str, Any]:
    return _listing(call, call.server.resources.all(), key=lambda r: r.uri, field="resources")


def list_resource_templates(call: Call) -> dict[str, Any]:
    templates = call.server.resource_templates.all()
    return _listing(call, templates, key=lambda t: t.uri_template, field="resourceTemplates")


def call_tool(call: Call) -> dict[str, Any]:
    name = call.params["name"]
    tool = _seen(call, call.server.tools.get(name), "tool", name)
    arguments = call.params.get("arguments") or {}
    if call.headers is not None and tool.param_headers:
        check_param_headers(tool.param_headers, arguments, call.headers)  # spec §8.9 rung 11
    version = tool.state_version() if tool.state_version else None
    ctx = _context(call, binding=tool_binding(name), arguments=arguments, state_version=version)
    try:
        result = tool.handler(ctx, arguments)
    except ToolError as error:
        # A tool that ran and failed is a result the model can read, not a protocol error (spec §5.2).
        return {"content": [{"type": "text", "text": str(error)}], "isError": True}
    if (
        isinstance(result, dict)
        and result.get("resultType") not in ("input_required", "task")
        and "content" not in result
    ):
        result = {**result, "content": []}
    return result


def get_prompt(call: Call) -> dict[str, Any]:
    name = call.params["name"]
    prompt = _prompt(call, name)
    arguments = call.params.get("arguments") or {}
    if missing := [arg for arg in prompt.required_arguments if arg not in arguments]:
        raise invalid_params(f"Prompt {name!r} is missing required arguments: {', '.join(missing)}")
    ctx = _context(call, binding=f"prompt:{name}", arguments=arguments, state_version=None)
    try:
        return prompt.handler(ctx, arguments)
    except StateLimit as error:
        # A prompt (or a resource) has no isError result: a flow past its limits is the caller's error.
        raise invalid_params(str(error)) from None


def _find_resource(call: Call, uri: str) -> tuple[Resource | None, ResourceTemplate | None, dict[str, str]]:
    resource = call.server.resources.get(uri)
    if resource is not None:
        return resource, None, {}
    for template in call.server.resource_templates.all():
        variables = template.match(uri)
        if variables is not None:
            return None, template, variables
    return None, None, {}


def read_resource(call: Call) -> dict[str, Any]:
    uri = call.params["uri"]
    resource, template, variables = _find_resource(call, uri)
    if resource is None and template is None:
        # -32602 with the uri, never an empty `contents` (SEP-2164; -32002 is retired, spec §10).
        raise invalid_params("Resource not found", {"uri": uri})
    ctx = _context(call, binding=f"resource:{uri}", arguments={}, state_version=None)
    try:
        if resource is not None:
            return resource.handler(ctx, uri)
        assert template is not None
        return template.handler(ctx, uri, variables)
    except StateLimit as error:
        raise invalid_params(str(error)) from None


def complete(call: Call) -> dict[str, Any]:
    ref, argument = call.params["ref"], call.params["argument"]
    context = call.params.get("context") or {}
    filled: Mapping[str, str] = context.get("arguments") or {}
    completer = None
    if ref.get("type") == "ref/prompt":
        completer = _prompt(call, ref.get("name", "")).complete
    else:
        template = call.server.resource_templates.get(ref.get("uri", ""))
        if template is None:
            raise invalid_params(f"Unknown resource template: {ref.get('uri')}")
        completer = template.complete
    values: list[str] = []
    if completer is not None:
        ctx = _context(call, binding="completion", arguments=dict(filled), state_version=None)
        values = list(completer(ctx, argument["name"], argument["value"], dict(filled)))
    return {
        "completion": {
            "values": values[:MAX_COMPLETIONS],
            "total": len(values),
            "hasMore": len(values) > MAX_COMPLETIONS,
        }
    }


def _task_store(call: Call) -> tuple[TaskStore, str]:
    """The server's task store and the id ``tasks/*`` names, once the client proved it speaks the
    extension in this request: -32021 otherwise, before any lookup, so that nothing about a task id
    reaches a client that did not opt in."""
    store = call.server.tasks
    if not opted_in(call.envelope.client_capabilities):
        raise tasks_required(call.message.method)
    assert store is not None  # check_served: the methods are served only by a server keeping tasks
    task_id: str = call.params["taskId"]
    return store, task_id


def get_task(call: Call) -> dict[str, Any]:
    store, task_id = _task_store(call)
    view = store.view(server=call.server.key, principal=call.principal, task_id=task_id)
    if view is None:
        raise unknown_task(task_id)
    return view.detailed()


def update_task(call: Call) -> dict[str, Any]:
    store, task_id = _task_store(call)
    responses = call.params["inputResponses"]
    if not store.answer(
        server=call.server.key, principal=call.principal, task_id=task_id, responses=responses
    ):
        raise unknown_task(task_id)
    return {}


def cancel_task(call: Call) -> dict[str, Any]:
    store, task_id = _task_store(call)
    if not store.cancel(server=call.server.key, principal=call.principal, task_id=task_id):
        raise unknown_task(task_id)
    return {}


def validate_params(message: Message, version: str) -> None:
    """Check the params against the revision's schema (mcp_types): -32601 for a method the revision
    lacks, -32602 for bad params. Used by both eras; the tasks extension's, which mcp_types does not
    know, are checked by its own rules."""
    params = message.params
    if message.method in TASK_METHODS:
        check_task_params(message.method, params)
        return
    if "inputResponses" in params:
        # Entries under unknown keys must be ignored (spec §6.4), whatever their shape, so they are
        # checked by the core and the handler rather than by the schema.
        params = {key: value for key, value in params.items() if key != "inputResponses"}
    try:
        validate_client_request(message.method, version, params)
    except KeyError:
        raise method_not_found(message.method) from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"][1:3] if part != "params") or "params"
        raise invalid_params(f"Invalid params: {where}: {first['msg']}") from None


@dataclass(frozen=True)
class Method:
    run: Callable[[Call], dict[str, Any]]
    # Whether the server advertises the capability gating the method; if not, the method is -32601.
    served: Callable[[Offering], bool] = lambda server: True


def _has_prompts(server: Offering) -> bool:
    return bool(server.prompts)


def _has_resources(server: Offering) -> bool:
    return bool(server.resources or server.resource_templates)


def _keeps_tasks(server: Offering) -> bool:
    return server.tasks is not None


METHODS: dict[str, Method] = {
    "server/discover": Method(discover),
    "tools/list": Method(list_tools),
    "tools/call": Method(call_tool),
    "prompts/list": Method(list_prompts, _has_prompts),
    "prompts/get": Method(get_prompt, _has_prompts),
    "resources/list": Method(list_resources, _has_resources),
    "resources/templates/list": Method(list_resource_templates, _has_resources),
    "resources/read": Method(read_resource, _has_resources),
    "completion/complete": Method(complete, lambda server: server.completes),
    "tasks/get": Method(get_task, _keeps_tasks),
    "tasks/update": Method(update_task, _keeps_tasks),
    "tasks/cancel": Method(cancel_task, _keeps_tasks),
}
"""Every method served. ``subscriptions/listen`` is deliberately absent: a listen stream is a response
held open while the client stays connected, which pins a worker on WSGI, and list changes happen in any
process; clients list again once ``ttlMs`` has passed instead."""


def check_served(server: Offering, name: str, *, among: Collection[str] = METHODS.keys()) -> None:
    """Raise -32601 unless ``name`` is a method among ``among`` (an era's) and ``server`` advertises the
    capability it needs."""
    method = METHODS.get(name)
    if method is None or name not in among or not method.served(server):
        raise method_not_found(name)


def run_method(call: Call) -> dict[str, Any]:
    """Run the call's method; a handler that returns no dict is a bug, answered with -32603."""
    result: object = METHODS[call.message.method].run(call)
    if not isinstance(result, Mapping):
        logger.error("The %s handler returned %r instead of a dict", call.message.method, type(result))
        raise ProtocolError(INTERNAL_ERROR, "Internal error")
    return dict(result)


def asks_for_input(method: str, result: Mapping[str, Any]) -> bool:
    """Whether ``result`` asks the client for input, which only some methods' results may (spec §6.1)."""
    return result.get("resultType") == "input_required" and method in INPUT_REQUIRED_METHODS
