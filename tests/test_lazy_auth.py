"""Hosts start sign-in only on a transport-level 401 (or a 403 ``insufficient_scope`` to step up): with
OAuth configured, an anonymous call of a tool that needs a user is asked to sign in instead of hearing
"Unknown tool", on both protocol eras; a token lacking a tool's own scope is told which scopes to ask for.
And the endpoint keeps working under ``LoginRequiredMiddleware``, behind a proxy, below a ``SCRIPT_NAME``
and on an IPv6 address."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django import forms
from django.contrib.auth.models import AnonymousUser, Permission, User
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.test import Client, RequestFactory, override_settings
from django.urls import set_script_prefix

from mcpforms.api import serve
from mcpforms.models import AccessToken
from mcpforms.protocol.era2025.sessions import MemorySessions
from mcpforms.protocol.server import Server
from mcpforms.registry import register, register_prompt, registry_for
from mcpforms.tools import FormTool
from tests import settings as test_settings
from tests.forms import SignupForm
from tests.test_oauth import issue
from tests.wire import APPS, ELICITATION, meta, whoami

pytestmark = pytest.mark.django_db

ENDPOINT = "http://testserver/mcp"
METADATA = "http://testserver/.well-known/oauth-protected-resource/mcp"
OAUTH = {
    "AUTHENTICATION": ["mcpforms.auth.AccessTokenAuth", "mcpforms.oauth.OAuth2Auth"],
    "BASE_URL": "http://testserver",
}
NO_OAUTH = {"AUTHENTICATION": ["mcpforms.auth.AccessTokenAuth"], "BASE_URL": "http://testserver"}
SIGN_IN = f'Bearer realm="mcp", resource_metadata="{METADATA}", scope="mcp"'


class AssignForm(forms.Form):
    """Assign a ticket to a colleague."""

    ticket = forms.CharField()
    assignee = forms.ModelChoiceField(queryset=User.objects.order_by("username"))
    priority = forms.ChoiceField(choices=[("low", "Low"), ("high", "High")], initial="low")


class ScopedTool(FormTool):
    form_class = SignupForm
    name = "scoped"
    scope = "forms.write"


def serving(server: Server) -> Server:
    register(SignupForm, server=server, name="signup")  # open to anonymous callers
    register(SignupForm, server=server, name="members")  # any signed-in user
    register(SignupForm, server=server, name="staff_only", permission="auth.view_user")
    register(ScopedTool, server=server)
    register(SignupForm, server=server, name="scoped_option", scope="forms.write forms.admin")
    register_prompt(SignupForm, server=server, name="welcome", template="Welcome {email}")
    server.tool()(whoami)
    return server


# Anonymous callers get in (the list opens "signup"); the other tools need a user. Sessions in memory:
# a 2025-era call runs on a worker thread, which would not see this test's database transaction.
server = serving(Server(key="lazy", allow_anonymous=["signup", "whoami"], sessions=MemorySessions()))


@pytest.fixture(autouse=True)
def scopes() -> Iterator[None]:
    offered = {"mcp": "Use this site's forms", "forms.write": "Change things", "forms.admin": "Administer"}
    with override_settings(OAUTH2_PROVIDER={"SCOPES": offered, "DEFAULT_SCOPES": ["mcp"]}):
        yield


# Two clients, one per era, each speaking through the HTTP edge ------------------------------------------


class Wire:
    """A client of ``server`` over HTTP, as its era speaks: ``call`` returns the HTTP response."""

    era = ""

    def __init__(self, token: str | None = None, capabilities: dict[str, Any] | None = None) -> None:
        self.token = token
        self.capabilities = capabilities if capabilities is not None else ELICITATION

    def headers(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        headers: dict[str, Any] = {}
        if self.token is not None:
            headers["HTTP_AUTHORIZATION"] = f"Bearer {self.token}"
        return headers

    def payload(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}

    def call(self, method: str, params: dict[str, Any] | None = None) -> HttpResponse:
        params = params or {}
        request = RequestFactory().post(
            "/mcp",
            json.dumps(self.payload(method, params)),
            content_type="application/json",
            **self.headers(method, params),
        )
        request.user = AnonymousUser()
        response = serve(server, request)
        assert isinstance(response, HttpResponse), response
        return response


class Wire2026(Wire):
    era = "2026-07-28"

    def headers(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        headers = {"HTTP_MCP_PROTOCOL_VERSION": self.era, "HTTP_MCP_METHOD": method}
        if isinstance(name := params.get("name") or params.get("uri"), str):
            headers["HTTP_MCP_NAME"] = name
        return super().headers(method, params) | headers

    def payload(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return super().payload(method, {**params, "_meta": meta(self.capabilities, version=self.era)})


class Wire2025(Wire):
    """A 2025-11-25 client: it opens a session first, and names it in every request."""

    era = "2025-11-25"

    def __init__(self, token: str | None = None, capabilities: dict[str, Any] | None = None) -> None:
        super().__init__(token, capabilities)
        self.session: str | None = None
        opened = self.call(
            "initialize",
            {
                "protocolVersion": self.era,
                "capabilities": self.capabilities,
                "clientInfo": {"name": "lazy", "version": "1"},
            },
        )
        assert opened.status_code == 200, opened.content
        self.session = opened["Mcp-Session-Id"]

    def headers(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        headers = {"HTTP_MCP_PROTOCOL_VERSION": self.era}
        if self.session is not None:
            headers["HTTP_MCP_SESSION_ID"] = self.session
        return super().headers(method, params) | headers


@pytest.fixture(params=[Wire2026, Wire2025], ids=["2026-07-28", "2025-11-25"])
def wire(request: pytest.FixtureRequest) -> type[Wire]:
    wire: type[Wire] = request.param
    return wire


def rpc(response: HttpResponse) -> dict[str, Any]:
    """The JSON-RPC message of a response: its JSON body, or the last message of its SSE stream."""
    if response["Content-Type"] == "application/json":
        message: dict[str, Any] = json.loads(response.content)
        return message
    data = [line[6:] for line in response.content.decode().splitlines() if line.startswith("data: ")]
    last: dict[str, Any] = json.loads(data[-1])
    return last


def names(response: HttpResponse, field: str = "tools") -> list[str]:
    assert response.status_code == 200, response.content
    return sorted(entry["name"] for entry in rpc(response)["result"][field])


def assert_sign_in(response: HttpResponse, what: str) -> None:
    """A 401 with the challenge a host needs to offer sign-in (its Connect card), and a body that says so."""
    assert response.status_code == 401, response.content
    assert response["WWW-Authenticate"] == SIGN_IN
    error = rpc(response)["error"]
    assert error["code"] == -32600
    assert error["message"] == (
        f"Unauthorized: {what} needs a signed-in user; sign in (the WWW-Authenticate header says how) "
        "and call again"
    )
    assert rpc(response)["id"] == 7  # the request the client sent, answered


def assert_unknown(response: HttpResponse, code: int, message: str) -> None:
    assert response.status_code == 400, response.content
    assert "WWW-Authenticate" not in response
    error = rpc(response)["error"]
    assert (error["code"], error["message"]) == (code, message)


# Lazy authentication ------------------------------------------------------------------------------------


@override_settings(MCPFORMS=OAUTH)
def test_with_oauth_an_anonymous_call_of_a_tool_that_needs_a_user_asks_to_sign_in(wire):
    client = wire()
    assert_sign_in(client.call("tools/call", {"name": "members", "arguments": {}}), "the tool 'members'")
    # A tool that needs a permission too: only signing in can tell whether the user holds it.
    assert_sign_in(
        client.call("tools/call", {"name": "staff_only", "arguments": {}}), "the tool 'staff_only'"
    )
    # What does not exist is still just unknown, and what is open still opens.
    assert_unknown(client.call("tools/call", {"name": "nope", "arguments": {}}), -32602, "Unknown tool: nope")
    opened = client.call("tools/call", {"name": "signup", "arguments": {}})
    assert opened.status_code == 200
    assert "elicitation/create" in opened.content.decode()  # asked for the form's fields


@override_settings(MCPFORMS=OAUTH)
def test_with_oauth_an_anonymous_prompt_get_asks_to_sign_in(wire):
    client = wire()
    assert_sign_in(client.call("prompts/get", {"name": "welcome", "arguments": {}}), "the prompt 'welcome'")
    assert_unknown(client.call("prompts/get", {"name": "nope"}), -32602, "Unknown prompt: nope")


@override_settings(MCPFORMS=OAUTH)
def test_with_oauth_an_anonymous_read_of_a_protected_tools_form_asks_to_sign_in(wire):
    client = wire(capabilities=APPS)
    assert_sign_in(
        client.call("resources/read", {"uri": "ui://mcpforms/members"}),
        "the resource 'ui://mcpforms/members'",
    )
    assert_unknown(client.call("resources/read", {"uri": "ui://mcpforms/nope"}), -32602, "Resource not found")
    assert (
        "<form"
        in rpc(client.call("resources/read", {"uri": "ui://mcpforms/signup"}))["result"]["contents"][0][
            "text"
        ]
    )


@override_settings(MCPFORMS=NO_OAUTH)
def test_without_oauth_a_protected_tool_stays_indistinguishable_from_an_unknown_one(wire):
    # Nothing could sign the caller in, so nothing says the name exists.
    client = wire(capabilities=ELICITATION | APPS)
    for name in ("members", "staff_only", "nope"):
        assert_unknown(
            client.call("tools/call", {"name": name, "arguments": {}}), -32602, f"Unknown tool: {name}"
        )
    assert_unknown(client.call("prompts/get", {"name": "welcome"}), -32602, "Unknown prompt: welcome")
    assert_unknown(
        client.call("resources/read", {"uri": "ui://mcpforms/members"}), -32602, "Resource not found"
    )
    assert names(client.call("tools/list")) == ["signup", "signup_submit", "whoami"]
    assert names(client.call("prompts/list"), "prompts") == []


@override_settings(MCPFORMS=OAUTH)
def test_with_oauth_an_anonymous_listing_shows_what_signing_in_opens_to_any_user(wire):
    # Listed so that the model may call one, which is what makes the host offer sign-in; a tool that
    # needs a permission besides stays out of the listing, since signing in opens it only to some.
    client = wire(capabilities=ELICITATION | APPS)
    assert names(client.call("tools/list")) == [
        "members",
        "members_submit",
        "scoped",
        "scoped_option",
        "scoped_option_submit",
        "scoped_submit",
        "signup",
        "signup_submit",
        "whoami",
    ]
    assert names(client.call("prompts/list"), "prompts") == ["welcome"]


@override_settings(MCPFORMS=OAUTH)
def test_with_oauth_an_anonymous_listing_shows_what_a_tool_is_for_not_the_data_it_offers(
    wire, application, ada
):
    User.objects.create_user("grace")
    register(AssignForm, server=server, name="assign")  # any signed-in user; its choices are users
    try:
        listed_then_signed_in(wire, application, ada)
    finally:
        registry_for(server).unregister("assign")


def listed_then_signed_in(wire: type[Wire], application: Any, ada: User) -> None:
    client = wire(capabilities=ELICITATION | APPS)
    listing = client.call("tools/list")
    tools = {entry["name"]: entry for entry in rpc(listing)["result"]["tools"]}
    for name in ("assign", "assign_submit"):
        assert name in tools  # listed, so that calling it asks the user to sign in
        schema = tools[name]["inputSchema"]
        assert set(schema["properties"]) == {"ticket", "assignee", "priority"}
        assert schema["properties"]["assignee"] == {"type": "string", "title": "Assignee"}
        assert schema["properties"]["priority"] == {"type": "string", "title": "Priority"}
        assert "_meta" not in tools[name]  # nor the form UI it cannot open yet
    assert "grace" not in listing.content.decode() and "ada" not in listing.content.decode()
    # What anonymous callers may use is listed whole.
    assert "oneOf" in tools["signup"]["inputSchema"]["properties"]["plan"]
    # Signed in, the same tool shows its choices.
    signed_in = wire(token=issue(application, ada, resource=ENDPOINT), capabilities=ELICITATION | APPS)
    (assign,) = [t for t in rpc(signed_in.call("tools/list"))["result"]["tools"] if t["name"] == "assign"]
    assert [choice["title"] for choice in assign["inputSchema"]["properties"]["assignee"]["oneOf"]] == [
        "ada",
        "grace",
    ]


@override_settings(MCPFORMS=OAUTH)
def test_an_app_only_submit_tool_is_unknown_to_a_client_without_apps_whoever_calls(wire, application, ada):
    # Signing in would not make the client render MCP Apps: no challenge, whatever the tool needs.
    for name in ("signup_submit", "members_submit"):
        assert_unknown(
            wire().call("tools/call", {"name": name, "arguments": {}}), -32602, f"Unknown tool: {name}"
        )
    signed_in = wire(token=issue(application, ada, resource=ENDPOINT))
    assert_unknown(
        signed_in.call("tools/call", {"name": "members_submit", "arguments": {}}),
        -32602,
        "Unknown tool: members_submit",
    )


@override_settings(MCPFORMS=OAUTH)
def test_once_signed_in_the_same_call_goes_through_and_what_the_user_may_not_use_stays_unknown(
    wire, application, ada
):
    client = wire(token=issue(application, ada, resource=ENDPOINT))
    answered = client.call("tools/call", {"name": "members", "arguments": {}})
    assert answered.status_code == 200
    assert "elicitation/create" in answered.content.decode()
    # Signed in, a tool the user may not use is unknown again: signing in once more would not help.
    assert_unknown(
        client.call("tools/call", {"name": "staff_only", "arguments": {}}), -32602, "Unknown tool: staff_only"
    )
    ada.user_permissions.add(Permission.objects.get(codename="view_user"))
    allowed = wire(token=issue(application, User.objects.get(pk=ada.pk), resource=ENDPOINT))
    assert "staff_only" in names(allowed.call("tools/list"))


# Per-tool scopes ----------------------------------------------------------------------------------------


def step_up(scopes: str, missing: str) -> str:
    """Every scope the call needs (the endpoint's, then the tool's), and the ones the token lacks."""
    return (
        f'Bearer realm="mcp", resource_metadata="{METADATA}", scope="{scopes}", error="insufficient_scope", '
        f'error_description="The access token lacks the scope {missing}"'
    )


@override_settings(MCPFORMS=OAUTH)
def test_a_token_without_a_tools_scope_is_told_which_scopes_to_ask_for(wire, application, ada):
    client = wire(token=issue(application, ada, resource=ENDPOINT), capabilities=ELICITATION | APPS)
    # Listed (the model may try it, and the host step up), refused when called: 403, every scope at once.
    assert {"scoped", "scoped_option"} <= set(names(client.call("tools/list")))
    for name, scopes in (("scoped", "mcp forms.write"), ("scoped_option", "mcp forms.write forms.admin")):
        response = client.call("tools/call", {"name": name, "arguments": {}})
        assert response.status_code == 403, response.content
        assert response["WWW-Authenticate"] == step_up(scopes, scopes.removeprefix("mcp "))
        error = rpc(response)["error"]
        assert error["code"] == -32600
        needed = scopes.removeprefix("mcp ")
        assert error["message"] == (
            f"Forbidden: the tool {name!r} needs the scope {needed} and the access token lacks {needed}; "
            "ask the authorization server for it"
        )
        # The UI's submit tool runs the same handler: refused the same way.
        submitted = client.call("tools/call", {"name": f"{name}_submit", "arguments": {}})
        assert submitted.status_code == 403
    # Tools that need no scope of their own are not affected.
    assert client.call("tools/call", {"name": "members", "arguments": {}}).status_code == 200


@override_settings(MCPFORMS=OAUTH)
def test_a_token_with_the_tools_scope_and_credentials_without_scopes_may_call_it(wire, application, ada):
    scoped = issue(application, ada, resource=ENDPOINT, scope="mcp forms.write")
    response = wire(token=scoped).call("tools/call", {"name": "scoped", "arguments": {}})
    assert response.status_code == 200
    assert "elicitation/create" in response.content.decode()
    # A token with only part of what a tool needs is refused still.
    assert (
        wire(token=scoped).call("tools/call", {"name": "scoped_option", "arguments": {}}).status_code == 403
    )
    # A personal access token (and a session) carries every scope: Django permissions decide alone.
    personal = AccessToken.objects.issue(ada, "laptop")[1]
    for name in ("scoped", "scoped_option"):
        assert wire(token=personal).call("tools/call", {"name": name, "arguments": {}}).status_code == 200


@override_settings(MCPFORMS=OAUTH)
def test_an_anonymous_call_of_a_scoped_tool_asks_to_sign_in_with_the_base_scopes(wire):
    # The first challenge asks for what the endpoint needs; the tool's own scope comes with its 403.
    assert_sign_in(wire().call("tools/call", {"name": "scoped", "arguments": {}}), "the tool 'scoped'")


def test_a_scope_is_one_or_more_oauth_scope_tokens():
    for bad in ("", "two  spaces", 'quote"', "back\\slash", " lead", "tab\tsep", "é"):
        server = Server(key="scopes-bad")
        register(SignupForm, server=server, name="bad", scope=bad)
        (error,) = registry_for(server).check()
        assert error.id == "mcpforms.E403" and "scope" in error.msg
    for good in ("forms.write", "a b", "urn:example:forms/write"):
        server = Server(key="scopes-good")
        register(SignupForm, server=server, name="good", scope=good)
        assert registry_for(server).check() == []


# Plumbing: LoginRequiredMiddleware, a proxy, SCRIPT_NAME, IPv6 ------------------------------------------


def mcp_post(client: Client, path: str = "/mcp", token: str | None = None, **extra: Any) -> HttpResponseBase:
    payload = Wire2026().payload("tools/list", {})
    headers = {"MCP-Protocol-Version": Wire2026.era, "Mcp-Method": "tools/list"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return client.post(path, json.dumps(payload), content_type="application/json", headers=headers, **extra)


LOGIN_REQUIRED = [*test_settings.MIDDLEWARE, "django.contrib.auth.middleware.LoginRequiredMiddleware"]


@override_settings(MCPFORMS=OAUTH)
def test_the_endpoint_and_its_metadata_answer_under_login_required_middleware(application, ada):
    oauth_token = issue(application, ada, resource=ENDPOINT)
    personal = AccessToken.objects.issue(ada, "cli")[1]
    with override_settings(MIDDLEWARE=LOGIN_REQUIRED):
        client = Client()
        refused = mcp_post(client)
        assert refused.status_code == 401  # the challenge, not a redirect to a login page
        assert refused["WWW-Authenticate"] == SIGN_IN
        assert mcp_post(client, token=oauth_token).status_code == 200
        assert mcp_post(client, "/mcp/", token=personal).status_code == 200
        document = client.get("/.well-known/oauth-protected-resource/mcp")
    assert document.status_code == 200
    assert document.json()["resource"] == ENDPOINT


@override_settings(MCPFORMS=OAUTH, SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https"))
def test_behind_a_proxy_the_audience_is_base_url_whatever_the_forwarded_scheme(application, ada):
    client = Client()
    forwarded = {"HTTP_X_FORWARDED_PROTO": "https"}
    token = issue(application, ada, resource=ENDPOINT)
    assert mcp_post(client, token=token, **forwarded).status_code == 200
    for_https = issue(application, ada, resource="https://testserver/mcp")
    refused = mcp_post(client, token=for_https, **forwarded)
    assert refused.status_code == 401
    assert f'resource_metadata="{METADATA}"' in refused["WWW-Authenticate"]


@override_settings(MCPFORMS=OAUTH)
def test_below_a_script_name_the_resource_includes_the_prefix(application, ada):
    prefixed = "http://testserver/forms/mcp"
    for_prefix = issue(application, ada, resource=prefixed)
    for_root = issue(application, ada, resource=ENDPOINT)
    with override_settings(FORCE_SCRIPT_NAME="/forms"), script_prefix("/forms/"):
        client = Client()
        assert mcp_post(client, token=for_prefix).status_code == 200  # request.path is /forms/mcp
        assert mcp_post(client, token=for_root).status_code == 401
        challenge = mcp_post(client)["WWW-Authenticate"]
        # Where Django serves the document, below the prefix like everything of the site.
        metadata = "http://testserver/forms/.well-known/oauth-protected-resource/forms/mcp"
        assert challenge == f'Bearer realm="mcp", resource_metadata="{metadata}", scope="mcp"'
        document = client.get("/.well-known/oauth-protected-resource/forms/mcp").json()
    assert document["resource"] == prefixed


@contextmanager
def script_prefix(prefix: str) -> Iterator[None]:
    """What Django's WSGI and ASGI handlers do for every request (the test client does not)."""
    set_script_prefix(prefix)
    try:
        yield
    finally:
        set_script_prefix("/")


@override_settings(MCPFORMS=OAUTH)
def test_on_an_ipv6_host_tokens_for_the_bracketed_address_work(application, ada):
    ours = issue(application, ada, resource="http://[::1]:8000/mcp")
    other_port = issue(application, ada, resource="http://[::1]:8001/mcp")
    other_address = issue(application, ada, resource="http://[::2]:8000/mcp")
    with override_settings(MCPFORMS={**OAUTH, "BASE_URL": "http://[::1]:8000"}, ALLOWED_HOSTS=["[::1]"]):
        client = Client(HTTP_HOST="[::1]:8000")
        assert mcp_post(client, token=ours).status_code == 200
        assert mcp_post(client, token=other_port).status_code == 401
        assert mcp_post(client, token=other_address).status_code == 401
        metadata = "http://[::1]:8000/.well-known/oauth-protected-resource/mcp"
        challenge = mcp_post(client)["WWW-Authenticate"]
        assert challenge == f'Bearer realm="mcp", resource_metadata="{metadata}", scope="mcp"'
        document = client.get("/.well-known/oauth-protected-resource/mcp").json()
    assert document["resource"] == "http://[::1]:8000/mcp"


# Checks -------------------------------------------------------------------------------------------------


def scope_warnings() -> list[str]:
    from mcpforms.checks.auth import check_tool_scopes

    return [message.msg for message in check_tool_scopes() if message.id == "mcpforms.W326"]


def test_w326_a_tools_scope_must_be_one_the_authorization_server_offers():
    assert scope_warnings() == []  # without OAuth, a scope changes nothing
    with override_settings(MCPFORMS=OAUTH):
        assert scope_warnings() == []  # every scope is on offer (the fixture's SCOPES)
        with override_settings(OAUTH2_PROVIDER={"SCOPES": {"mcp": "Use", "forms.write": "Change"}}):
            assert scope_warnings() == [
                "The tool 'scoped_option' on the server 'lazy' needs the scope 'forms.admin', which "
                "django-oauth-toolkit does not offer: no access token can carry it, so every OAuth caller "
                "is refused it with a 403."
            ]
