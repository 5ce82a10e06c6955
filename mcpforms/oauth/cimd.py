"""Client ID Metadata Documents for the hosts people use, on django-oauth-toolkit's resolver.

A client whose ``client_id`` is an https URL is described by the JSON document at that URL (the CIMD draft,
referenced by the MCP authorization spec); django-oauth-toolkit fetches it and keeps it as an Application.
This module plugs into the three settings the toolkit offers for it (``mcpforms.oauth.settings()`` names
all three):

- ``Fetcher`` (``CIMD_METADATA_FETCHER``): the toolkit's SSRF-hardened download, plus a deadline on the
  body, no ports but 443 and no percent-encoded dot segments; then the hosts' documents normalised so the
  toolkit accepts them (claude.ai lists a jwt-bearer grant, ChatGPT picks ``private_key_jwt`` while offering
  ``none``); and pinned copies of the assistants' documents for when their CDN challenges the fetch.
- ``ResolutionPermission`` (``CIMD_REGISTRATION_PERMISSION_CLASSES``): a document is resolved only while a
  signed-in user's authorization request is being served, and only from the hosts in
  ``MCPFORMS['OAUTH_CIMD_HOSTS']``. The toolkit also resolves from the token endpoint, which anyone may
  call: without this, any caller could make the server fetch a URL and store a client row.
- ``Backend`` (``OAUTH2_BACKEND_CLASS``): says whose authorization request is being served. The permission
  is handed only oauthlib's request, which knows nothing of Django's user, so the request backend (the one
  place that sees both) marks the authorization calls of a signed-in user (``SignedInAuthorization``, a
  mixin for a project's own backend). Without it the permission resolves nothing: it fails closed.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import json
import logging
import re
import time
from collections.abc import Iterator, Mapping
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from django.http import HttpRequest
from django.http.request import validate_host
from oauth2_provider.cimd import CIMDError, SafeMetadataFetcher
from oauth2_provider.settings import oauth2_settings

from mcpforms.conf import conf
from mcpforms.oauth.validator import Backend as ValidatorBackend

logger = logging.getLogger(__name__)

# Grants an MCP client signs in with: authorization code + PKCE, and its refresh tokens (OAuth 2.1 has no
# implicit grant; the preset turns it off). Anything else a document lists is not the toolkit's to serve.
GRANT_TYPES = ("authorization_code", "refresh_token")
# The CIMD draft forbids shared-secret methods: the document is public, so a secret in it is no secret.
SHARED_SECRET = re.compile(r"client_secret_")
# RFC 3986 §6.2.2.2: %2E is ".", so "%2e%2e" is a dot segment a server may normalise after the check.
ENCODED_DOT_SEGMENT = re.compile(r"^(?:\.|%2e){1,2}$", re.IGNORECASE)


# Where a document may be resolved ---------------------------------------------------------------------

_signed_in: contextvars.ContextVar[bool] = contextvars.ContextVar("mcpforms_cimd_signed_in", default=False)


@contextlib.contextmanager
def resolving_for(request: HttpRequest) -> Iterator[None]:
    """Let CIMD documents resolve inside this block if ``request``'s user is signed in."""
    user = getattr(request, "user", None)
    token = _signed_in.set(bool(user is not None and user.is_authenticated))
    try:
        yield
    finally:
        _signed_in.reset(token)


class SignedInAuthorization:
    """A request backend mixin: its authorization calls say whether a signed-in user makes them.

    Only these two calls serve an authorization request (the consent page and its answer); the token,
    revocation and introspection endpoints never run inside ``resolving_for``, so they resolve nothing.
    """

    def validate_authorization_request(self, request: HttpRequest) -> Any:
        with resolving_for(request):
            return super().validate_authorization_request(request)  # type: ignore[misc]

    def create_authorization_response(
        self, request: HttpRequest, scopes: Any, credentials: Any, allow: bool
    ) -> tuple[Any, ...]:
        with resolving_for(request):
            result: tuple[Any, ...] = super().create_authorization_response(  # type: ignore[misc]
                request, scopes, credentials, allow
            )
            return result


class Backend(SignedInAuthorization, ValidatorBackend):
    """mcpforms' request backend: the ``iss`` and refusals of ``mcpforms.oauth.validator.Backend``, and
    CIMD resolution for signed-in users' authorization requests."""


def host_allowed(client_id: str) -> bool:
    """Whether ``MCPFORMS['OAUTH_CIMD_HOSTS']`` lets the server fetch documents from this URL's host."""
    hosts = conf.OAUTH_CIMD_HOSTS
    if hosts == "*":
        return True
    host = urlsplit(client_id).hostname
    if not host or not isinstance(hosts, list | tuple):
        return False
    # ALLOWED_HOSTS syntax: "claude.ai" exactly, ".example.com" for the domain and its subdomains.
    return validate_host(host, list(hosts))


class ResolutionPermission:
    """Resolve a client id URL only in a signed-in user's authorization request, from an allowed host.

    The toolkit's resolver calls this before any fetch, from wherever it loads a client: the authorize
    view, and also the token endpoint, which is anonymous. A refusal looks like an unknown client there;
    a client already stored keeps working (a stale one is refreshed at its next authorization instead).
    """

    def has_permission(self, request: Any, client_id: str) -> bool:
        if not _signed_in.get():
            logger.info(
                "Not resolving CIMD client %r outside a signed-in user's authorization request", client_id
            )
            return False
        if not host_allowed(client_id):
            logger.info(
                "Not resolving CIMD client %r: its host is not in MCPFORMS['OAUTH_CIMD_HOSTS']", client_id
            )
            return False
        return True


# Pinned documents ----------------------------------------------------------------------------------------


@functools.cache
def shipped_pins() -> dict[str, dict[str, Any]]:
    """mcpforms' own copies of the assistants' published documents (``mcpforms/oauth/pinned/*.json``).

    Each file carries an ``about`` (what it is, when it was written) next to the ``document`` itself.
    """
    pins: dict[str, dict[str, Any]] = {}
    for entry in resources.files(__package__).joinpath("pinned").iterdir():
        if entry.name.endswith(".json"):
            document: dict[str, Any] = json.loads(entry.read_text(encoding="utf-8"))["document"]
            pins[document["client_id"]] = document
    return pins


def pinned_documents() -> Mapping[str, Mapping[str, Any]]:
    """The pins in force: ``MCPFORMS['OAUTH_CIMD_PINNED']``, or mcpforms' own when it is None."""
    configured = conf.OAUTH_CIMD_PINNED
    return shipped_pins() if configured is None else configured


# Normalising what the hosts publish ------------------------------------------------------------------------


def normalise(document: Mapping[str, Any]) -> dict[str, Any]:
    """The document as the toolkit can store it: a public authorization-code client, or ``CIMDError``."""
    normalised = dict(document)
    grants = document.get("grant_types")
    if grants is not None:
        normalised["grant_types"] = _usable_grants(grants)
    normalised["token_endpoint_auth_method"] = _public_method(document)
    return normalised


def _usable_grants(grants: object) -> list[str]:
    if not isinstance(grants, list) or not all(isinstance(grant, str) for grant in grants):
        raise CIMDError(f"grant_types must be an array of strings, not {grants!r}")
    kept = [grant for grant in grants if grant in GRANT_TYPES]
    if "authorization_code" not in kept:
        raise CIMDError(f"client metadata offers no authorization_code grant (grant_types: {grants!r})")
    # claude.ai lists urn:ietf:params:oauth:grant-type:jwt-bearer, and asks servers to ignore it.
    return kept


def _public_method(document: Mapping[str, Any]) -> str:
    method = document.get("token_endpoint_auth_method", "none")
    if not isinstance(method, str) or SHARED_SECRET.match(method):
        raise CIMDError(f"CIMD clients cannot use a shared secret; got token_endpoint_auth_method {method!r}")
    if method == "none":
        return method
    # ChatGPT picks private_key_jwt and lists "none" among the methods it can do: with PKCE, a public
    # client is what it can be here (the toolkit has no private_key_jwt).
    offered = document.get("token_endpoint_auth_methods_supported")
    if isinstance(offered, list) and "none" in offered:
        return "none"
    raise CIMDError(
        f"token_endpoint_auth_method {method!r} is not one this server does, and the document does not "
        "offer 'none' in token_endpoint_auth_methods_supported"
    )


# The fetch -----------------------------------------------------------------------------------------------


class Fetcher(SafeMetadataFetcher):  # type: ignore[misc]
    """The toolkit's SSRF-hardened fetch, bounded in time, normalised, with pins for when it fails.

    Kept from the toolkit: https only; every resolved address public (loopback, private, link-local and
    the cloud-metadata address, CGNAT, and IPv4 hidden in IPv4-mapped, NAT64, 6to4 or Teredo addresses
    refused), one lookup, the connection made to the checked address; no redirects; a JSON media type;
    16 KiB. Added: the body within the fetch budget, port 443 only, no percent-encoded dot segments.
    """

    _deadline = 0.0

    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        pinned = pinned_documents().get(client_id)  # an exact match: a lookalike URL is another client
        try:
            document, max_age = self.download(client_id)
        except CIMDError as error:
            if pinned is None:
                raise
            # claude.ai's CDN answers some cloud addresses with a 403 HTML challenge.
            logger.warning(
                "CIMD fetch of %s failed (%s); using mcpforms' pinned copy of it", client_id, error
            )
            return normalise(pinned), oauth2_settings.CIMD_METADATA_MIN_AGE_SECONDS
        if pinned is not None:
            _log_divergence(client_id, document, pinned)
        return normalise(document), max_age

    def download(self, client_id: str) -> tuple[dict[str, Any], int]:
        """The document at ``client_id`` and how long it may be kept (the network step)."""
        _refuse_unusual_url(client_id)
        self._deadline = time.monotonic() + oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS
        document: dict[str, Any]
        document, max_age = super().fetch(client_id)
        return document, max_age

    def _read_document(self, response: Any) -> tuple[dict[str, Any], int]:
        result: tuple[dict[str, Any], int] = super()._read_document(_Deadlined(response, self._deadline))
        return result


def _refuse_unusual_url(client_id: str) -> None:
    parts = urlsplit(client_id)
    try:
        port = parts.port
    except ValueError:
        return  # the toolkit refuses it, and says so
    if port not in (None, 443):
        # The hosts publish on 443; another port would let a client id knock on any service of a host.
        raise CIMDError(f"client_id URL must use the https port 443, not {port}")
    if any(ENCODED_DOT_SEGMENT.match(segment) for segment in parts.path.split("/")):
        raise CIMDError("client_id URL must not contain dot path segments, percent-encoded or not")


class _Deadlined:
    """A response whose ``read`` stops at the fetch deadline.

    The toolkit gives urllib3 a ``total`` timeout, but urllib3 applies it per socket read: a body sent a
    byte at a time would hold the worker for hours. Reading with ``read1`` (one socket read each, each
    bounded by the read timeout) and checking the clock between reads bounds the whole body.
    """

    def __init__(self, response: Any, deadline: float) -> None:
        self._response = response
        self._deadline = deadline
        self.status = response.status
        self.headers = response.headers

    def read(self, amt: int) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while size < amt:
            remaining = self._deadline - time.monotonic()
            if remaining <= 0:
                raise CIMDError("client_id document took longer than CIMD_FETCH_TIMEOUT_SECONDS to arrive")
            self._wait_at_most(remaining)
            chunk: bytes = self._response.read1(min(amt - size, 4096))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)

    def _wait_at_most(self, seconds: float) -> None:
        # urllib3's socket, when there is one: the next read then waits no longer than the budget left.
        with contextlib.suppress(AttributeError, OSError):
            self._response.connection.sock.settimeout(seconds)


def _log_divergence(client_id: str, live: Mapping[str, Any], pinned: Mapping[str, Any]) -> None:
    changed = sorted(key for key in set(live) | set(pinned) if live.get(key) != pinned.get(key))
    if changed:
        logger.warning(
            "The live CIMD document of %s differs from mcpforms' pinned copy in %s; the live one is used",
            client_id,
            ", ".join(changed),
        )
