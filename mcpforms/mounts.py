"""Where the project's URLconf serves mcpforms: the paths of its MCP endpoints, read from the resolver.

A system check and ``manage.py mcpforms_tools`` ask it, so that an endpoint nobody mounted is said
before a client finds it with a bare 404, and OAuth binds tokens to the endpoints it finds.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from django.urls import NoReverseMatch, URLResolver, get_resolver, get_urlconf, reverse

from mcpforms.api import SLASH_ROUTE

# What tells an MCP endpoint from another django-ninja API (a project's REST API is no MCP endpoint):
# the trailing-slash route every endpoint of ours adds.
ENDPOINT_MARKER = SLASH_ROUTE


def endpoint_paths() -> list[str]:
    """The path of every MCP endpoint the URLconf serves (``/mcp``), sorted; none when none is mounted."""
    return sorted(
        {location.rstrip("/") or "/" for location in _paths(get_resolver(get_urlconf()).url_patterns, ())}
    )


def _paths(patterns: Sequence[Any], namespaces: tuple[str, ...]) -> Iterator[str]:
    for pattern in patterns:
        if not isinstance(pattern, URLResolver):
            continue
        chain = (*namespaces, pattern.namespace) if pattern.namespace else namespaces
        if any(getattr(child, "name", None) == ENDPOINT_MARKER for child in pattern.url_patterns):
            try:
                yield reverse(":".join((*chain, ENDPOINT_MARKER)))
            except NoReverseMatch:
                continue  # mounted under a captured parameter: no single path to name
        else:
            yield from _paths(pattern.url_patterns, chain)
