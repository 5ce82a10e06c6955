"""Codes, tokens and secrets out of oauthlib's and django-oauth-toolkit's log records, at every level.

At DEBUG, oauthlib logs the grant it creates (``{'code': …}``), the tokens it issues and the refresh
token it validates; the toolkit logs the success URL, code and all; with ``oauthlib.set_debug(True)``
each request's body and headers follow. Whoever can read the logs could sign in as the user.

``RedactCredentials`` is a logging filter that rewrites such a record: a value named like a credential
(``code=…``, ``'access_token': '…'``, ``"client_secret": "…"``), the credentials of an Authorization
header, a Cookie header (the session), and an argument the message names as a token, code or secret
(``'Validating refresh token %s'``) become ``[redacted]``; the rest of the line stays.

``install()`` applies it to every record of the ``oauthlib`` and ``oauth2_provider`` loggers as the
record is made (``logging.setLogRecordFactory``, chained to the factory already in place): a filter on
the ``oauthlib`` logger would see only what is logged on that logger itself, never on its children, and
a project's ``LOGGING`` decides the handlers. mcpforms' AppConfig installs it whenever
``oauth2_provider`` is installed, so it holds in a project that configures no logging of mcpforms',
whatever level it runs those loggers at.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

REDACTED = "[redacted]"

LOGGERS = ("oauthlib", "oauth2_provider")
"""Whose records ``install()`` redacts: the loggers of oauthlib and django-oauth-toolkit, children too."""

# Parameter and field names whose value is a credential (RFC 6749, 7009, 7591, 7636, 8628, 7523).
CREDENTIAL_NAMES = (
    "code",
    "access_token",
    "refresh_token",
    "id_token",
    "token",
    "code_verifier",
    "client_secret",
    "registration_access_token",
    "password",
    "device_code",
    "user_code",
    "assertion",
    "client_assertion",
)

_VALUE = r"(?P<value>[^\s'\"&,;)}\]]+)"
_PATTERNS = (
    # name=value in a query or form, 'name': 'value' in a dict's repr, "name": "value" in JSON. The name
    # stands alone: response_type=code and code_challenge=… are no code.
    re.compile(
        r"(?<![\w-])(?P<name>" + "|".join(CREDENTIAL_NAMES) + r")(?P<between>['\"]?\s*[:=]\s*['\"]?)" + _VALUE
    ),
    # An Authorization header's credentials, whatever the scheme: Authorization or HTTP_AUTHORIZATION
    # in the headers oauthlib's debug mode logs.
    re.compile(
        r"(?<![a-z0-9])(?P<name>authorization)(?P<between>['\"]?\s*[:=]\s*['\"]?[a-z][\w.+-]*\s+)" + _VALUE,
        re.IGNORECASE,
    ),
    # A Cookie header (HTTP_COOKIE) carries the session cookie: all of it goes.
    re.compile(
        r"(?<![a-z0-9])(?P<name>cookie)(?P<between>['\"]?\s*[:=]\s*['\"]?)(?P<value>[^'\"\s][^'\"\r\n]*)",
        re.IGNORECASE,
    ),
)
# A %-placeholder of a message template, as logging formats it (``%%`` is a literal percent sign).
_PLACEHOLDER = re.compile(r"%%|%(?:\([^)]*\))?[-#0 +]*(?:\d+|\*)?(?:\.(?:\d+|\*))?[hlL]?[a-zA-Z]")
# The template names what the next argument is: "Validating refresh token %s", "Invalid refresh token, %s".
_NAMED_ARGUMENT = re.compile(r"(?<![\w-])(?:token|code|secret|verifier|assertion|password)[\s,:]*$", re.I)
_UNCHECKABLE = "[a log message that could not be checked for credentials]"
_CHILDREN = tuple(f"{name}." for name in LOGGERS)


def redact(text: str) -> str:
    """``text`` with every value named like a credential, an Authorization header's credentials and a
    Cookie header's value redacted."""
    for pattern in _PATTERNS:
        text = pattern.sub(rf"\g<name>\g<between>{REDACTED}", text)
    return text


def _named_arguments(template: str, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """``args`` with each one the template introduces as a credential replaced."""
    kept = list(args)
    index = 0
    for placeholder in _PLACEHOLDER.finditer(template):
        if placeholder.group() == "%%":
            continue
        if index < len(kept) and _NAMED_ARGUMENT.search(template, 0, placeholder.start()):
            kept[index] = REDACTED
        index += 1
    return tuple(kept)


class RedactCredentials(logging.Filter):
    """Rewrite a record so that it carries no credential; it always lets the record through.

    Put it on a handler (``"()": "mcpforms.oauth.redaction.RedactCredentials"`` in ``LOGGING``) to redact
    other loggers' records too; ``install()`` already applies it to oauthlib's and the toolkit's.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            original = record.getMessage()
            template = str(record.msg)
            if isinstance(record.args, tuple) and record.args:
                message = redact(template % _named_arguments(template, record.args))
            else:
                message = redact(original)
        except Exception:
            # A record whose arguments do not fit its message: logging would print both to stderr when
            # a handler fails to format it. Neither is shown, and the logging call itself never fails.
            message, original = _UNCHECKABLE, ""
        if message != original:
            record.msg, record.args = message, None
        return True


class _RedactingFactory:
    """The record factory in place before, with the records of ``LOGGERS`` redacted as they are made."""

    def __init__(self, wrapped: Callable[..., logging.LogRecord]) -> None:
        self.wrapped = wrapped
        self.redaction = RedactCredentials()

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = self.wrapped(*args, **kwargs)
        name = record.name  # None from logging.makeLogRecord(), which sets the name afterwards
        if isinstance(name, str) and (name in LOGGERS or name.startswith(_CHILDREN)):
            self.redaction.filter(record)
        return record


def install() -> None:
    """Redact every record of oauthlib's and django-oauth-toolkit's loggers from now on; once per process."""
    current = logging.getLogRecordFactory()
    if not isinstance(current, _RedactingFactory):
        logging.setLogRecordFactory(_RedactingFactory(current))
