"""Serve the MCP tools over stdio, for a desktop host that launches a command (``mcpforms.stdio``)."""

from __future__ import annotations

import contextlib
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

import mcpforms.stdio as stdio
from mcpforms.protocol.server import default_server
from mcpforms.readiness import missing_migrations


class Command(BaseCommand):
    help = (
        "Serve the registered MCP tools over stdio: newline-delimited JSON-RPC on stdin and stdout, to "
        "2026-07-28 and 2025-era clients alike; logs go to stderr. The process ends when stdin does."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--user",
            metavar="USERNAME",
            help="Act as this active user, with their permissions (default: an anonymous caller, "
            "who may call only what MCPFORMS['ALLOW_ANONYMOUS'] allows, as over HTTP).",
        )

    def execute(self, *args: Any, **options: Any) -> str | None:
        # Before anything else runs, the system checks included: from here on fd 1 carries JSON-RPC alone.
        with stdio.protocol_stdout() as messages:
            self._messages = messages
            return super().execute(*args, **options)

    def handle(self, *args: Any, user: str | None, verbosity: int, **options: Any) -> None:
        missing = missing_migrations()
        if missing:
            self.stderr.write(
                f"mcpforms' migrations are not all applied ({len(missing)}, from {missing[0]}): "
                "run `python manage.py migrate`."
            )
        try:
            caller = stdio.caller_for(user)
        except stdio.Refused as refusal:
            raise CommandError(str(refusal)) from None
        if verbosity:
            who = f"as {user!r}" if user else "to anonymous callers"
            self.stderr.write(f"Serving MCP on stdio {who}; JSON-RPC on stdout, logs here.")
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C in a terminal ends it as EOF would
            stdio.serve(default_server, caller=caller, stdin=sys.stdin.buffer, stdout=self._messages)
