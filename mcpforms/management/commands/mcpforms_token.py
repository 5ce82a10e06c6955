"""Personal access tokens from the shell: create one (shown once), list them, revoke one."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Q
from django.utils import timezone

from mcpforms.models import AccessToken

MAX_EXPIRY_DAYS = 36_500


class Command(BaseCommand):
    help = "Create, list or revoke the personal access tokens MCP clients authenticate with."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        create = actions.add_parser("create", help="Create a token for a user and print it, once.")
        create.add_argument("username")
        create.add_argument("--name", default="", help="Where the token is used (default: the date).")
        create.add_argument("--expires-in-days", type=int, help="Days until it expires (default: never).")
        create.add_argument("--quiet", action="store_true", help="Print the token and nothing else.")
        listing = actions.add_parser("list", help="List tokens, a user's or everyone's.")
        listing.add_argument("username", nargs="?")
        revoke = actions.add_parser("revoke", help="Revoke a token by its id or its first characters.")
        revoke.add_argument("token", help="The id shown by `list`, or the token's first characters.")

    def handle(self, *args: Any, **options: Any) -> None:
        getattr(self, f"_{options['action']}")(**options)

    def _create(
        self, *, username: str, name: str, expires_in_days: int | None, quiet: bool, **_: Any
    ) -> None:
        user = self._user(username)
        if expires_in_days is not None and expires_in_days < 1:
            raise CommandError("--expires-in-days must be 1 or more.")
        if expires_in_days is not None and expires_in_days > MAX_EXPIRY_DAYS:
            # Past this, the date would soon leave what datetime can hold (year 9999): an OverflowError.
            raise CommandError(
                f"--expires-in-days must be at most {MAX_EXPIRY_DAYS} (100 years); "
                "leave it out for a token that lasts until it is revoked."
            )
        expires_at = None if expires_in_days is None else timezone.now() + timedelta(days=expires_in_days)
        token, raw = AccessToken.objects.issue(
            user, name or f"Created {timezone.now():%Y-%m-%d %H:%M}", expires_at=expires_at
        )
        if quiet:
            self.stdout.write(raw)
            return
        self.stdout.write(f"Token {token.pk} for {username} ({token.name}):\n\n    {raw}\n")
        self.stdout.write("Copy it now: only a digest is stored, so it cannot be shown again.")
        self.stdout.write("Send it as the header  Authorization: Bearer <token>")

    def _list(self, *, username: str | None, **_: Any) -> None:
        tokens = AccessToken.objects.select_related("user")
        if username:
            tokens = tokens.filter(user=self._user(username))
        for token in tokens:
            used = f"{token.last_used_at:%Y-%m-%d %H:%M}" if token.last_used_at else "never"
            self.stdout.write(
                f"{token.pk}\t{token.prefix}…\t{token.user}\t{token.status}\tlast used {used}\t{token.name}"
            )

    def _revoke(self, *, token: str, **_: Any) -> None:
        match = Q(prefix__startswith=token) if not token.isdigit() else Q(pk=int(token))
        found = list(AccessToken.objects.filter(match)[:2])
        if len(found) != 1:
            raise CommandError(f"{'No' if not found else 'More than one'} token matches {token!r}.")
        found[0].revoke()
        self.stdout.write(f"Revoked token {found[0].pk} ({found[0].name}).")

    def _user(self, username: str) -> Any:
        try:
            return get_user_model()._default_manager.get_by_natural_key(username)
        except get_user_model().DoesNotExist:
            raise CommandError(f"No user named {username!r}.") from None
