"""django-mcpz 1.2's ``MCPServer`` with a ``signup`` tool equivalent to the demo's: the URLconf of
``bench.mcpz_settings``.

Round one asks with ``elicit()`` (``input_required``, the answers so far in a signed ``requestState``);
round two binds the answers to the demo's ``SignupForm`` (``bench/forms.py``) and answers what its tool does;
``signup_write`` also inserts the signup into the bench table, in a transaction of its own. Like
the SDK's server, and unlike mcpforms, it records nothing: a retried last round would run again.
"""

from typing import Any, Literal

import msgspec  # type: ignore[import-not-found]
from django.db import transaction
from django.http import HttpRequest
from django.urls import path
from django_mcpz.server import MCPServer, ToolError, elicit, public  # type: ignore[import-not-found]

from bench.flows import INPUT_KEY, REQUESTED_SCHEMA
from bench.forms import SignupForm
from bench.writes import insert_signup

server = MCPServer(name="bench-mcpz", version="1", auth=public, minimum_protocol_version="2026-07-28")


class SignupParams(msgspec.Struct):  # type: ignore[misc]
    plan: Literal["pro", "team"] | None = None
    email: str | None = None


class SignupResult(msgspec.Struct):  # type: ignore[misc]
    created: bool
    email: str
    plan: str


def valid_form(request: HttpRequest, params: SignupParams) -> SignupForm:
    answers: dict[str, Any] = elicit(request, "Create your account", REQUESTED_SCHEMA, key=INPUT_KEY)
    form = SignupForm(data={"plan": params.plan, "email": params.email, **answers})
    if not form.is_valid():
        raise ToolError(form.errors.as_text())
    return form


@server.tool(description="Create an account for the newsletter service.", title="Sign up")  # type: ignore[untyped-decorator]
def signup(request: HttpRequest, params: SignupParams) -> SignupResult:
    form = valid_form(request, params)
    return SignupResult(created=True, email=form.cleaned_data["email"], plan=form.cleaned_data["plan"])


@server.tool(description="Create an account for the newsletter service.", title="Sign up")  # type: ignore[untyped-decorator]
def signup_write(request: HttpRequest, params: SignupParams) -> SignupResult:
    """``signup``, and the signup inserted into the bench table (``bench/writes.py``) in a transaction."""
    form = valid_form(request, params)
    with transaction.atomic():
        insert_signup(form.cleaned_data)
    return SignupResult(created=True, email=form.cleaned_data["email"], plan=form.cleaned_data["plan"])


urlpatterns = [path("mcp", server)]
