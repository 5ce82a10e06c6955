"""The official Python SDK's ``MCPServer`` with a ``signup`` tool equivalent to the demo's, for uvicorn.

Run by ``bench/http_flow.py`` as ``uvicorn bench.sdk_server:app --workers 2``. Like mcpforms' tool, it
asks for the form's fields with an ``input_required`` result carrying the answers so far in a sealed
``requestState``, validates the answers (a pydantic model with the constraints of ``SignupForm``) and
answers the same structured result; ``signup_write`` also inserts the signup into the bench table of the
SQLite file ``MCPFORMS_BENCH_DB`` names, through ``sqlite3`` (``bench/writes.py``). Unlike it, it records
no completed flow: a retried last round would run again. The workers share one state key, as the SDK
requires of several processes.
"""

from __future__ import annotations

import json
import os
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.request_state import RequestStateSecurity
from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult
from pydantic import BaseModel, Field, ValidationError

from bench.flows import INPUT_KEY, REQUESTED_SCHEMA
from bench.writes import insert_signup_sqlite

# A benchmark's key, never a deployment's.
STATE_KEY = b"mcpforms-bench-state-key-0123456789abcdef"


class Signup(BaseModel):
    email: Annotated[str, Field(max_length=320, pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")]
    plan: Literal["pro", "team"]
    age: Annotated[int, Field(ge=18, le=120)] | None = None
    newsletter: bool = False


server = MCPServer("bench-sdk", request_state_security=RequestStateSecurity(keys=[STATE_KEY]))


def _ask(answers: dict[str, Any]) -> InputRequiredResult:
    params = ElicitRequestFormParams(message="Create your account", requested_schema=REQUESTED_SCHEMA)
    return InputRequiredResult(
        input_requests={INPUT_KEY: ElicitRequest(params=params)}, request_state=json.dumps(answers)
    )


def _valid(ctx: Context, plan: str | None, email: str | None) -> Signup | InputRequiredResult:
    answers: dict[str, Any] = {"plan": plan, "email": email}
    if ctx.request_state is not None:
        answers.update(json.loads(ctx.request_state))
    response = (ctx.input_responses or {}).get(INPUT_KEY)
    if response is not None and getattr(response, "action", None) == "accept":
        answers.update(getattr(response, "content", None) or {})
    try:
        return Signup.model_validate({key: value for key, value in answers.items() if value is not None})
    except ValidationError:
        return _ask(answers)


@server.tool(title="Sign up")
async def signup(
    ctx: Context, plan: Literal["pro", "team"] | None = None, email: str | None = None
) -> dict[str, Any] | InputRequiredResult:
    """Create an account for the newsletter service."""
    valid = _valid(ctx, plan, email)
    if isinstance(valid, InputRequiredResult):
        return valid
    return {"created": True, "email": valid.email, "plan": valid.plan}


@server.tool(title="Sign up")
async def signup_write(
    ctx: Context, plan: Literal["pro", "team"] | None = None, email: str | None = None
) -> dict[str, Any] | InputRequiredResult:
    """Create an account for the newsletter service."""
    valid = _valid(ctx, plan, email)
    if isinstance(valid, InputRequiredResult):
        return valid
    # On the event loop, as a handler that writes through sqlite3 would: the insert takes well under a
    # millisecond, and a thread per call would cost more than it frees.
    insert_signup_sqlite(os.environ["MCPFORMS_BENCH_DB"], valid.model_dump())
    return {"created": True, "email": valid.email, "plan": valid.plan}


app = server.streamable_http_app(stateless_http=True, json_response=True)
