"""Forms defined in the admin → ``FormTool``s, served exactly as code-registered ones are.

A ``FormDefinition`` becomes a real Django form class (``mcpforms.form_factory``) and a ``FormTool`` subclass
whose handler stores a ``Submission``, so admin-defined forms go through the same fields, schema, flow and
validation. The registry reads them as a source whose version is one cheap SQL statement: edits made in
any process show at once, with no restart, and a call to a code-registered tool never reads it.
"""

from __future__ import annotations

import logging
from collections.abc import Hashable
from typing import Any

from django import forms
from django.core.mail import send_mail
from django.db import connections, router, transaction

from mcpforms.field_rows import auto_field_from_row
from mcpforms.fields import secret_names
from mcpforms.form_factory import form_factory
from mcpforms.models import FormDefinition, Submission
from mcpforms.output import to_json
from mcpforms.protocol.capabilities import client_implementation
from mcpforms.protocol.context import RequestContext
from mcpforms.signals import send_stored
from mcpforms.tools import FormTool, raise_for_check_errors

logger = logging.getLogger(__name__)


def definition_form_class(definition: FormDefinition) -> type[forms.Form]:
    rows = list(definition.fields.all())
    return form_factory(
        definition.name, [auto_field_from_row(row) for row in rows], doc=definition.description
    )


class DefinitionTool(FormTool):
    """The tool of an admin-defined form: each completed flow stores one ``Submission``."""

    definition_id: int
    email_to: str = ""

    def handle(self, request: RequestContext, form: forms.BaseForm) -> dict[str, Any]:
        secret = secret_names(form)  # passwords are never stored
        data = {name: to_json(value) for name, value in form.cleaned_data.items() if name not in secret}
        user = request.user if getattr(request.user, "is_authenticated", False) else None
        submission = Submission.objects.create(
            definition_id=self.definition_id,
            tool_name=self.name,
            data=data,
            user=user,
            client_info=client_implementation(request.client_info),
        )
        send_stored(self, request, submission)
        if self.email_to:
            # After commit: a mail must not announce a submission that was rolled back, and a mail server
            # that is down must not lose the submission.
            title, to = self.get_title(), self.email_to
            transaction.on_commit(lambda: _mail(submission.pk, title, data, to))
        return {"submission": submission.pk, "form": self.name, "data": data}


def definition_tool(definition: FormDefinition) -> FormTool:
    """The tool of one definition, as it is now; ``ImproperlyConfigured`` when it fails its checks (more
    fields than ``MAX_FORM_FIELDS`` allows, saved under a higher limit)."""
    form_class = definition_form_class(definition)
    attrs: dict[str, object] = {
        "form_class": form_class,
        "name": definition.name,
        "title": definition.title,
        "description": definition.description,
        "message": definition.message,
        "ask": definition.ask,
        "permission": definition.permission or None,
        "version": str(definition.version),
        "definition_id": definition.pk,
        "email_to": definition.email_to,
    }
    tool: FormTool = type(f"{form_class.__name__}Tool", (DefinitionTool,), attrs)()
    raise_for_check_errors(tool)
    return tool


def _mail(pk: int, title: str, data: dict[str, Any], to: str) -> None:
    body = "\n".join(f"{name}: {value}" for name, value in data.items())
    try:
        send_mail(f"New submission #{pk}: {title}", body, None, [to])
    except Exception:  # the submission is stored; a failed notification is logged, not raised
        logger.exception("Could not e-mail submission %s to %s", pk, to)


def definition_tools() -> list[FormTool]:
    """The tools of every enabled definition; a broken one is logged and left out, never a broken list."""
    tools: list[FormTool] = []
    for definition in FormDefinition.objects.filter(enabled=True).prefetch_related("fields"):
        try:
            tools.append(definition_tool(definition))
        except Exception:
            logger.exception("The admin-defined form %r cannot be offered", definition.name)
    return tools


def left_out_definitions() -> list[tuple[FormDefinition, str]]:
    """The definitions ``definition_tools`` leaves out, by name, each with why: disabled, or broken."""
    left_out: list[tuple[FormDefinition, str]] = []
    for definition in FormDefinition.objects.order_by("name").prefetch_related("fields"):
        if not definition.enabled:
            left_out.append((definition, "disabled in the admin"))
            continue
        try:
            definition_tool(definition)
        except Exception as error:
            left_out.append((definition, f"{type(error).__name__}: {error}"))
    return left_out


def catalog_version() -> Hashable:
    """Changes whenever a definition is added, edited, enabled, disabled or deleted, in any process.

    Read whenever a listing or a lookup reaches the admin-defined forms, so it is one plain SQL statement:
    the ORM would spend more time compiling this aggregate than the database spends answering it.
    """
    connection = connections[router.db_for_read(FormDefinition)]
    table = connection.ops.quote_name(FormDefinition._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*), MAX(updated), SUM(version) FROM {table}")  # noqa: S608 (no input)
        row: tuple[Hashable, ...] = tuple(cursor.fetchone() or ())
    return row
