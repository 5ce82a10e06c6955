"""What mcpforms keeps in the database."""

from __future__ import annotations

import hashlib
import json
import random
import secrets
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import connections, models, router, transaction
from django.db.models import F, Q
from django.db.models.signals import post_delete
from django.dispatch import receiver
from django.utils import timezone

from mcpforms.conf import conf
from mcpforms.field_rows import DefinitionError, auto_field_from_row
from mcpforms.fields import FIELD_TYPES
from mcpforms.protocol.primitives import NAME_PATTERN
from mcpforms.protocol.state import RequestState
from mcpforms.sealing import file_storage

# One write in this many also deletes the expired rows of its kind (sweep): a chance, not a DELETE on every
# request, for projects that do not run manage.py mcpforms_cleanup.
SWEEP_ONE_IN = 100
# A cleanup run counts as recent this long: a daily schedule with room to spare, and a schedule that stops
# hands the deleting back to requests within that time.
CLEANUP_COUNTS_FOR = timedelta(days=2)


class OrderedJSONField(models.JSONField):
    """A ``JSONField`` that gives an object back with its keys in the order they were saved.

    PostgreSQL's jsonb keeps an object's keys sorted (shortest first), and what mcpforms stores is shown
    again in order: a client lists a question's fields in the order of its schema's properties, and a
    replayed result should be the result that was sent. So the value is kept as its JSON text (a jsonb
    string) and parsed when read; a row saved as an object before is read as it is. Nothing queries into
    these values: a key lookup would find a string.
    """

    def get_prep_value(self, value: Any) -> Any:
        if value is None or hasattr(value, "resolve_expression"):
            return super().get_prep_value(value)
        return super().get_prep_value(json.dumps(value, cls=self.encoder))

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        value = super().from_db_value(value, expression, connection)
        if not isinstance(value, str):
            return value
        try:
            return json.loads(value, cls=self.decoder)
        except json.JSONDecodeError:
            return value


def _ago(seconds: int) -> datetime:
    return timezone.now() - timedelta(seconds=seconds)


class CompletedFlow(models.Model):
    """A form flow whose handler ran, and what it returned: a retried last round, or any earlier round of
    the same flow answered again, gets this outcome instead of a second run. Rows outlive their token's
    max age by nothing: older ones are deleted."""

    digest = models.CharField(max_length=64, unique=True)
    result = OrderedJSONField(null=True, blank=True)
    created = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        verbose_name = "completed flow"

    def __str__(self) -> str:
        return self.digest

    @staticmethod
    def digest_of(state: RequestState) -> str:
        # The server is part of the flow's identity: another server's same-named tool is another flow.
        identity = [state.server, state.tool, state.principal, state.flow]
        return hashlib.sha256(json.dumps(identity).encode()).hexdigest()

    @classmethod
    def outcome_of(cls, state: RequestState) -> dict[str, Any] | None:
        """The result the flow of ``state`` completed with, once its transaction has committed."""
        recorded = cls.objects.filter(digest=cls.digest_of(state)).values_list("result", flat=True).first()
        return recorded if isinstance(recorded, dict) else None

    @classmethod
    def record(cls, state: RequestState) -> str:
        """Record the flow ``state`` finishes and return its digest; raises IntegrityError when it was
        already recorded."""
        # The flow's id, the same in each of its tokens, makes its identity: any round of it replayed
        # repeats it, while another user's flow with the very same answers (every anonymous user is one
        # principal) does not.
        digest = cls.digest_of(state)
        insert = "INSERT INTO {table} ({digest}, {created}) VALUES (%s, %s)"
        cls._execute(insert, [("digest", digest), ("created", timezone.now())])
        sweep(cls.expired)
        return digest

    @classmethod
    def expired(cls) -> models.QuerySet[CompletedFlow]:
        # Tokens older than STATE_MAX_AGE are refused before their flow's record is read.
        return cls.objects.filter(created__lt=_ago(conf.STATE_MAX_AGE))

    @classmethod
    def keep_result(cls, digest: str, result: dict[str, Any]) -> None:
        """Store the result the flow recorded as ``digest`` completed with, for its replays."""
        update = "UPDATE {table} SET {result} = %s WHERE {digest} = %s"
        cls._execute(update, [("result", result), ("digest", digest)])

    @classmethod
    def _execute(cls, template: str, values: list[tuple[str, Any]]) -> None:
        """Run ``template`` with the table and column names filled in; each of ``values`` is a field's name
        and a value, prepared for the database as that field prepares it.

        Every completed flow writes this row twice, in the handler's transaction: a statement through the
        cursor costs a quarter of ``objects.create()`` or ``save()`` (``make bench``), and no model signal
        has a use for a bookkeeping row.
        """
        connection = connections[router.db_for_write(cls)]
        statement = _statements.get((connection.alias, template))
        if statement is None:
            quote = connection.ops.quote_name
            columns = {name: quote(str(field.column)) for name, field in _FLOW_FIELDS.items()}
            statement = template.format(table=quote(cls._meta.db_table), **columns)
            _statements[connection.alias, template] = statement
        params = [_FLOW_FIELDS[name].get_db_prep_save(value, connection) for name, value in values]
        with connection.cursor() as cursor:
            cursor.execute(statement, params)


_FLOW_FIELDS: dict[str, models.Field[Any, Any]] = {
    field.name: field for field in CompletedFlow._meta.concrete_fields
}
# CompletedFlow's statements with the names of its table and columns quoted, by database alias and template.
_statements: dict[tuple[str, str], str] = {}


# ---- forms defined in the admin --------------------------------------------------------------------------

# The one name rule of tools (mcpforms.protocol.primitives), worded for staff.
TOOL_NAME_VALIDATOR = RegexValidator(
    rf"^{NAME_PATTERN}\Z", "Use 1-64 letters, digits, underscores, dots or dashes."
)
FIELD_NAME_VALIDATOR = RegexValidator(
    r"^[A-Za-z_][A-Za-z0-9_]{0,63}\Z", "Use a Python identifier: letters, digits and underscores."
)


class FormDefinition(models.Model):
    """A form staff publish to assistants from the admin; it becomes a tool like any registered form."""

    class Ask(models.TextChoices):
        MISSING = "missing", "Ask for what is missing"
        ALWAYS = "always", "Always let the user confirm"
        NEVER = "never", "Never ask (plain tool)"

    name = models.CharField(
        "tool name",
        max_length=64,
        unique=True,
        validators=[TOOL_NAME_VALIDATOR],
        help_text="The name assistants call, e.g. event_rsvp.",
    )
    title = models.CharField(max_length=200)
    description = models.TextField(help_text="What the tool does; shown to the assistant.")
    message = models.CharField(
        "elicitation message", max_length=500, blank=True, help_text="What the user sees above the form."
    )
    ask = models.CharField(max_length=10, choices=Ask, default=Ask.MISSING)
    enabled = models.BooleanField(default=True)
    permission = models.CharField(
        max_length=255, blank=True, help_text="Required permission as app_label.codename; empty for everyone."
    )
    email_to = models.EmailField(
        "e-mail submissions to", blank=True, help_text="Each submission is stored, and also sent here if set."
    )
    version = models.PositiveIntegerField(default=1, editable=False)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.title or self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None:
            self.version += 1  # a requestState minted for the old version is then refused
        super().save(*args, **kwargs)

    def touch(self) -> None:
        """Mark the definition changed (its fields were edited): new version, new tools/list."""
        FormDefinition.objects.filter(pk=self.pk).update(version=F("version") + 1, updated=timezone.now())


class FieldDefinition(models.Model):
    """One field of a FormDefinition, in the AutoFormField vocabulary; a row may start a step."""

    class Condition(models.TextChoices):
        EQUALS = "equals", "equals"
        ONE_OF = "one_of", "is one of"
        TRUE = "true", "is true"

    TYPE_CHOICES = [(kind, kind) for kind in sorted(FIELD_TYPES)]

    definition = models.ForeignKey(FormDefinition, on_delete=models.CASCADE, related_name="fields")
    order = models.PositiveIntegerField(default=0)
    name = models.CharField(max_length=64, validators=[FIELD_NAME_VALIDATOR])
    label = models.CharField(max_length=200, blank=True)
    type = models.CharField(max_length=20, choices=TYPE_CHOICES, default="text")
    required = models.BooleanField(default=False)
    help_text = models.CharField(max_length=500, blank=True)
    min = models.FloatField(null=True, blank=True, help_text="Lowest number, shortest text, fewest picks.")
    max = models.FloatField(null=True, blank=True, help_text="Highest number, longest text, most picks.")
    choices = models.TextField(blank=True, help_text="One per line, as value|Label (or just value).")
    multiple = models.BooleanField(default=False, help_text="Let the user pick several choices.")
    default = models.CharField(max_length=500, blank=True)
    placeholder = models.CharField(max_length=200, blank=True)
    # Steps: a row with a step title starts a step, holding it and the rows below it up to the next one.
    # A form with no step title is asked as one page; rows before the first title form an untitled step.
    step = models.CharField(
        "starts the step",
        max_length=200,
        blank=True,
        help_text="Set on the first field of a new step: the step's title, which the user reads.",
    )
    condition_field = models.CharField(
        "ask the step only when",
        max_length=64,
        blank=True,
        help_text="The name of a field of an earlier step; empty to always ask the step.",
    )
    condition = models.CharField(max_length=10, choices=Condition, blank=True)
    condition_value = models.TextField(
        blank=True, help_text="The value it must equal, or for 'is one of' one value per line."
    )

    class Meta:
        ordering = ["order", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["definition", "name"], name="mcpforms_unique_field_name")
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        # The same reading the tool makes, so what fails here is an admin form error, never a broken tool.
        try:
            auto_field_from_row(self)
        except DefinitionError as error:
            raise ValidationError({error.field: str(error)} if error.field else str(error)) from None

    # touch=False when the definition itself is saved in the same change (the admin saves it, then its
    # rows): its save() already made the new version, and one change must be one version, not one per row.
    def save(self, *args: Any, touch: bool = True, **kwargs: Any) -> None:
        super().save(*args, **kwargs)
        if touch:
            self.definition.touch()

    def delete(self, *args: Any, touch: bool = True, **kwargs: Any) -> tuple[int, dict[str, int]]:
        deleted = super().delete(*args, **kwargs)
        if touch:
            self.definition.touch()
        return deleted


class Submission(models.Model):
    """A completed flow of an admin-defined form: exactly one per flow."""

    class Status(models.TextChoices):
        NEW = "new", "New"
        SEEN = "seen", "Seen"
        DONE = "done", "Done"

    definition = models.ForeignKey(
        FormDefinition, on_delete=models.SET_NULL, null=True, related_name="submissions"
    )
    tool_name = models.CharField(max_length=64, help_text="Kept if the definition is deleted.")
    data = models.JSONField()
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    client_info = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=Status, default=Status.NEW)
    created = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"{self.tool_name} #{self.pk}"

    def ordered_data(self) -> dict[str, Any]:
        """The data in the form's field order (PostgreSQL's jsonb keeps no key order), then any other keys."""
        order = [field.name for field in self.definition.fields.all()] if self.definition else []
        keys = [key for key in order if key in self.data] + sorted(set(self.data) - set(order))
        return {key: self.data[key] for key in keys}


# ---- URL mode ----


class UrlElicitation(models.Model):
    """A form handed to the user as a Django page through URL-mode elicitation (spec §7.3).

    2026-07-28 has no elicitationId: the row's id travels in the signed requestState, and the page's own
    signed token names it too. ``completed`` makes the page single-use; ``result`` is what the tool's retry
    returns. Only values the model or the user already sent through the MCP call are stored: never the
    passwords or files entered on the page.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # The key of the server whose tool asked: the page opens that server's tool, and no other's.
    server = models.CharField(max_length=64, default="default")
    tool = models.CharField(max_length=64)
    principal = models.CharField(max_length=255)
    arguments = models.JSONField(default=dict, blank=True)
    values = models.JSONField(default=dict, blank=True)
    created = models.DateTimeField(default=timezone.now, db_index=True)
    completed = models.DateTimeField(null=True, blank=True)
    result = OrderedJSONField(null=True, blank=True)

    class Meta:
        verbose_name = "URL-mode elicitation"

    def __str__(self) -> str:
        return f"{self.tool} ({self.pk})"

    @classmethod
    def expired(cls) -> models.QuerySet[UrlElicitation]:
        # A retry can no longer reach a row once both the page's link and the requestState that names it
        # have expired; a wizard's page step, once no requestState of its flow verifies any more.
        plain = Q(wizard_step__isnull=True, created__lt=_ago(max(conf.STATE_MAX_AGE, conf.URL_MODE_MAX_AGE)))
        return cls.objects.filter(plain | Q(wizard_step__expires__lt=timezone.now()))


class WizardPageStep(models.Model):
    """A wizard's step filled on the URL-mode page of ``page`` (``mcpforms.wizard_pages``): a step with a
    password or a file, or one the user answers for a client that shows no form. The flow and the step it
    belongs to, and what the user submitted there, sealed for the flow (``mcpforms.sealing``): the
    database holds the public key it was sealed for and the ciphertext, never the key that opens it,
    which only the flow's requestState carries.

    Kept until the flow completes or is declined, or until ``expires``, when no requestState of the flow
    verifies any more (the requests of wizards' pages delete it then, as ``mcpforms_cleanup`` does).
    Uploaded files are encrypted in ``sealing.file_storage()`` under the random names ``paths`` lists, and
    go with the row.
    """

    page = models.OneToOneField(
        UrlElicitation, on_delete=models.CASCADE, primary_key=True, related_name="wizard_step"
    )
    # The wizard's flow id (the same in every requestState of the flow) and the step's name.
    flow = models.CharField(max_length=64, db_index=True)
    step = models.TextField()
    # The X25519 public key what the page keeps is sealed for; its private key is the flow's.
    public_key = models.BinaryField(max_length=32)
    # What the user submitted (the values the step's widgets read, and its files' names, sizes and keys),
    # sealed; None until the page is submitted.
    sealed = models.BinaryField(null=True, blank=True)
    # Where the step's encrypted files are in the file storage: random names, nothing of the user's.
    paths = models.JSONField(default=list, blank=True)
    # When the flow's last requestState stops verifying (each of its rounds puts it off).
    expires = models.DateTimeField(db_index=True)

    class Meta:
        verbose_name = "wizard step filled on the page"

    def __str__(self) -> str:
        return f"{self.step} ({self.page_id})"

    def stored_paths(self) -> list[str]:
        """Where the step's encrypted files are in ``sealing.file_storage()``."""
        return [path for path in self.paths if isinstance(path, str)] if isinstance(self.paths, list) else []


@receiver(post_delete, sender=WizardPageStep, dispatch_uid="mcpforms.wizard_page_step_files")
def _delete_stored_files(sender: type[WizardPageStep], instance: WizardPageStep, **kwargs: Any) -> None:
    # Whoever deletes the row (the flow's end, a request, mcpforms_cleanup, the admin), its files go once
    # the deletion commits: a rolled-back delete keeps both.
    paths = instance.stored_paths()
    if paths:
        storage = file_storage()
        for path in paths:
            transaction.on_commit(partial(storage.delete, path), using=kwargs.get("using"), robust=True)


# ---- the 2025 era: sessions and the calls waiting on the client (mcpforms.session_stores) ----


class Era2025Session(models.Model):
    """A 2025-era session (``Mcp-Session-Id``): what ``initialize`` negotiated, whose it is, and on which
    server. ``capabilities`` and ``client_info`` keep only what the server reads (a few hundred bytes);
    ``address`` is the budget scope of an anonymous caller's address (an IPv4 address or an IPv6 /64),
    kept as long as the session, and blank for a user's."""

    id = models.CharField(primary_key=True, max_length=64)
    # The key of the server that opened it (Offering.key): no other server knows the session.
    server = models.CharField(max_length=64)
    version = models.CharField(max_length=20)
    capabilities = models.JSONField(default=dict, blank=True)
    client_info = models.JSONField(null=True, blank=True)
    principal = models.CharField(max_length=255)
    address = models.CharField(max_length=64, blank=True)
    log_level = models.CharField(max_length=20, blank=True)
    created = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        verbose_name = "2025-era session"
        # The budgets count a principal's live sessions, and anonymous ones by address, on every initialize.
        indexes = [
            models.Index(fields=["principal", "created"], name="mcpforms_session_principal"),
            models.Index(fields=["address", "created"], name="mcpforms_session_address"),
        ]

    def __str__(self) -> str:
        return self.id

    @classmethod
    def expired(cls) -> models.QuerySet[Era2025Session]:
        # A session answers 404 after SESSION_MAX_AGE; its client opens a new one (2025-11-25, Session
        # Management). Its calls go with it.
        return cls.objects.filter(created__lt=_ago(conf.SESSION_MAX_AGE))


class Era2025Call(models.Model):
    """A 2025-era request whose handler asked the client something, and the round in flight."""

    id = models.CharField(primary_key=True, max_length=64)
    session = models.ForeignKey(Era2025Session, on_delete=models.CASCADE, related_name="calls")
    request_id = models.JSONField()
    method = models.CharField(max_length=64)
    params = models.JSONField(default=dict)
    request_state = models.TextField(null=True, blank=True)
    asked = models.JSONField(default=dict)
    answers = models.JSONField(default=dict)
    events = models.PositiveIntegerField(default=0)
    done = models.BooleanField(default=False)
    pages = models.JSONField(default=list, blank=True)
    waiting = models.BooleanField(default=False)
    created = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        verbose_name = "2025-era pending call"
        # The budget counts a session's calls on every call that asks the user something.
        indexes = [models.Index(fields=["session", "created"], name="mcpforms_call_session")]

    def __str__(self) -> str:
        return self.id

    @classmethod
    def expired(cls) -> models.QuerySet[Era2025Call]:
        # A call nobody resumed within a requestState's lifetime cannot go on. Its events go with it.
        return cls.objects.filter(created__lt=_ago(conf.STATE_MAX_AGE))


class StreamEvent(models.Model):
    """One SSE event of a pending call's stream, kept until the call is deleted, for clients that resume."""

    call = models.ForeignKey(Era2025Call, on_delete=models.CASCADE, related_name="stream")
    seq = models.PositiveIntegerField()
    data = OrderedJSONField(null=True, blank=True)
    retry_ms = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["seq"]
        constraints = [models.UniqueConstraint(fields=["call", "seq"], name="mcpforms_unique_event_seq")]

    def __str__(self) -> str:
        return f"{self.call_id}:{self.seq}"


# Expired rows ------------------------------------------------------------------------------------------


class CleanupRun(models.Model):
    """When ``manage.py mcpforms_cleanup`` last deleted every expired row.

    A row rather than a cache key: the rows it speaks for are in this database, so every worker of every
    deployment sees it (a ``LocMemCache`` is per process, and the default cache may not be shared), and
    reading it needs nothing but the database the sweep is about to delete from anyway.
    """

    created = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "cleanup run"

    def __str__(self) -> str:
        return self.created.isoformat()

    @classmethod
    def record(cls) -> None:
        """Note a run that just ended; the table keeps the latest one only."""
        with transaction.atomic():
            cls.objects.all().delete()
            cls.objects.create()

    @classmethod
    def ran_recently(cls) -> bool:
        return cls.objects.filter(created__gte=timezone.now() - CLEANUP_COUNTS_FOR).exists()


def sweep(expired: Callable[[], models.QuerySet[Any]]) -> None:
    """Now and then, delete the rows ``expired()`` returns: the request path's fallback for a project that
    does not run ``manage.py mcpforms_cleanup``. Not while the command has run recently, nor with
    ``MCPFORMS["SWEEP_EXPIRED"] = False``."""
    # The chance first: 99 writes in 100 cost nothing but a random number (no secret: ``random`` will do,
    # where ``secrets`` asks the kernel for every one).
    if random.randrange(SWEEP_ONE_IN) or not conf.SWEEP_EXPIRED or CleanupRun.ran_recently():
        return
    expired().delete()


# Tasks (the 2026-07-28 tasks extension) ----------------------------------------------------------------


def task_digest(task_id: str) -> str:
    # As an access token's: the id is 256 bits (or a keyed derivation of as many), so a plain hash is
    # enough, and a leaked table names no task a client could poll.
    return hashlib.sha256(task_id.encode()).hexdigest()


class ToolTask(models.Model):
    """A call that became a task: what it asked (validated values), who asked, where it stands and what it
    came to. The row is committed before the client hears of the task, so any worker answers
    ``tasks/get``; its id is never stored, only ``digest``.

    ``runner`` says what moves it on: ``queue`` — its work runs through Django's tasks framework, once per
    turn (a first one at creation, another once the client answered what it asked); ``staff`` — it waits
    for a staff member's decision in the admin (an approval), and answers to an amendment the approver
    asked for are judged when they arrive.
    """

    class Status(models.TextChoices):
        WORKING = "working", "working"
        INPUT_REQUIRED = "input_required", "waiting on the requester"
        COMPLETED = "completed", "completed"
        FAILED = "failed", "failed"
        CANCELLED = "cancelled", "cancelled"

    class Runner(models.TextChoices):
        QUEUE = "queue", "background work"
        STAFF = "staff", "approval by staff"

    class Decision(models.TextChoices):
        APPROVED = "approved", "approved"
        REJECTED = "rejected", "rejected"
        AMEND = "amend", "sent back for an amendment"

    digest = models.CharField(max_length=64, unique=True)
    # The form flow that became this task, as CompletedFlow names it: its final round, replayed, finds
    # this task instead of making a second one.
    flow = models.CharField(max_length=64, unique=True, null=True, blank=True)
    server = models.CharField(max_length=64)
    tool = models.CharField(max_length=64)
    principal = models.CharField(max_length=255)
    # The budget scope of the address an anonymous caller made it from (budgets.address_scope): what the
    # task budgets count it under; blank for a user's task, or without an address (stdio).
    address = models.CharField(max_length=64, blank=True, default="")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The client's Implementation strings (capabilities.client_implementation): shown to the approver.
    client = models.JSONField(default=dict, blank=True)
    arguments = models.JSONField(default=dict, blank=True)
    runner = models.CharField(max_length=8, choices=Runner.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.WORKING)
    status_message = models.CharField(max_length=500, blank=True)
    # What the task asks the client, by the key on the wire: {"key": the tool's own key, "request": …}.
    outstanding = OrderedJSONField(default=dict, blank=True)
    # The client's answers so far, by the tool's own key: what the next turn reads as inputResponses.
    answers = models.JSONField(default=dict, blank=True)
    # How many input requests the task ever issued: wire keys are numbered by it, so none is reused.
    issued = models.PositiveIntegerField(default=0)
    # Which run of its work is due: a worker holding an older number has nothing to do.
    turn = models.PositiveIntegerField(default=0)
    result = OrderedJSONField(null=True, blank=True)
    error = models.JSONField(null=True, blank=True)
    poll_interval_ms = models.PositiveIntegerField(null=True, blank=True)
    created = models.DateTimeField(default=timezone.now, db_index=True)
    updated = models.DateTimeField(default=timezone.now)
    # None: it never expires (ttlMs null).
    expires = models.DateTimeField(null=True, blank=True, db_index=True)
    decision = models.CharField(max_length=8, choices=Decision.choices, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    reason = models.TextField(blank=True)

    class Meta:
        verbose_name = "task"
        indexes = [
            models.Index(fields=["runner", "status"], name="mcpforms_task_runner_status"),
            # What the task budgets count: a principal's live tasks, anonymous ones by address.
            models.Index(fields=["principal", "address", "expires"], name="mcpforms_task_budget"),
        ]
        permissions = [("view_all_tasks", "Can see every task, not only those awaiting their approval")]

    def __str__(self) -> str:
        return f"#{self.pk} {self.tool}"

    @property
    def ended(self) -> bool:
        return self.status in (self.Status.COMPLETED, self.Status.FAILED, self.Status.CANCELLED)

    @property
    def has_expired(self) -> bool:
        return self.expires is not None and self.expires <= timezone.now()

    @property
    def ttl_ms(self) -> int | None:
        if self.expires is None:
            return None
        return max(1, round((self.expires - self.created).total_seconds() * 1000))

    @classmethod
    def expired(cls) -> models.QuerySet[ToolTask]:
        return cls.objects.filter(expires__lt=timezone.now())


# Personal access tokens --------------------------------------------------------------------------------

ACCESS_TOKEN_PREFIX = "mcpf_"
# A token's first characters, kept in clear so a person can tell their tokens apart in the admin.
SHOWN_CHARACTERS = 12
# last_used_at is written at most this often per token: a busy client must not turn every call into a write.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def _token_digest(raw: str) -> str:
    # A plain hash is enough: the secret is 256 random bits, so there is nothing to guess offline, and an
    # unkeyed digest survives a SECRET_KEY rotation.
    return hashlib.sha256(raw.encode()).hexdigest()


class AccessTokenQuerySet(models.QuerySet["AccessToken"]):
    def usable(self) -> AccessTokenQuerySet:
        now = timezone.now()
        return self.filter(revoked_at__isnull=True).exclude(expires_at__lte=now)


class AccessTokenManager(models.Manager["AccessToken"]):
    def get_queryset(self) -> AccessTokenQuerySet:
        return AccessTokenQuerySet(self.model, using=self._db)

    def usable(self) -> AccessTokenQuerySet:
        return self.get_queryset().usable()

    def issue(self, user: Any, name: str, *, expires_at: Any = None) -> tuple[AccessToken, str]:
        """Create a token for ``user`` and return it with its secret, which is stored only as a digest and
        can never be shown again."""
        token = self.model(user=user, name=name, expires_at=expires_at)
        raw = token.new_secret()
        token.save()
        return token, raw

    def user_for(self, raw: str) -> Any:
        """The active user ``raw`` authenticates, or None: unknown, revoked, expired or malformed alike."""
        if not raw.startswith(ACCESS_TOKEN_PREFIX) or len(raw) > 200:
            return None
        token = self.usable().select_related("user").filter(digest=_token_digest(raw)).first()
        if token is None or not token.user.is_active:
            return None
        now = timezone.now()
        if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
            self.filter(pk=token.pk).update(last_used_at=now)
        return token.user


class AccessToken(models.Model):
    """A personal access token: a secret an MCP client sends as ``Authorization: Bearer``, acting as its
    user. Only a digest is stored; revoking keeps the row, so the admin still shows what it was."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="mcpforms_access_tokens"
    )
    name = models.CharField(max_length=100, help_text="Where it is used, e.g. “Claude Desktop on my laptop”.")
    prefix = models.CharField(max_length=SHOWN_CHARACTERS, editable=False)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created = models.DateTimeField(default=timezone.now, editable=False)
    expires_at = models.DateTimeField(
        null=True, blank=True, help_text="Leave empty for a token that lasts until it is revoked."
    )
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = AccessTokenManager()

    class Meta:
        verbose_name = "access token"
        ordering = ["-created"]
        # Issuing a token for another user is acting as them (superusers included): its own permission, so
        # that adding tokens, which anyone may do for themselves, is never that (see SECURITY.md).
        permissions = [("issue_token_for_others", "Can issue and manage access tokens of other users")]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def status(self) -> str:
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= timezone.now():
            return "expired"
        return "active"

    def new_secret(self) -> str:
        """Give this (unsaved) token a fresh secret and return it: the only time it exists in clear."""
        raw = ACCESS_TOKEN_PREFIX + secrets.token_urlsafe(32)
        self.prefix = raw[:SHOWN_CHARACTERS]
        self.digest = _token_digest(raw)
        return raw

    def revoke(self) -> None:
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=["revoked_at"])
