"""The one signing policy: one salt per purpose, STATE_KEY for every token, the reason kept for the log."""

from __future__ import annotations

import json

import pytest
from django.core import signing
from django.test import override_settings
from django.utils.crypto import salted_hmac

from mcpforms.protocol.state import ARGUMENTS_SALT, arguments_digest
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


def test_tokens_are_the_ones_djangos_own_signer_makes_and_reads():
    # A rolling upgrade, or a token minted by Django's own TimestampSigner before the signing keys were
    # derived once per key: both read each other's tokens, under the current key and a rotated one.
    payload = {"answers": {"plan": "pro", "note": "again and again " * 20}, "pending": ["email"]}
    with override_settings(MCPFORMS={"STATE_KEY": OTHER_KEY, "STATE_KEY_FALLBACKS": [KEY]}):
        for key in (OTHER_KEY, KEY):
            django_token = signing.TimestampSigner(key=key, salt=STATE_SALT).sign_object(
                payload, compress=True
            )
            assert unsign(django_token, salt=STATE_SALT, max_age=60) == payload
        ours = sign(payload, salt=STATE_SALT)
        assert ours.startswith(".")  # compressed, as Django marks it
        django_signer = signing.TimestampSigner(key=OTHER_KEY, salt=STATE_SALT)
        assert django_signer.unsign_object(ours, max_age=60) == payload
        tampered = ours[:-1] + ("A" if ours[-1] != "A" else "B")
        with pytest.raises(InvalidToken):
            unsign(tampered, salt=STATE_SALT, max_age=60)


def test_the_arguments_digest_of_a_state_is_django_salted_hmac():
    # States minted before the key was derived once per key still match their arguments.
    arguments = {"plan": "pro", "age": 36}
    expected = salted_hmac(ARGUMENTS_SALT, '{"age":36,"plan":"pro"}', secret=KEY, algorithm="sha256")
    assert arguments_digest(arguments, KEY) == expected.hexdigest()
