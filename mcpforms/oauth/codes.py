"""An authorization code is good for one token request; a second one revokes what the first got.

OAuth 2.1 §4.1.3 (and RFC 6749 §4.1.2): a code used twice is refused, and the server SHOULD revoke the
tokens issued on it, since a second use means someone else holds the code (with PKCE, its verifier too)
and may be the one who redeemed it first. django-oauth-toolkit refuses the replay but deletes a code
when it is used, so it cannot tell a replay from a made-up code, and revokes nothing.

What a code was exchanged for is found without keeping the code: the refresh token its exchange issues
starts a token family (the toolkit's reuse detection, which every rotated successor inherits) whose id
is derived from the code. A code that comes back finds that family, and its whole family is revoked: the
refresh tokens, and the access tokens they issued. A made-up code finds none and changes nothing.

Two token requests with one code at the same moment are a second use too: the one that finds the code
gone, wherever the toolkit reads it again, is refused with ``invalid_grant`` (not the toolkit's
``DoesNotExist``, a 500) and revokes the family, the other one's tokens included.
"""

from __future__ import annotations

import contextlib
import hashlib
import uuid
from collections.abc import Iterator
from typing import Any

from oauth2_provider.models import get_grant_model, get_refresh_token_model
from oauthlib.common import Request  # type: ignore[import-untyped]
from oauthlib.oauth2.rfc6749 import errors  # type: ignore[import-untyped]

AUTHORIZATION_CODE = "authorization_code"

_FAMILY_PURPOSE = b"mcpforms.oauth.codes family\x00"


def family_of(code: str) -> uuid.UUID:
    """The token family of what ``code`` is exchanged for.

    A digest, as an access token's checksum is: the code is a random secret of 160 bits or more, so the
    family's id, kept for as long as its refresh tokens are, names no code anyone could still redeem.
    """
    digest = hashlib.sha256(_FAMILY_PURPOSE + code.encode("utf-8", "surrogatepass")).digest()
    return uuid.UUID(bytes=digest[:16])


def revoke_issued_on(code: str) -> None:
    """Revoke every refresh token of ``code``'s family and the access tokens they issued."""
    family = family_of(code)
    model = get_refresh_token_model()
    # A made-up code is the common case here: one read, and no write, for a family that never was.
    if model.objects.filter(token_family=family).exists():
        model.revoke_family(family)


@contextlib.contextmanager
def _still_unused(code: str, request: Request) -> Iterator[None]:
    """A read of a code validated a moment ago, which another request may have redeemed since."""
    try:
        yield
    except get_grant_model().DoesNotExist:
        revoke_issued_on(code)
        raise errors.InvalidGrantError(request=request) from None


class SingleUseCodes:
    """A django-oauth-toolkit validator mixin: codes are used once, and a second use revokes the first's
    tokens. ``mcpforms.oauth.validator.Validator`` has it."""

    def validate_code(
        self, client_id: str, code: str, client: Any, request: Request, *args: Any, **kwargs: Any
    ) -> bool:
        valid: bool = super().validate_code(client_id, code, client, request, *args, **kwargs)  # type: ignore[misc]
        if not valid:
            revoke_issued_on(code)  # a code used before, or one that never was
        return valid

    def get_code_challenge(self, code: str, request: Request) -> str | None:
        with _still_unused(code, request):
            challenge: str | None = super().get_code_challenge(code, request)  # type: ignore[misc]
        return challenge

    def get_code_challenge_method(self, code: str, request: Request) -> str | None:
        with _still_unused(code, request):
            method: str | None = super().get_code_challenge_method(code, request)  # type: ignore[misc]
        return method

    def confirm_redirect_uri(
        self, client_id: str, code: str, redirect_uri: str, client: Any, *args: Any, **kwargs: Any
    ) -> bool:
        request = kwargs.get("request", args[0] if args else None)
        with _still_unused(code, request):
            confirmed: bool = super().confirm_redirect_uri(  # type: ignore[misc]
                client_id, code, redirect_uri, client, *args, **kwargs
            )
        return confirmed

    def invalidate_authorization_code(
        self, client_id: str, code: str, request: Request, *args: Any, **kwargs: Any
    ) -> None:
        try:
            super().invalidate_authorization_code(client_id, code, request, *args, **kwargs)  # type: ignore[misc]
        except errors.InvalidGrantError:
            # Redeemed by another request since this one was validated: its tokens are stored, and so
            # are this one's, which nobody will be given.
            revoke_issued_on(code)
            raise

    def _create_refresh_token(
        self, request: Request, refresh_token_code: str, access_token: Any, previous_refresh_token: Any
    ) -> Any:
        refresh_token = super()._create_refresh_token(  # type: ignore[misc]
            request, refresh_token_code, access_token, previous_refresh_token
        )
        if previous_refresh_token is None and request.grant_type == AUTHORIZATION_CODE:
            # Within the toolkit's transaction that stores the pair: never a moment with another family.
            refresh_token.token_family = family_of(request.code)
            refresh_token.save(update_fields=["token_family"])
        return refresh_token
