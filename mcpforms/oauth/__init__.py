"""OAuth 2.1 for the MCP endpoint, on django-oauth-toolkit: ``pip install "mcpforms[oauth]"``.

``mcpforms.oauth.resource`` makes the endpoint a resource server (``OAuth2Auth``, the RFC 9728 metadata);
``urls`` is what a project mounts at its root.
"""

from __future__ import annotations

from mcpforms.oauth.resource import OAuth2Auth, urls

__all__ = ["OAuth2Auth", "urls"]
