"""What mcpforms serves besides the endpoint, mounted once at the root:
``path("", include("mcpforms.urls"))``.

The URL-mode page (spec §7.3) at ``mcpforms/fill/<token>/``, and the answers a client that looks for OAuth
gets from a site that does not sign in with it (``mcpforms.discovery``): the well-known documents are at
the root (RFC 8414 §3, RFC 9728 §3), hence the root. A site that signs in mounts ``mcpforms.oauth.urls``
first, so that its documents answer.
"""

from __future__ import annotations

from django.urls import path, re_path

import mcpforms.discovery as discovery
import mcpforms.views as views

app_name = "mcpforms_ui"  # "mcpforms" is the namespace of the MCP endpoint (mcpforms.api)

urlpatterns = [
    path("mcpforms/fill/<str:token>/", views.page, name="page"),
    re_path(
        r"^\.well-known/(?:oauth-protected-resource|oauth-authorization-server|openid-configuration)"
        r"(?P<rest>/.*)?\Z",
        discovery.metadata,
        name="no-sign-in-metadata",
    ),
    re_path(r"^register\Z", discovery.register, name="no-sign-in-register"),
]
