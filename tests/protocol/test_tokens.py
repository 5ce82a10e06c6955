"""The one signing policy: one salt per purpose, STATE_KEY for every token, the reason kept for the log."""

from __future__ import annotations

import json

import pytest
from django.test import override_settings

from mcpforms.protocol.state import SALT as STATE_SALT
from mcpforms.protocol.tokens import InvalidToken, sign, unsign
from mcpforms.url_mode import PAGE_SALT

KEY = "k" * 40
OTHER_KEY = "o" * 40


def test_a_token_of_one_purpose_never_passes_for_another():
    token = sign({"e": "1", "b": "2"}, salt=PAGE_SALT)
    assert unsign(token, salt=PAGE_SALT, max_age=60) == {"e": "1", "b": "2"}
    with pytest.raises(InvalidToken) as caught:
        unsign(token, salt=STATE_SALT, max_age=60)
    assert "bad signature" in caught.value.reason
    assert str(caught.value) == "Invalid or expired token"  # the reason never reaches the client


def test_every_token_is_signed_with_state_key_when_it_is_set_and_rotates_with_its_fallbacks():
    with override_settings(MCPFORMS={"STATE_KEY": KEY}):
        page_link = sign({"e": "1"}, salt=PAGE_SALT)
    with pytest.raises(InvalidToken):
        unsign(page_link, salt=PAGE_SALT, max_age=60)  # SECRET_KEY does not verify it
    with override_settings(MCPFORMS={"STATE_KEY": OTHER_KEY, "STATE_KEY_FALLBACKS": [KEY]}):
        assert unsign(page_link, salt=PAGE_SALT, max_age=60) == {"e": "1"}


def test_expiry_and_garbage_are_told_apart_for_the_log():
    token = sign({}, salt=STATE_SALT)
    with pytest.raises(InvalidToken) as expired:
        unsign(token, salt=STATE_SALT, max_age=-1)
    assert expired.value.expired
    for garbage in (None, 7, "", "not-a-token", token[:-3]):
        with pytest.raises(InvalidToken) as caught:
            unsign(garbage, salt=STATE_SALT, max_age=60)
        assert not caught.value.expired


def test_a_token_is_compressed_when_that_makes_it_shorter():
    # Every byte of a requestState counts against MAX_STATE_BYTES: answers that repeat themselves (a long
    # text, many picks) should not fill the budget by their raw length.
    payload = {"note": "the same words again " * 50}
    token = sign(payload, salt=STATE_SALT)
    assert len(token) < len(json.dumps(payload)) / 4
    assert unsign(token, salt=STATE_SALT, max_age=60) == payload
    assert len(sign(payload, salt=STATE_SALT, compress=False)) > len(json.dumps(payload))


def test_the_reason_says_what_was_wrong_for_the_log():
    with pytest.raises(InvalidToken) as not_a_string:
        unsign(7, salt=STATE_SALT, max_age=60)
    assert not_a_string.value.reason == "not a string: int"
    with pytest.raises(InvalidToken) as expired:
        unsign(sign({}, salt=STATE_SALT), salt=STATE_SALT, max_age=-1)
    assert expired.value.reason.startswith("expired: Signature age ")
