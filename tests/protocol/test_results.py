"""What every result leaving the core carries (spec §4): resultType, serverInfo, cache hints where a
method needs them, and the -32021 check of an input_required result."""

from __future__ import annotations

import pytest

from mcpforms.protocol.errors import ProtocolError
from mcpforms.protocol.results import SERVER_INFO_KEY, finish_complete, finish_input_required

INFO = {"name": "s", "version": "1"}
FORM = {"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {}}}


def test_a_complete_result_is_stamped_without_touching_the_handlers():
    handlers = {"content": [], "_meta": {"mine": 1}}
    finished = finish_complete(
        handlers, method="tools/call", server_info=INFO, ttl_ms=60000, cache_scope="private"
    )
    assert finished == {"content": [], "_meta": {"mine": 1, SERVER_INFO_KEY: INFO}, "resultType": "complete"}
    assert handlers == {"content": [], "_meta": {"mine": 1}}


@pytest.mark.parametrize("method", ["server/discover", "tools/list", "resources/read"])
def test_a_cacheable_method_gets_cache_hints_unless_the_handler_chose_its_own(method):
    finished = finish_complete({}, method=method, server_info=INFO, ttl_ms=60000, cache_scope="private")
    assert (finished["ttlMs"], finished["cacheScope"]) == (60000, "private")
    own = {"ttlMs": 5, "cacheScope": "public"}
    finished = finish_complete(own, method=method, server_info=INFO, ttl_ms=60000, cache_scope="private")
    assert (finished["ttlMs"], finished["cacheScope"]) == (5, "public")


def test_an_input_required_result_carries_no_cache_hints():
    result = {
        "resultType": "input_required",
        "inputRequests": {"q": FORM},
        "ttlMs": 5,
        "cacheScope": "public",
    }
    finished = finish_input_required(result, capabilities={"elicitation": {}}, server_info=INFO)
    assert finished == {
        "resultType": "input_required",
        "inputRequests": {"q": FORM},
        "_meta": {SERVER_INFO_KEY: INFO},
    }


def test_an_input_request_the_client_cannot_answer_never_reaches_it():
    result = {"resultType": "input_required", "inputRequests": {"q": FORM}}
    with pytest.raises(ProtocolError) as raised:
        finish_input_required(result, capabilities={}, server_info=INFO)
    assert raised.value.code == -32021
    assert raised.value.data == {"requiredCapabilities": {"elicitation": {"form": {}}}}


@pytest.mark.parametrize(
    "result",
    [
        {"resultType": "input_required"},
        {"resultType": "input_required", "inputRequests": {}},
        {"resultType": "input_required", "inputRequests": ["q"]},
        {"resultType": "input_required", "requestState": 7},
    ],
)
def test_a_malformed_input_required_result_is_a_bug(result, caplog):
    with pytest.raises(ProtocolError) as raised:
        finish_input_required(result, capabilities={"elicitation": {}}, server_info=INFO)
    assert raised.value.as_error() == {"code": -32603, "message": "Internal error"}
    assert "malformed input_required" in caplog.text


def test_a_state_alone_is_an_input_required_result():
    result = {"resultType": "input_required", "requestState": "token"}
    assert finish_input_required(result, capabilities={}, server_info=INFO)["requestState"] == "token"
