"""django-oauth-toolkit, made to issue tokens only for this site's MCP endpoints (RFC 8707).

The toolkit accepts any absolute URL as a ``resource`` and mints an unbound token when a request names
none, which every mcpforms endpoint refuses (a token meant for anything is one an MCP server must not
accept): the client would sign in, be refused, and sign in again. ``Validator`` refuses a ``resource``
that is not one of the site's endpoints with ``invalid_target``, at the authorization endpoint (before
the consent page) and at the token endpoint; binds a request without one to the site's endpoint when
there is exactly one; and refuses it, naming the endpoints, when there are several. The toolkit itself
keeps a token request from widening what was authorized (RFC 8707 §2.2).

The endpoints are found where they are served: every endpoint ``mcpforms.api.build_api`` made that the
root URLconf mounts, on ``BASE_URL``, as the resource server judges a token's audience.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from django.http import HttpRequest
from oauth2_provider.models import get_grant_model
from oauth2_provider.oauth2_backends import OAuthLibCore
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauth2_provider.settings import oauth2_settings
from oauthlib.common import Request  # type: ignore[import-untyped]
from oauthlib.oauth2.rfc6749 import errors  # type: ignore[import-untyped]

from mcpforms.conf import conf
from mcpforms.mounts import endpoint_paths
from mcpforms.oauth.codes import SingleUseCodes
from mcpforms.oauth.metadata import issuer, with_issuer
from mcpforms.oauth.resource import issued_for

# RFC 7636 §4.2: an S256 challenge is the unpadded base64url of a SHA-256 digest, 43 characters; anything else
# matches no code_verifier, so the code it would be bound to could never be redeemed.
S256_CHALLENGE = re.compile(r"[A-Za-z0-9_-]{43}")


def mcp_endpoints() -> list[str]:
    """The resource identifier of every MCP endpoint the site serves: ``BASE_URL`` + its path."""
    base = conf.BASE_URL
    if not isinstance(base, str) or not base:
        return []
    return sorted({base.rstrip("/") + ("" if path == "/" else path) for path in endpoint_paths()})


def bound_resources(requested: Sequence[str], endpoints: Sequence[str], request: Request) -> list[str]:
    """The resources a grant or token is for: those requested, each one of ``endpoints``; else the one
    endpoint. Raises ``invalid_target`` (RFC 8707 §2) with what would work."""
    if not endpoints:
        raise _invalid_target(
            "This site serves no MCP endpoint a token could be for (is MCPFORMS['BASE_URL'] set?).", request
        )
    choices = ", ".join(endpoints)
    for resource in requested:
        if not any(issued_for([resource], endpoint) for endpoint in endpoints):
            raise _invalid_target(
                f"{resource!r} is not an MCP endpoint of this site; ask for {choices}.", request
            )
    if requested:
        return list(requested)
    if len(endpoints) == 1:
        return list(endpoints)
    raise _invalid_target(
        f"Name the MCP endpoint the token is for with resource=: one of {choices}.", request
    )


def _invalid_target(description: str, request: Request) -> errors.CustomOAuth2Error:
    return errors.CustomOAuth2Error(error="invalid_target", description=description, request=request)


def refuse_unusable_challenge(request: Request) -> None:
    """Refuse an authorization request whose PKCE challenge no token request could meet, before consent.

    The toolkit refuses ``plain`` only once the user has consented (when it stores the code), and stores
    an S256 challenge of any shape; either way the user would approve a sign-in that then fails.
    """
    challenge = request.code_challenge
    if challenge is None:
        return  # none at all: oauthlib refuses it where PKCE is required (OAuth 2.1 §4.1.1)
    method = request.code_challenge_method
    if method == "plain" and oauth2_settings.COMPLIANT_BCP_RFC9700_PKCE_METHOD:
        raise errors.InvalidRequestError(
            description='The "plain" code_challenge_method is not accepted here; use "S256".', request=request
        )
    if method == "S256" and not S256_CHALLENGE.fullmatch(challenge):
        raise errors.InvalidRequestError(
            description="code_challenge must be the unpadded base64url SHA-256 of the code_verifier: "
            "43 characters of A-Z, a-z, 0-9, '-' and '_' (RFC 7636 §4.2).",
            request=request,
        )


def unstorable(value: object) -> bool:
    """Whether ``value`` is text no stored client id, code or token could equal: it holds a NUL.

    PostgreSQL has no NUL in text, and psycopg 3 refuses a lookup with one with a ``DataError``, which
    django-oauth-toolkit does not catch (it catches psycopg 2's ``ValueError``): a 500, where the answer
    is that no such client or code exists.
    """
    return isinstance(value, str) and "\x00" in value


def refuse_unstorable_nonce(request: Request) -> None:
    """Refuse an authorization request whose ``nonce`` its grant could not store, before consent.

    The toolkit keeps the nonce on the grant, in a column of 255 characters: PostgreSQL refused a longer
    one, or one with a NUL, at the INSERT after the user had consented (a 500).
    """
    nonce = getattr(request, "nonce", None)
    if not isinstance(nonce, str):
        return
    limit = get_grant_model()._meta.get_field("nonce").max_length
    if (limit is not None and len(nonce) > limit) or unstorable(nonce):
        raise errors.InvalidRequestError(
            description=f"nonce must be at most {limit} characters, without NUL.", request=request
        )


def _active(user: Any) -> bool:
    return user is not None and bool(getattr(user, "is_active", False))


def _requested(request: Request) -> list[str]:
    """The ``resource`` parameters of an authorization request, every one of them (RFC 8707 §2 lets a
    client repeat it; oauthlib keeps only the last)."""
    value = getattr(request, "resource", None)
    if isinstance(value, list):
        return value  # the toolkit's own list: from the consent form, or a token request
    if not value:
        return []
    in_query = [item for key, item in parse_qsl(urlsplit(request.uri).query) if key == "resource"]
    return in_query or [value]


class Validator(SingleUseCodes, OAuth2Validator):  # type: ignore[misc]
    """django-oauth-toolkit's validator, binding every grant and token to one of the site's endpoints;
    a code used twice revokes what it was exchanged for (``mcpforms.oauth.codes``)."""

    def validate_scopes(
        self, client_id: str, scopes: list[str], client: Any, request: Request, *args: Any, **kwargs: Any
    ) -> bool:
        # Every authorization request passes here before the consent page and again when it is answered
        # (oauthlib right after its own PKCE step): what a token would be for is judged with what it would
        # allow, and whether any code_verifier could redeem it.
        if getattr(request, "response_type", None) is not None:
            refuse_unusable_challenge(request)
            refuse_unstorable_nonce(request)
        bound_resources(_requested(request), mcp_endpoints(), request)
        valid: bool = super().validate_scopes(client_id, scopes, client, request, *args, **kwargs)
        return valid

    def _load_application(self, client_id: str, request: Request) -> Any:
        # Every path that finds a client by its id passes here: the authorization request, the token
        # and revocation endpoints' client authentication (from the body or Basic credentials).
        if unstorable(client_id):
            return None
        return super()._load_application(client_id, request)

    def authenticate_client(self, request: Request, *args: Any, **kwargs: Any) -> bool:
        authenticated: bool = super().authenticate_client(request, *args, **kwargs)
        # Credentials of one client with the client_id of another: oauthlib calls it server_error, which
        # tells the client the server failed. The client's authentication failed (RFC 6749 §5.2).
        named = getattr(request, "client_id", None)
        return authenticated and (not named or named == request.client.client_id)

    def _authenticate_basic_auth(self, request: Request) -> bool:
        # base64 is ASCII, and a WSGI server hands a header on as latin-1 text: b64decode() refuses the
        # rest with a ValueError the toolkit does not catch (it catches binascii.Error), a 500.
        credentials = self._extract_basic_auth(request)
        if credentials is not None and not credentials.isascii():
            return False
        authenticated: bool = super()._authenticate_basic_auth(request)
        return authenticated

    def validate_code(
        self, client_id: str, code: str, client: Any, request: Request, *args: Any, **kwargs: Any
    ) -> bool:
        if unstorable(code):
            return False
        # A user deactivated since consenting gets no token: the toolkit checks only the code.
        valid: bool = super().validate_code(client_id, code, client, request, *args, **kwargs)
        return valid and _active(request.user)

    def validate_refresh_token(
        self, refresh_token: str, client: Any, request: Request, *args: Any, **kwargs: Any
    ) -> bool:
        # Nor by refreshing: the toolkit would keep minting tokens for a deactivated user for as long as
        # REFRESH_TOKEN_EXPIRE_SECONDS, each refused by the endpoint, and the client would never learn it
        # has to sign in again (invalid_grant tells it, RFC 6749 §5.2).
        valid: bool = super().validate_refresh_token(refresh_token, client, request, *args, **kwargs)
        return valid and _active(request.user)

    def save_authorization_code(
        self, client_id: str, code: dict[str, Any], request: Request, *args: Any, **kwargs: Any
    ) -> None:
        request.resource = bound_resources(_requested(request), mcp_endpoints(), request)
        super().save_authorization_code(client_id, code, request, *args, **kwargs)

    def _check_and_set_request_resource(self, request: Request) -> None:
        # The toolkit's step of a token request that settles ``request.resource``: from the request, the
        # grant or the refresh token, never wider than these (RFC 8707 §2.2). A grant from before this
        # validator may name anything, or nothing.
        super()._check_and_set_request_resource(request)
        request.resource = bound_resources(request.resource, mcp_endpoints(), request)


class Backend(OAuthLibCore):  # type: ignore[misc]
    """django-oauth-toolkit's request backend, with the ``iss`` the metadata names and JSON refusals.

    The toolkit derives RFC 9207's ``iss`` from the Host header a request came with; a client compares it
    with the metadata's ``issuer`` by simple string comparison and throws the code away when they differ.
    A refusal raised while a token is stored (``invalid_target`` above, or the toolkit's own when a token
    request widens its resource) comes without the JSON content type RFC 6749 §5.2 requires.
    """

    def create_authorization_response(
        self, request: HttpRequest, scopes: Any, credentials: Any, allow: bool
    ) -> tuple[Any, ...]:
        uri, headers, body, status = super().create_authorization_response(
            request, scopes, credentials, allow
        )
        published = issuer()
        if (
            uri is not None
            and published is not None
            and oauth2_settings.COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS
        ):
            uri = with_issuer(uri, published)
            headers["Location"] = uri
        return uri, headers, body, status

    def create_token_response(self, request: HttpRequest) -> tuple[Any, ...]:
        uri, headers, body, status = super().create_token_response(request)
        if status >= 400:
            headers = {"Content-Type": "application/json", "Cache-Control": "no-store", **headers}
        return uri, headers, body, status
