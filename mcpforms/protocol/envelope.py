"""The per-request envelope: ``params._meta`` and the HTTP headers that mirror it (spec §2, §8.2, §8.9).

Every 2026-07-28 request carries its protocol version and client capabilities; nothing is remembered
between requests. ``read_envelope`` runs rungs 5 to 8 of the validation ladder in the order the
conformance suite probes them. Headers are optional so a transport without any (stdio) skips those rungs.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpforms.protocol.errors import header_mismatch, invalid_params, unsupported_version
from mcpforms.protocol.jsonrpc import Message
from mcpforms.protocol.versions import PROTOCOL_VERSION_KEY, SUPPORTED_VERSIONS, VERSIONS_2025

CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"

VERSION_HEADER = "mcp-protocol-version"
METHOD_HEADER = "mcp-method"
NAME_HEADER = "mcp-name"
# The methods whose target is mirrored into Mcp-Name, and the param holding it (spec §8.2).
# The tasks extension names its task (never tasks/result: it is -32601, and clients send no Mcp-Name for it).
NAMED_PARAMS: dict[str, str] = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}

_BASE64_VALUE = re.compile(r"=\?base64\?(?P<payload>[^?]*)\?=")


@dataclass(frozen=True)
class Envelope:
    """What a request says about itself and its client."""

    protocol_version: str
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any] | None = None
    progress_token: str | int | None = None
    log_level: str | None = None


def decode_header_value(value: str | None) -> str | None:
    """Undo the ``=?base64?…?=`` wrapping clients apply to unsafe values; None when it is malformed."""
    if value is None:
        return None
    value = value.strip()  # optional whitespace around a field value is not part of it (RFC 9110 §5.5)
    match = _BASE64_VALUE.fullmatch(value)
    if match is None:
        return value
    try:
        return base64.b64decode(match["payload"], validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    return None if value is None else value.strip()


def read_envelope(message: Message, headers: Mapping[str, str] | None) -> Envelope:
    """Validate ``_meta`` and the mirrored headers (lower-cased names); raise the first rung that fails."""
    meta = message.params.get("_meta")
    if not isinstance(meta, dict):
        raise invalid_params(
            f"Missing params._meta: every request carries {PROTOCOL_VERSION_KEY!r} and "
            f"{CLIENT_CAPABILITIES_KEY!r} in it"
        )
    missing = [key for key in (PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY) if key not in meta]
    if missing:
        raise invalid_params(f"params._meta is missing {', '.join(missing)}")
    version, capabilities = meta[PROTOCOL_VERSION_KEY], meta[CLIENT_CAPABILITIES_KEY]
    if not isinstance(version, str):
        raise invalid_params(f"params._meta[{PROTOCOL_VERSION_KEY!r}] must be a string")
    if not isinstance(capabilities, dict):
        raise invalid_params(f"params._meta[{CLIENT_CAPABILITIES_KEY!r}] must be an object")

    if headers is not None:
        # Rung 6 before rung 7: a client contradicting itself is told so, not told its version is unknown.
        header_version = _header(headers, VERSION_HEADER)
        if header_version is not None and header_version != version:
            raise header_mismatch(
                f"MCP-Protocol-Version header {header_version!r} does not match body {version!r}"
            )
        header_method = _header(headers, METHOD_HEADER)
        if header_method is not None and header_method != message.method:
            raise header_mismatch(
                f"Mcp-Method header {header_method!r} does not match body {message.method!r}"
            )

    if version not in SUPPORTED_VERSIONS:
        raise unsupported_version(version, list(SUPPORTED_VERSIONS), handshake=list(VERSIONS_2025))

    if headers is not None:
        if header_version is None:
            raise header_mismatch("the MCP-Protocol-Version header is missing")
        if header_method is None:
            raise header_mismatch("the Mcp-Method header is missing")
        _check_name_header(message, headers)

    client_info = meta.get(CLIENT_INFO_KEY)
    token = meta.get("progressToken")
    log_level = meta.get(LOG_LEVEL_KEY)
    return Envelope(
        protocol_version=version,
        client_capabilities=capabilities,
        client_info=client_info if isinstance(client_info, dict) else None,
        progress_token=token if isinstance(token, str | int) and not isinstance(token, bool) else None,
        log_level=log_level if isinstance(log_level, str) else None,
    )


def _check_name_header(message: Message, headers: Mapping[str, str]) -> None:
    param = NAMED_PARAMS.get(message.method)
    if param is None:
        return
    expected = message.params.get(param)
    if not isinstance(expected, str):
        return  # the params check reports the missing name; there is nothing to compare against
    raw = headers.get(NAME_HEADER)
    if raw is None:
        raise header_mismatch("the Mcp-Name header is missing")
    if decode_header_value(raw) != expected:
        raise header_mismatch(f"Mcp-Name header {raw.strip()!r} does not match body {param} {expected!r}")
