"""The ``OAUTH2_PROVIDER`` setting that lets Claude, ChatGPT, VS Code, Cursor and the other MCP hosts sign in.

``OAUTH2_PROVIDER = mcpforms.oauth.settings()`` in a project's settings; keyword arguments replace keys,
``mcpforms.oauth.settings(ACCESS_TOKEN_EXPIRE_SECONDS=900)``. This module imports nothing from Django or
django-oauth-toolkit, so it can be called while the settings module itself is being read.
``manage.py check`` compares the live setting with this one and warns per item that matters to a host
(``mcpforms.W303`` onwards).
"""

from __future__ import annotations

from typing import Any

HOUR = 60 * 60
DAY = 24 * HOUR

# The base scope every token carries (MCPFORMS['OAUTH_SCOPES'] defaults to it): one line on the consent page.
BASE_SCOPE = "mcp"

# Redirect URI schemes: https for hosted assistants, http for RFC 8252 loopback redirects (desktop clients,
# matched on any port), and Cursor's custom scheme, without which its whole dynamic registration is refused.
# Which registrations may keep an http or custom-scheme URI is mcpforms.oauth.dcr's policy.
REDIRECT_SCHEMES = ["https", "http", "cursor"]


def settings(**overrides: Any) -> dict[str, Any]:
    """Return the recommended ``OAUTH2_PROVIDER`` dict for an MCP authorization server; ``overrides`` win."""
    recommended: dict[str, Any] = {
        # Client ID Metadata Documents: what Claude, ChatGPT and VS Code use when the metadata offers it
        # together with the "none" token endpoint auth method (below); otherwise they fall back to DCR.
        "CIMD_ENABLED": True,
        "CIMD_METADATA_FETCHER": "mcpforms.oauth.cimd.Fetcher",
        "CIMD_REGISTRATION_PERMISSION_CLASSES": ("mcpforms.oauth.cimd.ResolutionPermission",),
        # Dynamic registration (RFC 7591): deprecated by the 2026-07-28 spec, still what Cursor,
        # mcp-remote, the Inspector and Claude without CIMD use.
        "DCR_ENABLED": True,
        "DCR_REGISTRATION_PERMISSION_CLASSES": ("mcpforms.oauth.dcr.RegistrationPermission",),
        "DCR_REGISTRATION_TOKEN_EXPIRE_SECONDS": 30 * DAY,  # django-oauth-toolkit's default never expires
        "ALLOWED_REDIRECT_URI_SCHEMES": REDIRECT_SCHEMES,
        "ALLOW_LOCALHOST_LOOPBACK": True,  # Claude Code: http://localhost:<any port>/callback (RFC 8252 §7.3)
        # What the RFC 8414 document advertises.
        "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["none", "client_secret_post", "client_secret_basic"],
        "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
        "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
        # OAuth 2.1 and RFC 9700: S256 PKCE on every authorization, no implicit or password grant, no token
        # in a query string, and the RFC 9207 `iss` in the authorization response (advertised).
        "PKCE_REQUIRED": True,
        "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
        "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
        "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
        "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
        "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
        "COMPLIANT_BCP_RFC9700_REFRESH_TOKEN": True,
        "COMPLIANT_BCP_RFC9700_REDIRECT_URI_MATCHING": True,
        "COMPLIANT_BCP_RFC9700_PKCE_REQUIRED": True,
        # Short access tokens; refresh tokens rotated (OAuth 2.1 §4.3.1: MUST for public clients), a replayed
        # one revokes its family, and a short grace period, since assistants refresh concurrently. The
        # grace period rules out hashed token storage (django-oauth-toolkit's check E001), which stays off.
        "ACCESS_TOKEN_EXPIRE_SECONDS": HOUR,
        "REFRESH_TOKEN_EXPIRE_SECONDS": 30 * DAY,
        "ROTATE_REFRESH_TOKEN": True,
        "REFRESH_TOKEN_REUSE_PROTECTION": True,
        "REFRESH_TOKEN_GRACE_PERIOD_SECONDS": 120,
        "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": False,
        "SCOPES": {BASE_SCOPE: "Use this site's forms as you"},
        "DEFAULT_SCOPES": [BASE_SCOPE],
        "REQUEST_APPROVAL_PROMPT": "force",  # consent every time: a client id alone proves nothing
        # A token only for one of this site's MCP endpoints (RFC 8707), and the `iss` the metadata names.
        "OAUTH2_VALIDATOR_CLASS": "mcpforms.oauth.validator.Validator",
        # validator.Backend's `iss`, plus what lets CIMD resolve only for a signed-in user's authorization.
        "OAUTH2_BACKEND_CLASS": "mcpforms.oauth.cimd.Backend",
    }
    return {**recommended, **overrides}
