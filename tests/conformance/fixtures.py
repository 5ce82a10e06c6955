"""The tools, prompts and resources the conformance suite calls by name (digest §12 and its scenarios).

Each multi round-trip fixture is a write-once handler: it reads what arrived, asks for what is missing.
"""

from __future__ import annotations

import json
import time
from typing import Any

from mcpforms.answers import accepted_form_input, input_response
from mcpforms.fields import AutoFormField
from mcpforms.protocol import (
    Prompt,
    PromptArgument,
    RequestContext,
    Resource,
    ResourceTemplate,
    Server,
    ToolError,
)
from mcpforms.protocol.era2025.sessions import MemorySessions
from mcpforms.protocol.errors import INVALID_PARAMS, ProtocolError, missing_capability
from mcpforms.protocol.tasks import tasks_required
from mcpforms.schema import form_input_request
from mcpforms.task_store import start_task

# One process serves the suite (runserver, threaded): its 2025-era sessions live in that process, as
# MemorySessions keeps them. Its tasks live in the database (the default DatabaseTasks), which the
# workers that run them share (run.py).
server = Server(key="conformance", sessions=MemorySessions())

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV = "UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YRAAAAAAAAAAAAAAAAAAAAAAAAAA"

NAME = (AutoFormField(name="name", required=True),)
CONFIRM = (AutoFormField(name="ok", type="boolean", required=True),)
COLOR = (AutoFormField(name="color", required=True),)
CONTEXT = (AutoFormField(name="context", required=True),)


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def sampling(question: str, *, max_tokens: int = 100) -> dict[str, Any]:
    return {
        "method": "sampling/createMessage",
        "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": question}}],
            "maxTokens": max_tokens,
        },
    }


ROOTS = {"method": "roots/list", "params": {}}


def sampled_text(ctx: RequestContext, key: str) -> str | None:
    """The text of a sampling answer, or None when it is missing or malformed."""
    answer = (ctx.input_responses or {}).get(key)
    content = answer.get("content") if isinstance(answer, dict) else None
    return content.get("text") if isinstance(content, dict) and isinstance(content.get("text"), str) else None


def roots(ctx: RequestContext, key: str) -> list[str] | None:
    answer = (ctx.input_responses or {}).get(key)
    listed = answer.get("roots") if isinstance(answer, dict) else None
    if not isinstance(listed, list):
        return None
    return [str(root.get("uri")) for root in listed if isinstance(root, dict)]


# Content tools ------------------------------------------------------------------------------------------


@server.tool(description="Return a simple text response.")
def test_simple_text(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    return text("This is a simple text response for testing.")


@server.tool(description="Return a 1x1 PNG image.")
def test_image_content(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]}


@server.tool(description="Return a short WAV clip.")
def test_audio_content(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]}


@server.tool(description="Return an embedded text resource.")
def test_embedded_resource(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    resource = {
        "uri": "test://embedded-resource",
        "mimeType": "text/plain",
        "text": "This is an embedded resource content.",
    }
    return {"content": [{"type": "resource", "resource": resource}]}


@server.tool(description="Return text, an image and an embedded resource together.")
def test_multiple_content_types(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    resource = {
        "uri": "test://mixed-content-resource",
        "mimeType": "application/json",
        "text": json.dumps({"test": "data", "value": 123}),
    }
    return {
        "content": [
            {"type": "text", "text": "Multiple content types test:"},
            {"type": "image", "data": PNG, "mimeType": "image/png"},
            {"type": "resource", "resource": resource},
        ]
    }


@server.tool(description="Always fail, as a tool execution error.")
def test_error_handling(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    raise ToolError("This tool intentionally returns an error for testing")


@server.tool(description="Report progress 0, 50 and 100 of 100 when asked to.")
def test_tool_with_progress(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    for step in (0, 50, 100):
        ctx.report_progress(step, 100)
        if step < 100:
            time.sleep(0.05)
    return text("Progress reported: 0, 50 and 100 of 100.")


# server-stateless diagnostics ----------------------------------------------------------------------------


@server.tool(description="Needs the sampling capability: -32021 without it.")
def test_missing_capability(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(ctx.client_capabilities.get("sampling"), dict):
        raise missing_capability({"sampling": {}})
    return text("The client declared sampling.")


@server.tool(description="Ask for a name; its response stream carries no server-to-client request.")
def test_streaming_elicitation(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    answers = accepted_form_input(ctx.input_responses, "user_name", NAME)
    if answers is None:
        return form_input_request(NAME, key="user_name", message="What is your name?")
    return text(f"Hello, {answers['name']}!")


@server.tool(description="Would log, but sends no notifications/message without a logLevel.")
def test_logging_tool(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    return text("Nothing was logged: the request set no logLevel.")


# Multi round-trip fixtures -------------------------------------------------------------------------------


@server.tool(description="Ask the user's name through an elicitation, then greet them.")
def test_input_required_result_elicitation(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    response = input_response(ctx.input_responses, "user_name")
    if response is not None and response.action != "accept":
        return text(f"The user chose to {response.action}.")
    answers = accepted_form_input(ctx.input_responses, "user_name", NAME)
    if answers is None:
        return form_input_request(NAME, key="user_name", message="What is your name?")
    return text(f"Hello, {answers['name']}!")


@server.tool(description="Ask the client's model a question through sampling.")
def test_input_required_result_sampling(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    answer = sampled_text(ctx, "capital_question")
    if answer is None:
        question = sampling("What is the capital of France?")
        return {"resultType": "input_required", "inputRequests": {"capital_question": question}}
    return text(f"The model answered: {answer}")


@server.tool(description="Ask the client for its roots.")
def test_input_required_result_list_roots(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    listed = roots(ctx, "client_roots")
    if listed is None:
        return {"resultType": "input_required", "inputRequests": {"client_roots": ROOTS}}
    return text(f"The client has {len(listed)} root(s): {', '.join(listed) or 'none'}.")


@server.tool(description="Ask for a confirmation, carrying a signed requestState across the round.")
def test_input_required_result_request_state(
    ctx: RequestContext, arguments: dict[str, Any]
) -> dict[str, Any]:
    confirmed = accepted_form_input(ctx.input_responses, "confirm", CONFIRM)
    if confirmed is None or ctx.request_state is None:
        state = ctx.mint_state(answers={})
        return form_input_request(CONFIRM, key="confirm", message="Please confirm", request_state=state)
    return text(f"state-ok: the requestState verified, ok={confirmed['ok']}.")


@server.tool(description="Ask for a name, a sampled greeting and the roots in one round.")
def test_input_required_result_multiple_inputs(
    ctx: RequestContext, arguments: dict[str, Any]
) -> dict[str, Any]:
    name = accepted_form_input(ctx.input_responses, "user_name", NAME)
    greeting = sampled_text(ctx, "greeting")
    listed = roots(ctx, "client_roots")
    if name is not None and greeting is not None and listed is not None and ctx.request_state is not None:
        return text(f"{greeting} {name['name']} ({len(listed)} root(s)).")
    requests: dict[str, Any] = {
        "user_name": form_input_request(NAME, key="user_name", message="What is your name?")["inputRequests"][
            "user_name"
        ],
        "greeting": sampling("Generate a greeting", max_tokens=50),
        "client_roots": ROOTS,
    }
    state = ctx.mint_state(answers={}, pending=requests)
    return {"resultType": "input_required", "inputRequests": requests, "requestState": state}


@server.tool(description="Ask for a name, then a favourite colour, in two rounds carrying state.")
def test_input_required_result_multi_round(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    remembered = ctx.request_state.answers if ctx.request_state else {}
    if "name" in remembered:
        color = accepted_form_input(ctx.input_responses, "step2", COLOR)
        if color is not None:
            return text(f"{remembered['name']} likes {color['color']}.")
        state = ctx.mint_state(answers=remembered, pending=["step2"])
        return form_input_request(
            COLOR, key="step2", message="Step 2: What is your favorite color?", request_state=state
        )
    name = accepted_form_input(ctx.input_responses, "step1", NAME) if ctx.request_state else None
    if name is not None:
        state = ctx.mint_state(answers=name, pending=["step2"])
        return form_input_request(
            COLOR, key="step2", message="Step 2: What is your favorite color?", request_state=state
        )
    state = ctx.mint_state(answers={}, pending=["step1"])
    return form_input_request(NAME, key="step1", message="Step 1: What is your name?", request_state=state)


@server.tool(description="Ask for a confirmation with a signed requestState; a tampered one is rejected.")
def test_input_required_result_tampered_state(
    ctx: RequestContext, arguments: dict[str, Any]
) -> dict[str, Any]:
    confirmed = accepted_form_input(ctx.input_responses, "confirm", CONFIRM)
    if confirmed is None or ctx.request_state is None:
        state = ctx.mint_state(answers={})
        return form_input_request(CONFIRM, key="confirm", message="Please confirm", request_state=state)
    return text("The requestState verified.")


@server.tool(description="Ask only for the kinds of input the client declared it can give.")
def test_input_required_result_capabilities(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    requests: dict[str, Any] = {}
    if ctx.supports_elicitation() and accepted_form_input(ctx.input_responses, "user_name", NAME) is None:
        requests["user_name"] = form_input_request(NAME, key="user_name", message="What is your name?")[
            "inputRequests"
        ]["user_name"]
    if isinstance(ctx.client_capabilities.get("sampling"), dict) and sampled_text(ctx, "question") is None:
        requests["question"] = sampling("What is the capital of France?")
    if isinstance(ctx.client_capabilities.get("roots"), dict) and roots(ctx, "client_roots") is None:
        requests["client_roots"] = ROOTS
    if requests:
        return {"resultType": "input_required", "inputRequests": requests}
    return text("Every declared kind of input has been answered.")


# Prompts -------------------------------------------------------------------------------------------------


def _prompt_text(value: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": {"type": "text", "text": value}}]}


def _simple_prompt(ctx: RequestContext, arguments: dict[str, str]) -> dict[str, Any]:
    return _prompt_text("This is a simple prompt for testing.")


def _prompt_with_arguments(ctx: RequestContext, arguments: dict[str, str]) -> dict[str, Any]:
    return _prompt_text(f"Prompt with arguments: arg1='{arguments['arg1']}', arg2='{arguments['arg2']}'")


def _complete_arguments(ctx: RequestContext, name: str, value: str, filled: dict[str, str]) -> list[str]:
    choices = {"arg1": ["paris", "park", "party"], "arg2": ["world", "wonder"]}.get(name, [])
    return [choice for choice in choices if choice.startswith(value)]


def _prompt_with_embedded_resource(ctx: RequestContext, arguments: dict[str, str]) -> dict[str, Any]:
    resource = {
        "uri": arguments["resourceUri"],
        "mimeType": "text/plain",
        "text": "Embedded resource content for testing.",
    }
    return {
        "messages": [
            {"role": "user", "content": {"type": "resource", "resource": resource}},
            {
                "role": "user",
                "content": {"type": "text", "text": "Please process the embedded resource above."},
            },
        ]
    }


def _prompt_with_image(ctx: RequestContext, arguments: dict[str, str]) -> dict[str, Any]:
    return {
        "messages": [
            {"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}},
            {"role": "user", "content": {"type": "text", "text": "Please analyze the image above."}},
        ]
    }


def _input_required_prompt(ctx: RequestContext, arguments: dict[str, str]) -> dict[str, Any]:
    answers = accepted_form_input(ctx.input_responses, "user_context", CONTEXT)
    if answers is None:
        return form_input_request(CONTEXT, key="user_context", message="What context should the prompt use?")
    return _prompt_text(f"Prompt with context: {answers['context']}")


server.add_prompt(Prompt("test_simple_prompt", "A prompt without arguments.", _simple_prompt))
server.add_prompt(
    Prompt(
        "test_prompt_with_arguments",
        "A prompt with two required arguments.",
        _prompt_with_arguments,
        arguments=(
            PromptArgument("arg1", "First test argument", required=True),
            PromptArgument("arg2", "Second test argument", required=True),
        ),
        complete=_complete_arguments,
    )
)
server.add_prompt(
    Prompt(
        "test_prompt_with_embedded_resource",
        "A prompt embedding the resource it is given.",
        _prompt_with_embedded_resource,
        arguments=(PromptArgument("resourceUri", "URI of the resource to embed", required=True),),
    )
)
server.add_prompt(Prompt("test_prompt_with_image", "A prompt with an image.", _prompt_with_image))
server.add_prompt(
    Prompt(
        "test_input_required_result_prompt", "A prompt that asks for context first.", _input_required_prompt
    )
)


# Resources -----------------------------------------------------------------------------------------------


def _static_text(ctx: RequestContext, uri: str) -> dict[str, Any]:
    content = {
        "uri": uri,
        "mimeType": "text/plain",
        "text": "This is the content of the static text resource.",
    }
    return {"contents": [content]}


def _static_binary(ctx: RequestContext, uri: str) -> dict[str, Any]:
    return {"contents": [{"uri": uri, "mimeType": "image/png", "blob": PNG}]}


def _template_data(ctx: RequestContext, uri: str, variables: dict[str, str]) -> dict[str, Any]:
    data = {"id": variables["id"], "templateTest": True, "data": f"Data for ID: {variables['id']}"}
    return {"contents": [{"uri": uri, "mimeType": "application/json", "text": json.dumps(data)}]}


server.add_resource(
    Resource(
        "test://static-text",
        "static-text",
        _static_text,
        description="A static text resource.",
        mime_type="text/plain",
    )
)
server.add_resource(
    Resource(
        "test://static-binary",
        "static-binary",
        _static_binary,
        description="A static binary resource (a PNG).",
        mime_type="image/png",
    )
)
server.add_resource_template(
    ResourceTemplate(
        "test://template/{id}/data",
        "template-data",
        _template_data,
        description="Data for any id.",
        mime_type="application/json",
    )
)


# Scenarios that are not scored for 2026-07-28 yet, served all the same ------------------------------------

JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@server.tool(description="Tool with JSON Schema 2020-12 features", input_schema=JSON_SCHEMA_2020_12)
def json_schema_2020_12_tool(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    return text("ok")


@server.tool(
    description="Echo arguments that clients mirror into Mcp-Param-* headers.",
    input_schema={
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
        },
    },
)
def test_header_params(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    return text(json.dumps(arguments, sort_keys=True))


# 2025-11-25 fixtures: written once in the 2026 style, served to 2025 sessions as real server requests ----


def _elicited(ctx: RequestContext, key: str, message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The client's whole answer to one elicitation, or the input_required result that asks it."""
    answer = (ctx.input_responses or {}).get(key)
    if isinstance(answer, dict):
        return answer
    if not ctx.supports_elicitation("form"):
        raise ToolError("This tool needs a client that supports elicitation.")
    request = {"method": "elicitation/create", "params": {"message": message, "requestedSchema": schema}}
    return {"resultType": "input_required", "inputRequests": {key: request}}


def _asking(answer: dict[str, Any]) -> bool:
    return answer.get("resultType") == "input_required"


@server.tool(description="Log three messages at info level while it runs.")
def test_tool_with_logging(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    ctx.log("info", "Tool execution started")
    time.sleep(0.05)
    ctx.log("info", "Tool processing data")
    time.sleep(0.05)
    ctx.log("info", "Tool execution completed")
    return text("Tool with logging executed successfully")


@server.tool(
    description="Ask the client's model to answer a prompt.",
    input_schema={"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]},
)
def test_sampling(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    answer = sampled_text(ctx, "sampling")
    if answer is not None:
        return text(f"LLM response: {answer}")
    if "sampling" not in ctx.client_capabilities:
        raise ToolError("This tool needs a client that supports sampling.")
    prompt = arguments.get("prompt") if isinstance(arguments, dict) else None
    if not isinstance(prompt, str):
        raise ToolError("Pass the prompt as the 'prompt' argument.")
    return {"resultType": "input_required", "inputRequests": {"sampling": sampling(prompt)}}


@server.tool(
    description="Ask the user for a username and an e-mail address.",
    input_schema={"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
)
def test_elicitation(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    schema = {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }
    message = arguments.get("message") if isinstance(arguments, dict) else None
    if not isinstance(message, str):
        raise ToolError("Pass the message to show the user as the 'message' argument.")
    answer = _elicited(ctx, "user", message, schema)
    if answer is None or _asking(answer):
        return answer or {}
    return text(
        f"User response: <action: {answer.get('action')}, content: {json.dumps(answer.get('content'))}>"
    )


def _completed(ctx: RequestContext, key: str, message: str, schema: dict[str, Any]) -> dict[str, Any]:
    answer = _elicited(ctx, key, message, schema)
    if answer is None or _asking(answer):
        return answer or {}
    content = json.dumps(answer.get("content", {}))
    return text(f"Elicitation completed: action={answer.get('action')}, content={content}")


@server.tool(description="Ask with a default for every primitive type (SEP-1034).")
def test_elicitation_sep1034_defaults(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "default": True},
        },
    }
    return _completed(ctx, "defaults", "Please review the defaults", schema)


@server.tool(description="Ask with every kind of enum (SEP-1330).")
def test_elicitation_sep1330_enums(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    titled = [
        {"const": f"value{n}", "title": title}
        for n, title in enumerate(("First Option", "Second Option", "Third Option"), start=1)
    ]
    chosen = [
        {"const": f"value{n}", "title": title}
        for n, title in enumerate(("First Choice", "Second Choice", "Third Choice"), start=1)
    ]
    schema = {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "oneOf": titled},
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {"type": "array", "items": {"anyOf": chosen}},
        },
    }
    return _completed(ctx, "enums", "Please pick", schema)


# Tasks (the 2026-07-28 tasks extension): each task tool's handler makes the task, and its turn does the
# work on a worker (manage.py db_worker), once per turn -------------------------------------------------

CONFIRM_DELETE = (AutoFormField(name="confirm", type="boolean", required=True),)
# How often a turn that sleeps looks whether its task was cancelled: a cancel settles within this.
CANCEL_CHECK_SECONDS = 0.1


def _as_task(ctx: RequestContext, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return start_task(ctx, tool=tool, arguments=arguments, runner="queue").created_result()


def _sleep(ctx: RequestContext, seconds: float) -> None:
    """Sleep ``seconds``, stopping as soon as the task this turn works for is cancelled."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        ctx.check_cancelled()
        time.sleep(min(left, CANCEL_CHECK_SECONDS))
    ctx.check_cancelled()


@server.tool(
    description="Greet someone, at once (never a task).",
    input_schema={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
)
def greet(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    return text(f"Hello, {arguments.get('name')}!")


def _compute(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    seconds = arguments.get("seconds", 0)
    if not isinstance(seconds, int | float) or isinstance(seconds, bool) or seconds < 0:
        raise ToolError("seconds must be a number of seconds, 0 or more.")
    _sleep(ctx, seconds)
    return text(f"Computed {arguments.get('label') or 'it'} in {seconds} s.")


@server.tool(
    description="Compute for `seconds` seconds: a task when the client takes tasks, else at once.",
    input_schema={
        "type": "object",
        "properties": {"seconds": {"type": "number", "minimum": 0}, "label": {"type": "string"}},
    },
    task_turn=_compute,
)
def slow_compute(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    if ctx.accepts_tasks:
        return _as_task(ctx, "slow_compute", arguments)
    return _compute(ctx, arguments)


def _fail_as_a_tool(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    _sleep(ctx, 1)
    raise ToolError("The job failed, as this job always does.")


@server.tool(
    description="A job that only runs as a task, and fails as a tool after a second.",
    task_turn=_fail_as_a_tool,
)
def failing_job(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    if not ctx.accepts_tasks:
        raise tasks_required("failing_job")
    return _as_task(ctx, "failing_job", arguments)


def _fail_as_a_protocol(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    raise ProtocolError(INVALID_PARAMS, "The job's input was refused, as this job's always is.")


@server.tool(
    description="A job that only runs as a task, and fails with a JSON-RPC error.",
    task_turn=_fail_as_a_protocol,
)
def protocol_error_job(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    if not ctx.accepts_tasks:
        raise tasks_required("protocol_error_job")
    return _as_task(ctx, "protocol_error_job", arguments)


def _delete_when_confirmed(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    filename = arguments.get("filename") or "the file"
    response = input_response(ctx.input_responses, "confirm")
    if response is not None and response.action != "accept":
        return text(f"Kept {filename}: the user chose to {response.action}.")
    answer = accepted_form_input(ctx.input_responses, "confirm", CONFIRM_DELETE)
    if answer is None:
        return form_input_request(CONFIRM_DELETE, key="confirm", message=f"Delete {filename}?")
    return text(f"Deleted {filename}." if answer["confirm"] else f"Kept {filename}.")


@server.tool(
    description="Delete a file once the user confirms: a task that asks them when the client takes tasks.",
    input_schema={"type": "object", "properties": {"filename": {"type": "string"}}, "required": ["filename"]},
    task_turn=_delete_when_confirmed,
)
def confirm_delete(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    # Served without tasks too, asking in the request: it is the first tool listed, which the
    # http-header-validation scenario calls with no capabilities and expects an answer from.
    if ctx.accepts_tasks:
        return _as_task(ctx, "confirm_delete", arguments)
    if not ctx.supports_elicitation():
        raise ToolError("Deleting a file needs a client that can ask the user to confirm.")
    return _delete_when_confirmed(ctx, arguments)


def _two_names(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    first = accepted_form_input(ctx.input_responses, "first", NAME)
    second = accepted_form_input(ctx.input_responses, "second", NAME)
    if first is not None and second is not None:
        return text(f"Names: {first['name']} and {second['name']}.")
    asked = {"first": first, "second": second}
    requests = {
        key: form_input_request(NAME, key=key, message=f"The {key} name?")["inputRequests"][key]
        for key, answer in asked.items()
        if answer is None
    }
    return {"resultType": "input_required", "inputRequests": requests}


@server.tool(description="A task that asks two questions at once.", task_turn=_two_names)
def multi_input(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    if not ctx.accepts_tasks:
        raise tasks_required("multi_input")
    return _as_task(ctx, "multi_input", arguments)


def _greet_from_a_task(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    return text(f"Hello, {arguments['name']}, from a task!")


@server.tool(
    description="Ask for a name (multi round-trip), then greet them from a task.",
    task_turn=_greet_from_a_task,
)
def test_tool_with_task(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
    if not ctx.accepts_tasks:
        raise tasks_required("test_tool_with_task")
    answers = accepted_form_input(ctx.input_responses, "user_name", NAME)
    if answers is None:
        return form_input_request(NAME, key="user_name", message="What is your name?")
    # The round's answer moves into the task: no requestState travels with it.
    return _as_task(ctx, "test_tool_with_task", {"name": answers["name"]})
