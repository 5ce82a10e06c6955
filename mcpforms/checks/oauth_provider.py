"""The authorization server's settings (``OAUTH2_PROVIDER``) against ``mcpforms.oauth.settings()``: each
item that matters to hosted assistants, and what they do when it falls short."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning
from django.utils.module_loading import import_string

from mcpforms.checks.common import oauth_in_use, settings_check, toolkit_installed
from mcpforms.conf import integer

_POSITIVE = integer()


@dataclass(frozen=True)
class _Advice:
    """One ``OAUTH2_PROVIDER`` item that matters to hosted assistants, and what they do if it falls short."""

    key: str
    falls_short: Callable[[Any, Any], bool]  # (the live value, the preset's)
    consequence: str
    id: str
    only_if: str | None = None  # a key whose live value must be true for this one to matter


def _is_false(live: Any, recommended: Any) -> bool:
    return not live  # a callable (PKCE_REQUIRED per client) counts as true


def _loaded(value: Any) -> Any:
    return import_string(value) if isinstance(value, str) else value


def _not_a_kind_of(live: Any, recommended: Any) -> bool:
    """Whether the live class (or any of a list) is not the preset's or a subclass of it."""
    paths = recommended if isinstance(recommended, tuple) else [recommended]
    try:
        wanted = [_loaded(path) for path in paths]
    except ImportError:
        return False  # mcpforms' own class does not import here: nothing to compare with
    try:
        found = [_loaded(path) for path in (live if isinstance(live, list | tuple) else [live])]
    except ImportError:
        return True  # the toolkit cannot import it either
    return not all(any(isinstance(cls, type) and issubclass(cls, each) for cls in found) for each in wanted)


def _without_none(live: Any, recommended: Any) -> bool:
    return "none" not in (live or ())


def _other_set(live: Any, recommended: Any) -> bool:
    return set(live or ()) != set(recommended)


def _longer(live: Any, recommended: Any) -> bool:
    return not _POSITIVE.accepts(live) or live > recommended


_ADVICE = [
    _Advice(
        key="CIMD_ENABLED",
        falls_short=_is_false,
        consequence="client ID metadata documents are off, so Claude, ChatGPT and VS Code fall back to "
        "dynamic registration, or cannot sign in where that is off too",
        id="mcpforms.W303",
    ),
    _Advice(
        key="CIMD_METADATA_FETCHER",
        falls_short=_not_a_kind_of,
        consequence="django-oauth-toolkit's own fetcher refuses the documents of claude.ai (an extra "
        "jwt-bearer grant) and ChatGPT (private_key_jwt offered with none) as they are published",
        id="mcpforms.W304",
        only_if="CIMD_ENABLED",
    ),
    _Advice(
        key="CIMD_REGISTRATION_PERMISSION_CLASSES",
        falls_short=_not_a_kind_of,
        consequence="anyone who posts to the anonymous token endpoint can make the server fetch a URL and "
        "store a client",
        id="mcpforms.W305",
        only_if="CIMD_ENABLED",
    ),
    _Advice(
        key="OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED",
        falls_short=_without_none,
        consequence="'none' is missing from the token endpoint's auth methods: Claude uses its client "
        "metadata document only when it is listed, so Claude falls back to dynamic registration",
        id="mcpforms.W306",
        only_if="CIMD_ENABLED",
    ),
    _Advice(
        key="DCR_ENABLED",
        falls_short=_is_false,
        consequence="dynamic registration is off: Cursor, mcp-remote, the MCP Inspector and Claude without "
        "client metadata documents cannot register",
        id="mcpforms.W307",
    ),
    _Advice(
        key="DCR_REGISTRATION_PERMISSION_CLASSES",
        falls_short=_not_a_kind_of,
        consequence="hosted assistants register anonymously: the toolkit's default turns them away, and "
        "letting everyone in has no throttle, no cap on unused registrations and no redirect URI policy",
        id="mcpforms.W308",
        only_if="DCR_ENABLED",
    ),
    _Advice(
        key="OAUTH2_GRANT_TYPES_SUPPORTED",
        falls_short=_other_set,
        consequence="the metadata advertises another grant type set than an MCP client may use",
        id="mcpforms.W309",
    ),
    _Advice(
        key="OAUTH2_BACKEND_CLASS",
        falls_short=_not_a_kind_of,
        consequence="the authorization response's iss comes from the request's Host header; a client whose "
        "browser reached the site under another name than BASE_URL's throws the code away",
        id="mcpforms.W310",
        only_if="COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS",
    ),
    _Advice(
        key="PKCE_REQUIRED",
        falls_short=_is_false,
        consequence="an authorization code without PKCE can be redeemed by whoever intercepts it (OAuth 2.1)",
        id="mcpforms.W311",
    ),
    _Advice(
        key="COMPLIANT_BCP_RFC9700_PKCE_METHOD",
        falls_short=_is_false,
        consequence="'plain' PKCE is advertised and accepted; MCP clients must use S256",
        id="mcpforms.W312",
    ),
    _Advice(
        key="COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS",
        falls_short=_is_false,
        consequence="authorization responses carry no iss (RFC 9207): ChatGPT then uses a client per "
        "connector instead of its stable one, and 2026-07-28 clients cannot detect a mix-up",
        id="mcpforms.W313",
    ),
    _Advice(
        key="COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT",
        falls_short=_is_false,
        consequence="the implicit grant is accepted (OAuth 2.1 removed it)",
        id="mcpforms.W314",
    ),
    _Advice(
        key="COMPLIANT_BCP_RFC9700_PASSWORD_GRANT",
        falls_short=_is_false,
        consequence="the password grant is accepted (OAuth 2.1 removed it): a client could ask for the "
        "user's password",
        id="mcpforms.W315",
    ),
    _Advice(
        key="ALLOW_LOCALHOST_LOOPBACK",
        falls_short=_is_false,
        consequence="Claude Code's http://localhost:<any port>/callback is refused (RFC 8252 §7.3)",
        id="mcpforms.W316",
    ),
    _Advice(
        key="ACCESS_TOKEN_EXPIRE_SECONDS",
        falls_short=_longer,
        consequence="access tokens outlive an hour; the MCP spec asks for short-lived ones, since "
        "assistants keep them in their stores",
        id="mcpforms.W317",
    ),
    _Advice(
        key="ROTATE_REFRESH_TOKEN",
        falls_short=_is_false,
        consequence="refresh tokens do not rotate, which OAuth 2.1 requires for public clients (every "
        "client metadata document client is one)",
        id="mcpforms.W318",
    ),
    _Advice(
        key="OAUTH2_VALIDATOR_CLASS",
        falls_short=_not_a_kind_of,
        consequence="tokens are issued for any resource, and unbound ones, which every MCP endpoint "
        "refuses, when a client names none: it signs in again and again",
        id="mcpforms.W319",
    ),
]
OAUTH_PROVIDER_CHECK_IDS = {advice.id for advice in _ADVICE} | {"mcpforms.E307", "mcpforms.E308"}


@settings_check(Tags.security)
def check_oauth_provider(configured: dict[str, Any]) -> list[CheckMessage]:
    """``OAUTH2_PROVIDER`` against ``mcpforms.oauth.settings()``, item by item, where OAuth is configured."""
    if not oauth_in_use(configured) or not toolkit_installed():
        return []  # without the toolkit, mcpforms.E304 says so
    from oauth2_provider.settings import DEFAULTS as TOOLKIT_DEFAULTS  # optional: mcpforms[oauth]

    from mcpforms.oauth.preset import settings as preset

    live = getattr(settings, "OAUTH2_PROVIDER", None) or {}
    if not isinstance(live, dict):
        return []  # the toolkit fails on it at once
    messages: list[CheckMessage] = [
        Error(
            f"OAUTH2_PROVIDER has a key django-oauth-toolkit does not know, {unknown!r}: it is ignored.",
            hint=f"Check its spelling: did you mean {_closest(unknown, TOOLKIT_DEFAULTS)!r}?",
            id="mcpforms.E307",
        )
        for unknown in sorted(set(live) - set(TOOLKIT_DEFAULTS))
    ]
    messages += _issuer_endpoint(live)
    recommended = preset()
    for advice in _ADVICE:
        if advice.only_if is not None and not live.get(advice.only_if, TOOLKIT_DEFAULTS[advice.only_if]):
            continue
        value = live.get(advice.key, TOOLKIT_DEFAULTS[advice.key])
        if advice.falls_short(value, recommended[advice.key]):
            messages.append(
                Warning(
                    f"OAUTH2_PROVIDER[{advice.key!r}] is {value!r}: {advice.consequence}.",
                    hint=f"Use OAUTH2_PROVIDER = mcpforms.oauth.settings(), which sets it to "
                    f"{recommended[advice.key]!r}.",
                    id=advice.id,
                )
            )
    return messages


def _closest(name: str, known: Any) -> str:
    import difflib

    found = difflib.get_close_matches(name, list(known), n=1)
    return found[0] if found else "ACCESS_TOKEN_EXPIRE_SECONDS"


def _issuer_endpoint(live: dict[str, Any]) -> list[CheckMessage]:
    """An OIDC_ISS_ENDPOINT is the ``iss`` the toolkit puts in responses: it must be the published issuer."""
    from mcpforms.oauth.metadata import issuer

    configured, published = live.get("OIDC_ISS_ENDPOINT"), issuer()
    if not configured or published is None or configured == published:
        return []
    return [
        Error(
            f"OAUTH2_PROVIDER['OIDC_ISS_ENDPOINT'] is {configured!r}, but the authorization server's "
            f"metadata names the issuer {published!r}: clients refuse every response whose iss differs.",
            hint=f"Remove OIDC_ISS_ENDPOINT, or set it to {published!r}.",
            id="mcpforms.E308",
        )
    ]
