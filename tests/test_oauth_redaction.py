"""The redaction of oauthlib's and django-oauth-toolkit's log records (``mcpforms.oauth.redaction``): what a
record looks like once made, in this process (where mcpforms' AppConfig installed it) and in a process of
its own that configures nothing but Django. ``tests/test_oauth_attacks.py`` reads the records of a real
sign-in at DEBUG."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpforms.oauth import redaction

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "Zq8Wc1pX0rT5mK2nB7vL9dF3hJ6sA4"  # the shape of a toolkit token: 30 letters and digits


class Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def kept() -> Iterator[Kept]:
    """A handler on the loggers below, which run at DEBUG for the test."""
    handler = Kept()
    loggers = [logging.getLogger(name) for name in ("oauthlib.oauth2.rfc6749", "oauth2_provider", "myapp")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
    yield handler
    for logger, level in zip(loggers, levels, strict=True):
        logger.removeHandler(handler)
        logger.setLevel(level)


def logged(kept: Kept, name: str, message: str, *args: Any) -> str:
    logging.getLogger(name).debug(message, *args)
    return kept.records[-1].getMessage()


OAUTHLIB = "oauthlib.oauth2.rfc6749"


@pytest.mark.parametrize(
    ("message", "args", "shown"),
    [
        # oauthlib's own lines, as it writes them
        (
            "Saving grant %r for %r.",
            ({"code": TOKEN, "state": "s"}, "r"),
            "Saving grant {'code': '[redacted]', 'state': 's'} for 'r'.",
        ),
        (
            "Validating refresh token %s for client %r.",
            (TOKEN, "c"),
            "Validating refresh token [redacted] for client 'c'.",
        ),
        (
            "Invalid refresh token, %s, for client %r.",
            (TOKEN, "c"),
            "Invalid refresh token, [redacted], for client 'c'.",
        ),
        (
            "Issuing token %r to client id %r (%r) and username %s.",
            ({"a": 1}, "id", "c", "u"),
            "Issuing token '[redacted]' to client id 'id' ('c') and username u.",
        ),
        # the toolkit's success URL, formatted before it is logged
        (
            f"Success url for the request: https://c.example/cb?code={TOKEN}&state=s",
            (),
            "Success url for the request: https://c.example/cb?code=[redacted]&state=s",
        ),
        # oauthlib's debug mode: the request's body and headers
        (
            f'body="grant_type=authorization_code&code={TOKEN}&code_verifier={TOKEN}x&client_secret=s3cr3t"',
            (),
            'body="grant_type=authorization_code&code=[redacted]&code_verifier=[redacted]&client_secret=[redacted]"',
        ),
        (
            f"{{'HTTP_AUTHORIZATION': 'Basic {TOKEN}=', 'HTTP_COOKIE': 'sessionid={TOKEN}; csrftoken=x'}}",
            (),
            "{'HTTP_AUTHORIZATION': 'Basic [redacted]', 'HTTP_COOKIE': '[redacted]'}",
        ),
        (
            f'{{"access_token": "{TOKEN}", "token_type": "Bearer", "registration_access_token": "{TOKEN}"}}',
            (),
            '{"access_token": "[redacted]", "token_type": "Bearer", "registration_access_token": '
            '"[redacted]"}',
        ),
    ],
)
def test_credentials_leave_the_record_and_the_rest_of_the_line_stays(kept, message, args, shown):
    assert logged(kept, OAUTHLIB, message, *args) == shown


@pytest.mark.parametrize(
    ("message", "args"),
    [
        ("Dispatching token_type %s request to %r.", ("Bearer", "handler")),
        ("Dispatching grant_type %s request to %r.", ("authorization_code", "grant")),
        ("response_type=code&code_challenge=%s&code_challenge_method=S256", ("A" * 43,)),
        ("Client %s is not authorized to use response_type %s.", ("c", "code")),
        ("100%% of %d requests", (3,)),
    ],
)
def test_what_names_no_credential_is_left_as_it_was(kept, message, args):
    logging.getLogger(OAUTHLIB).debug(message, *args)
    record = kept.records[-1]
    assert (record.msg, record.args) == (message, args)  # untouched, for whatever groups log lines


def test_a_record_whose_arguments_do_not_fit_shows_neither(kept):
    logging.getLogger(OAUTHLIB).debug("Validating refresh token %s for client %d.", TOKEN, "no number")
    record = kept.records[-1]
    assert TOKEN not in record.getMessage() and "could not be checked" in record.getMessage()


def test_other_loggers_records_are_left_alone_unless_a_handler_asks(kept):
    assert logged(kept, "myapp", "code=%s", TOKEN) == f"code={TOKEN}"
    # The filter itself, put on a handler as LOGGING would: it redacts whatever reaches it.
    kept.addFilter(redaction.RedactCredentials())
    try:
        assert logged(kept, "myapp", "code=%s", TOKEN) == "code=[redacted]"
    finally:
        kept.filters.clear()


def test_a_record_made_from_a_dict_is_made_as_before():
    # logging.makeLogRecord() (a socket or queue listener's) calls the factory with no name at all.
    record = logging.makeLogRecord({"name": "oauthlib.x", "msg": "code=%s", "args": (TOKEN,)})
    assert record.getMessage() == f"code={TOKEN}"  # rebuilt, not made: redacted where it was made


def test_installing_twice_wraps_the_record_factory_once():
    installed = logging.getLogRecordFactory()
    assert isinstance(installed, redaction._RedactingFactory)  # mcpforms' AppConfig did it
    redaction.install()
    assert logging.getLogRecordFactory() is installed


def test_a_project_that_configures_no_logging_gets_it_from_django_setup():
    # A process of its own: Django set up from the test settings (no LOGGING of mcpforms'), oauthlib's
    # logger at DEBUG on a plain stream handler, as a developer would turn it on.
    code = (
        "import logging, sys, django; django.setup(); "
        "logging.basicConfig(stream=sys.stdout, level=logging.DEBUG, format='%(message)s'); "
        "logging.getLogger('oauthlib.oauth2.rfc6749.grant_types.refresh_token')"
        f".debug('Validating refresh token %s for client %r.', {TOKEN!r}, 'c')"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={"DJANGO_SETTINGS_MODULE": "tests.settings", "PYTHONPATH": str(ROOT), "PATH": ""},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Validating refresh token [redacted] for client 'c'."
