"""The one signing policy for everything mcpforms hands a client and reads back: requestState and URL-mode
links. Built on ``django.core.signing``; one salt per purpose, so a token of one kind never passes for
another; ``STATE_KEY`` (with its fallbacks) or else ``SECRET_KEY`` (with ``SECRET_KEY_FALLBACKS``), so a
key rotates the same way for both.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from django.conf import settings
from django.core import signing

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


def _signer(salt: str) -> signing.TimestampSigner:
    key, *fallbacks = signing_keys()
    return _signer_with(key, tuple(fallbacks), salt)


@lru_cache(maxsize=32)
def _signer_with(key: str | bytes, fallbacks: tuple[str | bytes, ...], salt: str) -> signing.TimestampSigner:
    # A signer holds nothing but its keys and salt: one per combination serves every request, where
    # building one per token read the settings again each time. A rotated key is another combination.
    return signing.TimestampSigner(key=key, fallback_keys=list(fallbacks), salt=salt)


def sign(payload: Any, *, salt: str, compress: bool = True) -> str:
    """Sign a JSON-serialisable ``payload`` with a timestamp; ``compress`` when that makes it shorter."""
    return _signer(salt).sign_object(payload, compress=compress)


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
