"""``reply_to``: what the core answers when answering a message raised, in either era, never a traceback."""

from __future__ import annotations

import logging

import pytest
from django.db import InterfaceError

from mcpforms.protocol.errors import ProtocolError, SignInRequired
from mcpforms.protocol.reply import ACCEPTED, Reply, reply_to

REQUEST = {"jsonrpc": "2.0", "id": "r-1", "method": "tools/list"}


def raising(error: Exception):
    def answer() -> Reply:
        raise error

    return answer


def test_an_answer_that_raises_nothing_is_the_reply():
    assert reply_to(REQUEST, lambda: ACCEPTED) is ACCEPTED


def test_a_protocol_error_is_refused_with_its_status_echoing_the_id():
    reply = reply_to(REQUEST, raising(ProtocolError(-32602, "Invalid params: cursor")))
    assert reply == Reply(
        400, {"jsonrpc": "2.0", "id": "r-1", "error": {"code": -32602, "message": "Invalid params: cursor"}}
    )
    assert reply_to(REQUEST, raising(SignInRequired("the tool 'x'"))).status == 401


@pytest.mark.parametrize("payload", [[REQUEST], {"id": None}, {"id": 1.5}, {"id": True}, "junk"])
def test_an_id_that_cannot_be_read_is_echoed_as_null(payload):
    reply = reply_to(payload, raising(ProtocolError(-32600, "Invalid request")))
    assert reply.body is not None and reply.body["id"] is None


def test_a_bug_is_an_internal_error_with_its_detail_in_the_log_only(caplog):
    reply = reply_to(REQUEST, raising(KeyError("secret detail")))
    assert reply == Reply(
        200, {"jsonrpc": "2.0", "id": "r-1", "error": {"code": -32603, "message": "Internal error"}}
    )
    assert "secret detail" in caplog.text
    assert [record.levelno for record in caplog.records] == [logging.ERROR]


def test_a_database_out_of_reach_is_a_503_to_retry():
    reply = reply_to(REQUEST, raising(InterfaceError("connection already closed")))
    assert reply.status == 503 and reply.body is not None
    assert reply.body["error"] == {"code": -32010, "message": "The database is unavailable; retry shortly"}
