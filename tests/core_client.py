"""A tiny in-process MCP client for the tests: it speaks to ``Server.handle`` with no transport."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from django.contrib.auth.models import AnonymousUser
from django.http import HttpResponse

from mcpforms.api import serve
from mcpforms.models import AccessToken
from mcpforms.protocol.server import Server
from tests import wire

# Most tests import the capabilities they send with the client.
APPS, ELICITATION = wire.APPS, wire.ELICITATION


@dataclass
class CoreClient:
    server: Server
    capabilities: dict[str, Any] = field(default_factory=lambda: dict(ELICITATION))
    user: Any = None
    over_http: bool = False
    _ids: itertools.count[int] = field(default_factory=itertools.count)
    _raw_token: str | None = None

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Return the whole JSON-RPC response body."""
        payload = wire.message(method, params, capabilities=self.capabilities, request_id=next(self._ids))
        if self.over_http:
            return self._post(payload)
        reply = self.server.handle(payload, headers=None, user=self.user)
        assert isinstance(reply.body, dict)
        return reply.body

    def _post(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Through the Streamable HTTP edge, with the headers a 2026-07-28 client sends (spec §8.2)."""
        # A signed-in user calls as an MCP client does: with a personal access token.
        signed_in = self.user is not None and self.user.is_authenticated
        request = wire.http_request(payload, token=self._token() if signed_in else None)
        request.user = AnonymousUser()  # what AuthenticationMiddleware sets for a request with no session
        response = serve(self.server, request)
        assert isinstance(response, HttpResponse), response
        assert response["Content-Type"] == "application/json"
        body: dict[str, Any] = json.loads(response.content)
        return body

    def _token(self) -> str:
        if self._raw_token is None:
            self._raw_token = AccessToken.objects.issue(self.user, "tests")[1]
        return self._raw_token

    def result(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        body = self.send(method, params)
        result: dict[str, Any] = body["result"]
        return result

    def call(self, name: str, arguments: dict[str, Any] | None = None, **params: Any) -> dict[str, Any]:
        return self.result("tools/call", {"name": name, "arguments": arguments or {}, **params})

    def answer(
        self, first: dict[str, Any], name: str, arguments: dict[str, Any] | None = None, **responses: Any
    ) -> dict[str, Any]:
        """Retry ``name``, answering the input requests of ``first`` with ``responses`` (key → result)."""
        params: dict[str, Any] = {"inputResponses": responses}
        if "requestState" in first:
            params["requestState"] = first["requestState"]
        return self.call(name, arguments, **params)


def asked(result: dict[str, Any], key: str) -> dict[str, Any]:
    """The form elicitation params an input_required result asks under ``key``."""
    assert result["resultType"] == "input_required", result
    request = result["inputRequests"][key]
    assert request["method"] == "elicitation/create"
    params: dict[str, Any] = request["params"]
    return params


def accept(**content: Any) -> dict[str, Any]:
    return {"action": "accept", "content": content}


def text(result: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")


def assert_unknown_tool(client: CoreClient, name: str, arguments: dict[str, Any] | None = None) -> None:
    """A tool the client may not use is, to it, no tool: absent from the list, and -32602 when called."""
    body = client.send("tools/call", {"name": name, "arguments": arguments or {}})
    assert body["error"] == {"code": -32602, "message": f"Unknown tool: {name}"}, body
    assert name not in [tool["name"] for tool in client.result("tools/list")["tools"]]


def url_request(result: dict[str, Any], key: str) -> dict[str, Any]:
    assert result["resultType"] == "input_required", result
    request = result["inputRequests"][key]
    assert request["method"] == "elicitation/create"
    params: dict[str, Any] = request["params"]
    assert params["mode"] == "url"
    return params


def page_path(result: dict[str, Any], key: str) -> str:
    url: str = url_request(result, key)["url"]
    assert url.startswith("http://testserver/mcpforms/fill/")
    return urlsplit(url).path
