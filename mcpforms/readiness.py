"""Whether the database is ready for mcpforms: every migration of the app applied.

A project that adds mcpforms and forgets ``migrate`` would otherwise answer its first call with a bare
"Internal error" (a missing table). The endpoint asks here when a request failed, never on the way of a
request that works; once the answer is yes it is remembered for the life of the process.
"""

from __future__ import annotations

import pkgutil
from functools import cache

from django.db import DEFAULT_DB_ALIAS, DatabaseError, InterfaceError, OperationalError, connections
from django.db.migrations.recorder import MigrationRecorder

import mcpforms.migrations

_ready = False


@cache
def _shipped() -> frozenset[str]:
    return frozenset(module.name for module in pkgutil.iter_modules(mcpforms.migrations.__path__))


def missing_migrations(using: str = DEFAULT_DB_ALIAS) -> list[str]:
    """The names of mcpforms' migrations the database has not applied, oldest first ([] when ready)."""
    global _ready
    if _ready:
        return []
    try:
        recorded = MigrationRecorder(connections[using]).applied_migrations()
        applied = {name for app, name in recorded if app == "mcpforms"}
    except (OperationalError, InterfaceError):
        raise  # a database that does not answer is not one without tables: `migrate` would not help
    except DatabaseError:
        applied = set()  # no django_migrations table: nothing was ever migrated
    missing = sorted(_shipped() - applied)
    _ready = not missing
    return missing


def unmigrated_message() -> str | None:
    """What to tell a client when mcpforms' tables are not all there, or None when they are."""
    missing = missing_migrations()
    if not missing:
        return None
    return (
        f"Internal error: the database lacks mcpforms' tables ({len(missing)} migration(s) not applied, "
        f"from {missing[0]}); run `python manage.py migrate`"
    )
