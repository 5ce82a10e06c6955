from __future__ import annotations

import base64
import hashlib
import json
import logging
import re
import secrets
import time
import zlib
from types import SimpleNamespace
from typing import Any
from unittest import mock

import pytest
from django.core import signing
from django.test import override_settings

from mcpforms.protocol.errors import ProtocolError
from mcpforms.protocol.state import (
    ANONYMOUS,
    SALT,
    InvalidState,
    StaleState,
    StateLimit,
    arguments_digest,
    dump_state,
    load_state,
    principal_for,
)

BINDING: dict[str, Any] = {
    "server": "default",
    "tool": "signup",
    "arguments": {"plan": "pro"},
    "principal": "user:1",
}


def mint(**overrides):
    values = {**BINDING, "answers": {"email": "ada@example.com"}, "pending": ["plan"]}
    return dump_state(**(values | overrides))


def test_round_trip():
    state = load_state(mint(), **BINDING)
    assert state.tool == "signup"
    assert state.principal == "user:1"
    assert state.answers == {"email": "ada@example.com"}
    assert state.pending == ("plan",)
    assert state.version is None
    assert abs(state.issued_at - time.time()) < 60


def test_the_round_travels_signed_and_none_is_minted_past_max_rounds():
    assert load_state(mint(), **BINDING).rounds == 1
    assert load_state(mint(rounds=3), **BINDING).rounds == 3
    with override_settings(MCPFORMS={"MAX_ROUNDS": 3}):
        assert load_state(mint(rounds=3), **BINDING).rounds == 3
        with pytest.raises(StateLimit, match=r"asked 3 times .*MAX_ROUNDS"):
            mint(rounds=4)


def test_none_is_minted_longer_than_max_state_bytes_and_none_that_long_is_verified():
    token = mint()
    with override_settings(MCPFORMS={"MAX_STATE_BYTES": len(token)}):
        assert load_state(token, **BINDING).answers == {"email": "ada@example.com"}
    with override_settings(MCPFORMS={"MAX_STATE_BYTES": len(token) - 1}):
        with pytest.raises(StateLimit, match="too large"):
            mint(answers={"email": "ada@example.com", "padding": secrets.token_hex(1000)})
        with pytest.raises(ProtocolError) as refused:
            load_state(token, **BINDING)
    assert refused.value.code == -32602


def test_two_tokens_for_the_same_answers_are_two_flows_unless_one_continues_the_other():
    first, second = load_state(mint(), **BINDING), load_state(mint(), **BINDING)
    assert first.answers == second.answers
    assert first.flow != second.flow
    continued = load_state(mint(flow=first.flow), **BINDING)
    assert continued.flow == first.flow


def test_the_arguments_digest_is_keyed():
    # Readable in the token: a plain hash of a low-entropy argument could be guessed offline.
    payload = json.loads(decoded_payload(mint()))
    canonical = json.dumps({"plan": "pro"}, sort_keys=True, separators=(",", ":"))
    assert payload["args"] != hashlib.sha256(canonical.encode()).hexdigest()
    assert payload["args"] == arguments_digest({"plan": "pro"})
    assert (
        arguments_digest({"plan": "pro"}, "another key of at least fifty characters .........")
        != payload["args"]
    )


def test_token_is_compact_and_signed_with_timestamp():
    token = mint()
    assert token.startswith(".")  # compressed payload
    assert token.count(":") == 2  # payload:timestamp:signature


def test_argument_order_does_not_matter():
    token = mint(arguments={"a": 1, "b": [1, 2]})
    assert load_state(token, **(BINDING | {"arguments": {"b": [1, 2], "a": 1}}))


def test_the_token_is_readable_and_carries_exactly_the_answers_it_is_given():
    # Signed, not encrypted: what goes in is the caller's choice (the flow never puts a secret in).
    token = mint(answers={"email": "ada@example.com", "age": 30})
    assert json.loads(decoded_payload(token))["answers"] == {"email": "ada@example.com", "age": 30}
    assert load_state(token, **BINDING).answers == {"email": "ada@example.com", "age": 30}


def decoded_payload(token: str) -> str:
    payload = token.split(":")[0].lstrip(".")
    return zlib.decompress(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))).decode()


@pytest.mark.parametrize(
    "binding",
    [
        {"server": "billing"},
        {"tool": "other_tool"},
        {"arguments": {"plan": "team"}},
        {"arguments": {}},
        {"principal": "user:2"},
        {"principal": ANONYMOUS},
    ],
)
def test_a_token_bound_to_something_else_is_refused(binding):
    with pytest.raises(InvalidState, match="Invalid or expired requestState"):
        load_state(mint(), **(BINDING | binding))


def test_version_binding():
    token = mint(version="3")
    assert load_state(token, **BINDING, version="3").version == "3"
    with pytest.raises(StaleState) as caught:
        load_state(token, **BINDING, version="4")
    assert caught.value.reason == "minted for another version"
    # Stale only when everything else holds: another principal is plainly invalid, not stale.
    with pytest.raises(InvalidState) as other:
        load_state(token, **(BINDING | {"principal": "user:9"}), version="4")
    assert not isinstance(other.value, StaleState)
    with pytest.raises(InvalidState):
        load_state(mint(), **BINDING, version="3")


def test_every_single_bit_flip_is_refused():
    token = mint()
    raw = token.encode()
    for index in range(len(raw)):
        for bit in (1, 4, 32):
            flipped = bytearray(raw)
            flipped[index] ^= bit
            try:
                candidate = flipped.decode()
            except UnicodeDecodeError:
                continue
            if candidate == token:  # pragma: no cover - a flip always changes the token
                continue
            with pytest.raises(InvalidState):
                load_state(candidate, **BINDING)


def test_every_truncation_is_refused():
    token = mint()
    for length in range(len(token)):
        with pytest.raises(InvalidState):
            load_state(token[:length], **BINDING)
    with pytest.raises(InvalidState):
        load_state(token + "A", **BINDING)


@pytest.mark.parametrize("token", [None, 123, ["x"], {"a": 1}, b"bytes"])
def test_non_string_tokens_are_refused(token):
    with pytest.raises(InvalidState) as caught:
        load_state(token, **BINDING)
    assert caught.value.reason.startswith("not a string")


def test_expiry():
    token = mint()
    with override_settings(MCPFORMS={"STATE_MAX_AGE": 60}):
        assert load_state(token, **BINDING)
        with mock.patch("time.time", return_value=time.time() + 61), pytest.raises(InvalidState) as caught:
            load_state(token, **BINDING)
    assert caught.value.reason.startswith("expired")


def test_the_reason_is_logged_but_not_in_the_message(caplog):
    with (
        caplog.at_level(logging.INFO, logger="mcpforms.protocol.state"),
        pytest.raises(InvalidState) as caught,
    ):
        load_state(mint(), **(BINDING | {"tool": "other"}))
    assert str(caught.value) == "Invalid or expired requestState"
    assert "minted for another tool" not in str(caught.value)
    assert "minted for another tool" in caplog.text


def test_secret_key_rotation_with_fallbacks():
    with override_settings(SECRET_KEY="old-key-" + "x" * 40):
        token = mint()
    with override_settings(SECRET_KEY="new-key-" + "y" * 40, SECRET_KEY_FALLBACKS=["old-key-" + "x" * 40]):
        assert load_state(token, **BINDING)
    with override_settings(SECRET_KEY="new-key-" + "y" * 40), pytest.raises(InvalidState):
        load_state(token, **BINDING)


def test_dedicated_state_key_with_its_own_fallbacks():
    key_a, key_b = "a" * 40, "b" * 40
    with override_settings(MCPFORMS={"STATE_KEY": key_a}):
        token = mint()
    # Signed with the dedicated key, not SECRET_KEY.
    with pytest.raises(InvalidState):
        load_state(token, **BINDING)
    with override_settings(MCPFORMS={"STATE_KEY": key_b, "STATE_KEY_FALLBACKS": [key_a]}):
        assert load_state(token, **BINDING)


def test_the_salt_names_the_purpose():
    # A value signed by another part of the project (another salt) is not a requestState.
    other = signing.TimestampSigner(salt="somewhere.else").sign_object({"tool": "signup"})
    with pytest.raises(InvalidState):
        load_state(other, **BINDING)
    assert SALT == "mcpforms.state.request"


@pytest.mark.parametrize(
    "payload",
    [
        ["not", "an", "object"],
        {"tool": "signup", "args": arguments_digest({"plan": "pro"}), "principal": "user:1", "version": None},
        {
            "tool": "signup",
            "args": arguments_digest({"plan": "pro"}),
            "principal": "user:1",
            "version": None,
            "iat": "now",
            "answers": {},
            "pending": [],
            "flow": "n",
        },
        {
            "tool": "signup",
            "args": arguments_digest({"plan": "pro"}),
            "principal": "user:1",
            "version": None,
            "iat": 1,
            "answers": {},
            "pending": [],
        },
    ],
)
def test_malformed_payloads_are_refused_even_when_signed(payload):
    token = signing.TimestampSigner(salt=SALT).sign_object(payload, compress=True)
    with pytest.raises(InvalidState):
        load_state(token, **BINDING)


def test_principal_for():
    assert principal_for(None) == ANONYMOUS
    assert principal_for(SimpleNamespace(is_authenticated=False, pk=None)) == ANONYMOUS
    assert principal_for(SimpleNamespace(is_authenticated=True, pk=7)) == "user:7"


def test_arguments_digest_is_canonical():
    assert arguments_digest({"a": 1, "b": 2}) == arguments_digest({"b": 2, "a": 1})
    assert arguments_digest({"a": 1}) != arguments_digest({"a": "1"})


def _well_formed(**overrides: Any) -> dict[str, Any]:
    """A payload ``load_state`` accepts for ``BINDING`` once it carries our salt and key."""
    payload = {
        "server": "default",
        "tool": "signup",
        "args": arguments_digest({"plan": "pro"}),
        "principal": "user:1",
        "iat": int(time.time()),
        "flow": "n",
        "answers": {"email": "ada@example.com"},
        "pending": ["plan"],
        "version": None,
        "rounds": 1,
    }
    return payload | overrides


def test_a_well_formed_payload_signed_with_our_salt_is_accepted():
    token = signing.TimestampSigner(salt=SALT).sign_object(_well_formed(), compress=True)
    assert load_state(token, **BINDING).answers == {"email": "ada@example.com"}


@pytest.mark.parametrize(
    "sign",
    [
        lambda payload: signing.TimestampSigner().sign_object(payload, compress=True),
        lambda payload: signing.TimestampSigner(salt="somewhere.else").sign_object(payload, compress=True),
        lambda payload: signing.dumps(payload, compress=True),
    ],
    ids=["no-salt", "another-salt", "signing.dumps"],
)
def test_a_well_formed_payload_signed_without_our_salt_is_refused(sign):
    with pytest.raises(InvalidState) as caught:
        load_state(sign(_well_formed()), **BINDING)
    assert caught.value.reason.startswith("bad signature")


def test_with_a_dedicated_state_key_a_token_signed_without_our_salt_is_refused():
    key = "k" * 40
    with override_settings(MCPFORMS={"STATE_KEY": key}):
        payload = _well_formed()  # its arguments digest is keyed with STATE_KEY too
        salted = signing.TimestampSigner(key=key, salt=SALT).sign_object(payload, compress=True)
        assert load_state(salted, **BINDING).answers == {"email": "ada@example.com"}
        unsalted = signing.TimestampSigner(key=key).sign_object(payload, compress=True)
        with pytest.raises(InvalidState):
            load_state(unsalted, **BINDING)


@pytest.mark.parametrize(
    "malformed",
    [
        {"answers": ["email"]},
        {"answers": "ada@example.com"},
        {"answers": None},
        {"pending": "plan"},
        {"pending": {"plan": True}},
        {"pending": None},
        {"rounds": "1"},
        {"rounds": None},
        {"key": 7},
        {"key": ["secret"]},
    ],
)
def test_answers_or_pending_of_the_wrong_type_are_refused_even_when_signed(malformed):
    token = signing.TimestampSigner(salt=SALT).sign_object(_well_formed(**malformed), compress=True)
    with pytest.raises(InvalidState) as caught:
        load_state(token, **BINDING)
    assert caught.value.reason == "malformed payload"


def test_a_user_object_that_does_not_say_it_is_authenticated_is_anonymous():
    # A user-like object without is_authenticated (a custom auth backend's) fails closed.
    assert principal_for(SimpleNamespace(pk=7)) == ANONYMOUS


def test_the_arguments_digest_is_the_same_in_every_release():
    # A requestState minted before an upgrade (or by a worker still on the previous release, in a rolling
    # deploy) must verify after it: the canonical form, the salt and the algorithm are part of the token.
    key = "a fixed key of at least fifty characters, for this test"
    digest = arguments_digest({"plan": "pro", "seats": [1, 2], "note": None}, key)
    assert digest == "caeb2d74a985fb5d21df171da51500e887ce6d2a7ab8ea22367e6cce6ed55cfa"


def test_the_limits_tell_the_model_how_to_go_on():
    with override_settings(MCPFORMS={"MAX_ROUNDS": 3}), pytest.raises(StateLimit) as rounds:
        mint(rounds=4)
    assert str(rounds.value) == (
        "The user was asked 3 times without completing this, the most one flow may take "
        "(MCPFORMS['MAX_ROUNDS']); nothing was submitted. Start over: call again without requestState."
    )
    with override_settings(MCPFORMS={"MAX_STATE_BYTES": 100}), pytest.raises(StateLimit) as size:
        mint()
    assert re.fullmatch(
        r"The answers are too large to carry to the next round: their requestState would be \d+ bytes, "
        r"more than 100 \(MCPFORMS\['MAX_STATE_BYTES'\]\)\. Nothing was submitted; call again with shorter "
        r"values\.",
        str(size.value),
    )


def test_a_token_of_exactly_max_state_bytes_is_minted():
    # load_state accepts a token of exactly the limit, so dump_state mints one.
    with mock.patch("time.time", return_value=1_800_000_000.0):
        token = mint(flow="f")
        with override_settings(MCPFORMS={"MAX_STATE_BYTES": len(token)}):
            assert mint(flow="f") == token


def test_a_requeststate_longer_than_the_limit_is_refused_with_the_limit():
    with override_settings(MCPFORMS={"MAX_STATE_BYTES": 10}), pytest.raises(ProtocolError) as refused:
        load_state("x" * 11, **BINDING)
    assert refused.value.message == (
        "Invalid params: requestState is longer than 10 bytes (MCPFORMS['MAX_STATE_BYTES'])"
    )


def test_an_expired_requeststate_says_it_expired():
    # As a page token does: a caller can tell "ask again, it timed out" from a forgery.
    token = mint()
    later = mock.patch("time.time", return_value=time.time() + 61)
    with override_settings(MCPFORMS={"STATE_MAX_AGE": 60}), later, pytest.raises(InvalidState) as expired:
        load_state(token, **BINDING)
    assert expired.value.expired
    with pytest.raises(InvalidState) as tampered:
        load_state(mint()[:-1], **BINDING)
    assert not tampered.value.expired


@pytest.mark.parametrize(
    ("token", "binding", "reason"),
    [
        (mint, {"tool": "other"}, "minted for another tool"),
        (mint, {"arguments": {"plan": "team"}}, "minted for other arguments"),
        (
            lambda: signing.TimestampSigner(salt=SALT).sign_object(["not", "an", "object"]),
            {},
            "payload is not an object",
        ),
    ],
    ids=["tool", "arguments", "not-an-object"],
)
def test_a_refusal_is_logged_with_its_tool_and_reason(caplog, token, binding, reason):
    call = BINDING | binding
    with (
        caplog.at_level(logging.INFO, logger="mcpforms.protocol.state"),
        pytest.raises(InvalidState) as caught,
    ):
        load_state(token(), **call)
    assert caught.value.reason == reason
    logged = [record.getMessage() for record in caplog.records if record.name == "mcpforms.protocol.state"]
    assert logged == [f"Rejected requestState for tool {call['tool']!r}: {reason}"]


@pytest.mark.parametrize("malformed", [{"iat": "now"}, {"iat": None}, {"flow": 7}, {"flow": None}])
def test_an_issue_time_or_flow_of_the_wrong_type_is_refused_even_when_signed(malformed):
    token = signing.TimestampSigner(salt=SALT).sign_object(_well_formed(**malformed), compress=True)
    with pytest.raises(InvalidState) as caught:
        load_state(token, **BINDING)
    assert caught.value.reason == "malformed payload"


def test_the_state_names_the_server_that_minted_it():
    # The server is part of a flow's identity (a completed flow is recorded per server).
    assert load_state(mint(), **BINDING).server == "default"


def test_a_flows_secret_travels_only_once_it_has_one():
    assert load_state(mint(), **BINDING).flow_key is None
    assert '"key"' not in json.dumps(signing.TimestampSigner(salt=SALT).unsign_object(mint()))
    assert load_state(mint(flow_key="s3cret"), **BINDING).flow_key == "s3cret"
