"""OAuth 2.1 for the MCP endpoint, on django-oauth-toolkit: the ``oauth`` extra,
``python -m pip install "path/to/mcpforms[oauth]"`` from mcpforms' checkout.

``mcpforms.oauth.resource`` makes the endpoint a resource server (``OAuth2Auth``, the RFC 9728 metadata);
``urls`` is what a project mounts at its root; ``settings()`` the recommended ``OAUTH2_PROVIDER``.

``settings()`` is called from a settings module, before Django has loaded its apps, so the names load on
first use (PEP 562): importing this package imports neither the toolkit's models nor mcpforms'.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from mcpforms.oauth.preset import settings

if TYPE_CHECKING:
    from mcpforms.oauth import urls
    from mcpforms.oauth.resource import OAuth2Auth

__all__ = ["OAuth2Auth", "settings", "urls"]


def __getattr__(name: str) -> Any:
    if name == "OAuth2Auth":
        value = import_module("mcpforms.oauth.resource").OAuth2Auth
    elif name == "urls":
        value = import_module("mcpforms.oauth.urls")
    else:
        raise AttributeError(f"module 'mcpforms.oauth' has no attribute {name!r}")
    globals()[name] = value  # the next access is a plain module attribute
    return value
