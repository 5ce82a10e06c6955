"""The client ID metadata document of the OAuth clients' tests, served from memory: the sandbox cannot
serve an https client id, so the test server's ``CIMD_METADATA_FETCHER`` hands this document over where
``mcpforms.oauth.cimd.Fetcher`` would download it, and everything after the download (its checks, the
normalising, the application it becomes) runs as in production.

Imported by the test server process (its settings name ``MemoryFetcher``) and by the test module (the
client id and redirect the Python client uses).
"""

from __future__ import annotations

from typing import Any

from mcpforms.oauth.cimd import Fetcher

CIMD_CLIENT_ID = "https://client.example/mcpforms-e2e/client.json"
# Loopback without a port: the authorization server accepts the client's on any port (RFC 8252 §7.3).
CIMD_REDIRECT = "http://127.0.0.1:8976/callback"
DOCUMENTS: dict[str, dict[str, Any]] = {
    CIMD_CLIENT_ID: {
        "client_id": CIMD_CLIENT_ID,
        "client_name": "mcpforms e2e (CIMD)",
        "client_uri": "https://client.example/",
        "redirect_uris": [CIMD_REDIRECT],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
}
MAX_AGE = 300  # seconds, as a Cache-Control: max-age would say


class MemoryFetcher(Fetcher):
    """``Fetcher`` with its network step replaced by ``DOCUMENTS``: pins, normalising and the toolkit's
    checks of the document still apply."""

    def download(self, client_id: str) -> tuple[dict[str, Any], int]:
        return dict(DOCUMENTS[client_id]), MAX_AGE
