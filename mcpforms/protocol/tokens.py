"""The one signing policy for everything mcpforms hands a client and reads back: requestState and URL-mode
links. Built on ``django.core.signing``; one salt per purpose, so a token of one kind never passes for
another; ``STATE_KEY`` (with its fallbacks) or else ``SECRET_KEY`` (with ``SECRET_KEY_FALLBACKS``), so a
key rotates the same way for both.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import zlib
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.core import signing
from django.utils.encoding import force_bytes, force_str

from mcpforms.conf import conf


class InvalidToken(Exception):
    """A token that is tampered, truncated, expired or malformed. ``reason`` is for the log only."""

    message = "Invalid or expired token"

    def __init__(self, reason: str, *, expired: bool = False) -> None:
        super().__init__(self.message)
        self.reason = reason
        self.expired = expired


def signing_keys() -> list[str | bytes]:
    """The key everything is signed with now, then the older ones a token may still carry."""
    if conf.STATE_KEY is None:
        return [settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS]
    return [conf.STATE_KEY, *conf.STATE_KEY_FALLBACKS]


# zlib's window (2**12 bytes) and memory level (1-9): what a requestState of a few KB needs.
_WINDOW_BITS = 12
_MEMORY_LEVEL = 4


@lru_cache(maxsize=64)
def _keyed(salt: str, secret: str | bytes, algorithm: str) -> hmac.HMAC:
    # What ``salted_hmac`` derives from the salt and the secret on every call, derived once: copies of it
    # give the very same HMACs, so tokens minted before and after verify alike.
    hasher = getattr(hashlib, algorithm)
    return hmac.new(hasher(force_bytes(salt) + force_bytes(secret)).digest(), digestmod=hasher)


def keyed_hmac(salt: str, value: str | bytes, secret: str | bytes, *, algorithm: str = "sha256") -> hmac.HMAC:
    """``django.utils.crypto.salted_hmac(salt, value, secret, algorithm=algorithm)``, with the key derived
    once per salt and secret."""
    mac: hmac.HMAC = _keyed(salt, secret, algorithm).copy()
    mac.update(force_bytes(value))
    return mac


class _Signer(signing.TimestampSigner):
    """Django's ``TimestampSigner`` with its HMAC key derived once per key (``keyed_hmac``)."""

    def signature(self, value: str | bytes, key: str | bytes | None = None) -> str:
        mac = keyed_hmac(force_str(self.salt) + "signer", value, key or self.key, algorithm=self.algorithm)
        return signing.b64_encode(mac.digest()).decode()


def _signer(salt: str) -> signing.TimestampSigner:
    key, *fallbacks = signing_keys()
    return _signer_with(key, tuple(fallbacks), salt)


@lru_cache(maxsize=32)
def _signer_with(key: str | bytes, fallbacks: tuple[str | bytes, ...], salt: str) -> signing.TimestampSigner:
    # A signer holds nothing but its keys and salt: one per combination serves every request, where
    # building one per token read the settings again each time. A rotated key is another combination.
    return _Signer(key=key, fallback_keys=list(fallbacks), salt=salt)


def sign(payload: Any, *, salt: str, compress: bool = True) -> str:
    """Sign a JSON-serialisable ``payload`` with a timestamp; ``compress`` when that makes it shorter.

    The token is ``TimestampSigner.sign_object``'s, which ``unsign`` reads, made with a smaller zlib
    window: ``zlib.compress`` sets up 256 KiB of state for a payload of a few hundred bytes, which cost
    more than the rest of minting a requestState, where a 4 KiB window compresses it as well.
    """
    data = json.dumps(payload, separators=(",", ":")).encode("latin-1")  # ASCII: json escapes the rest
    flag = ""
    if compress:
        packer = zlib.compressobj(6, zlib.DEFLATED, _WINDOW_BITS, _MEMORY_LEVEL)
        compressed = packer.compress(data) + packer.flush()
        if len(compressed) < len(data) - 1:
            data, flag = compressed, "."  # the flag is signed with the rest: no zip bomb passes as JSON
    return _signer(salt).sign(flag + signing.b64_encode(data).decode())


def unsign(token: Any, *, salt: str, max_age: int) -> Any:
    """Verify ``token`` and return its payload; raise ``InvalidToken`` otherwise."""
    if not isinstance(token, str):
        raise InvalidToken(f"not a string: {type(token).__name__}")
    try:
        return _signer(salt).unsign_object(token, max_age=max_age)
    except signing.SignatureExpired as error:
        raise InvalidToken(f"expired: {error}", expired=True) from None
    except (signing.BadSignature, ValueError, UnicodeDecodeError) as error:
        raise InvalidToken(f"bad signature or encoding: {error}") from None
