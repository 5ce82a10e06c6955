"""``Mcp-Param-*`` headers: tool arguments mirrored into HTTP for intermediaries to route on (spec §8.2).

A property of a tool's input schema marked ``"x-mcp-header": "Region"`` must arrive twice, in the body and
as ``Mcp-Param-Region``; both must agree, or both be absent. Only properties reachable from the root
through ``properties`` alone, of type string, integer or boolean, count (what clients mirror).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mcpforms.protocol.envelope import decode_header_value
from mcpforms.protocol.errors import header_mismatch

HEADER_KEY = "x-mcp-header"
PREFIX = "mcp-param-"
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110 §5.6.2: what a field name may be
_MIRRORED_TYPES = frozenset({"string", "integer", "boolean"})

ParamHeaders = dict[tuple[str, ...], tuple[str, str]]  # property path -> (header token, JSON type)


def param_headers(input_schema: Mapping[str, Any]) -> ParamHeaders:
    """Map each mirrored property's path to its header token and type."""
    found: ParamHeaders = {}
    pending: list[tuple[tuple[str, ...], Any]] = [((), input_schema)]
    while pending:
        path, schema = pending.pop()
        properties = schema.get("properties") if isinstance(schema, Mapping) else None
        if not isinstance(properties, Mapping):
            continue
        for name, child in properties.items():
            if not isinstance(child, Mapping):
                continue
            token, kind = child.get(HEADER_KEY), child.get("type")
            if isinstance(token, str) and _TOKEN.fullmatch(token) and kind in _MIRRORED_TYPES:
                found[(*path, name)] = (token, kind)
            pending.append(((*path, name), child))
    return found


def _value_at(arguments: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(arguments, Mapping):
            return None
        arguments = arguments.get(key)
    return arguments


def _rendered(value: Any) -> str | None:
    """The value as a client mirrors it into a header, or None when it cannot be."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str | int):
        return str(value)
    return None


# An integer as a client may mirror it: ASCII digits only (``\d`` would take "٣" for 3), an optional zero
# fraction ("42.0" names 42), compared as text so that no length of header reaches int().
INTEGER_HEADER = re.compile(r"(-?)0*([0-9]+?)(?:\.0+)?", re.ASCII)


def _agrees(kind: str, rendered: str, header: str) -> bool:
    if kind == "integer":
        ours, theirs = INTEGER_HEADER.fullmatch(rendered), INTEGER_HEADER.fullmatch(header)
        if ours is not None and theirs is not None:
            return _canonical(ours) == _canonical(theirs)
    return header == rendered


def _canonical(integer: re.Match[str]) -> str:
    sign, digits = integer.groups()
    return digits if digits == "0" else sign + digits


def check_param_headers(expected: ParamHeaders, arguments: Any, headers: Mapping[str, str]) -> None:
    """Raise -32020 unless every mirrored argument and its header agree."""
    for path, (token, kind) in expected.items():
        name = f"Mcp-Param-{token}"
        raw = headers.get(PREFIX + token.lower())
        value = _value_at(arguments, path)
        rendered = None if value is None else _rendered(value)
        if rendered is None:
            if raw is not None:
                raise header_mismatch(f"{name} is present but argument {'.'.join(path)!r} is not")
            continue
        if raw is None:
            raise header_mismatch(f"{name} is missing for argument {'.'.join(path)!r}")
        decoded = decode_header_value(raw)
        if decoded is None:
            raise header_mismatch(f"{name} is not valid base64")
        if not _agrees(kind, rendered, decoded):
            raise header_mismatch(f"{name} does not match argument {'.'.join(path)!r}")
