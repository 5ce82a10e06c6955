"""The admin: staff publish forms to assistants, preview what the assistant will ask, browse submissions."""

from __future__ import annotations

import csv
import json
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from django import forms
from django.apps import apps
from django.contrib import admin, messages
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import ImproperlyConfigured, PermissionDenied, ValidationError
from django.db.models import QuerySet
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import add_never_cache_headers
from django.utils.html import format_html, format_html_join

from mcpforms.conf import conf
from mcpforms.definition_steps import starts_step, step_problems
from mcpforms.definitions import DefinitionWizard, definition_form_class, definition_tool, definition_tools
from mcpforms.field_rows import DefinitionError, auto_field_from_row, plain_number
from mcpforms.models import TOOL_NAME_VALIDATOR, AccessToken, FieldDefinition, FormDefinition, Submission
from mcpforms.registry import registries
from mcpforms.schema import form_schema
from mcpforms.tools import RegistrationError

# django-stubs makes these classes generic for the type checker only. At run time they cannot be
# subscripted unless django_stubs_ext.monkeypatch() ran, and a project that installs mcpforms has no
# reason to run it: so the subscripted bases exist for mypy alone.
if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser

    FieldDefinitionModelForm = forms.ModelForm[FieldDefinition]
    FormDefinitionModelForm = forms.ModelForm[FormDefinition]
    SubmissionModelForm = forms.ModelForm[Submission]
    FieldDefinitionStackedInline = admin.StackedInline[FieldDefinition, FormDefinition]
    FieldDefinitionInlineFormSet = BaseInlineFormSet[
        FieldDefinition, FormDefinition, FieldDefinitionModelForm
    ]
    FormDefinitionModelAdmin = admin.ModelAdmin[FormDefinition]
    SubmissionModelAdmin = admin.ModelAdmin[Submission]
else:
    FieldDefinitionModelForm = FormDefinitionModelForm = SubmissionModelForm = forms.ModelForm
    FieldDefinitionStackedInline = admin.StackedInline
    FieldDefinitionInlineFormSet = BaseInlineFormSet
    FormDefinitionModelAdmin = SubmissionModelAdmin = admin.ModelAdmin


class PlainNumberField(forms.FloatField):
    """A min or max as staff typed it: ``100``, not the ``100.0`` its float column holds."""

    def prepare_value(self, value: Any) -> Any:
        return plain_number(value) if isinstance(value, float) else value


class FieldDefinitionForm(FieldDefinitionModelForm):
    class Meta:
        model = FieldDefinition
        fields = "__all__"
        field_classes = {"min": PlainNumberField, "max": PlainNumberField}
        widgets = {
            "choices": forms.Textarea(attrs={"rows": 3, "cols": 40}),
            "condition_value": forms.Textarea(attrs={"rows": 2, "cols": 40}),
        }


class FieldDefinitionFormSet(FieldDefinitionInlineFormSet):
    """A definition's field rows: what only the rows together can get wrong, their steps and conditions,
    is an error on the row and input it is about (``definition_steps.step_problems``)."""

    def clean(self) -> None:
        super().clean()
        kept = [
            (index, form)
            for index, form in enumerate(self.forms)
            if (index < self.initial_form_count() or form.has_changed())
            and not form.cleaned_data.get("DELETE")
        ]
        # In the order the tool reads them (FieldDefinition.Meta.ordering), which the order column decides.
        kept.sort(key=lambda pair: (pair[1].instance.order, pair[1].instance.pk or float("inf"), pair[0]))
        rows = [form.instance for _, form in kept]
        problems = step_problems(rows, ask=self.instance.ask)
        for problem in problems:
            form = kept[problem.row][1]
            if problem.field not in form.errors:  # else its own error already says what is wrong there
                form.add_error(problem.field, str(problem))
        if problems or not any(starts_step(row) for row in rows) or not all(f.is_valid() for _, f in kept):
            return
        try:
            TOOL_NAME_VALIDATOR(self.instance.name)
        except ValidationError:
            return  # the name's own error is shown; what else the tool refuses shows once it is fixed
        try:
            # A safety net: whatever else the wizard or its checks would refuse, said before it is saved
            # rather than a tool silently left out.
            definition_tool(self.instance, rows)
        except (DefinitionError, RegistrationError, ImproperlyConfigured) as error:
            raise ValidationError(f"Assistants could not be offered this form: {error}") from None


class FieldDefinitionInline(FieldDefinitionStackedInline):
    """One block per field, so the page fits a laptop's window: what every field needs on two lines, the rest
    under "More options", folded while empty (mcpforms/admin.js) and unfolded by Django on an error."""

    model = FieldDefinition
    form = FieldDefinitionForm
    verbose_name = "field"
    verbose_name_plural = "fields"
    formset = FieldDefinitionFormSet
    extra = 1
    min_num = 1
    classes = ["mcpforms-fields"]
    fieldsets = [
        (None, {"fields": [("name", "label"), ("type", "required", "order")]}),
        # A row that starts a step, and the condition that step is asked on: folded on the other rows.
        (
            "Step",
            {"classes": ["collapse"], "fields": ["step", "condition_field", "condition", "condition_value"]},
        ),
        # One input per line here: Django unfolds a folded fieldset with an error only when the input is on
        # a line of its own (Fieldset.is_collapsible looks for the name among the lines).
        (
            "More options",
            {
                "classes": ["collapse"],
                "fields": ["choices", "multiple", "min", "max", "default", "placeholder", "help_text"],
            },
        ),
    ]

    class Media:
        css = {"all": ["mcpforms/admin.css"]}
        js = ["mcpforms/admin.js"]

    def get_max_num(self, request: HttpRequest, obj: FormDefinition | None = None, **kwargs: Any) -> int:
        # A form with more fields would never be offered as a tool (mcpforms.tools.check_convertible).
        return conf.MAX_FORM_FIELDS

    def get_formset(self, request: HttpRequest, obj: FormDefinition | None = None, **kwargs: Any) -> Any:
        # A form without fields would be a tool that asks nothing; the admin does not enforce min_num itself.
        formset = super().get_formset(request, obj, validate_min=True, validate_max=True, **kwargs)
        formset.default_error_messages = {
            "too_many_forms": "A form may have at most %(num)d fields (MCPFORMS['MAX_FORM_FIELDS']); "
            "assistants are never offered a larger one."
        }
        return formset


class FormDefinitionForm(FormDefinitionModelForm):
    class Meta:
        model = FormDefinition
        fields = "__all__"

    def clean_name(self) -> str:
        name: str = self.cleaned_data["name"]
        # Every server that serves admin-defined forms: on each, a tool defined in code would win the name.
        for _server, registry in registries():
            if registry.serves(definition_tools) and name in registry.tools:
                raise ValidationError(
                    f"{name!r} is already the name of a tool defined in code; choose another."
                )
        return name

    def clean_permission(self) -> str:
        permission: str = self.cleaned_data["permission"].strip()
        if permission and permission.count(".") != 1:
            raise ValidationError("Write the permission as app_label.codename, e.g. events.add_rsvp.")
        return permission


@admin.register(FormDefinition)
class FormDefinitionAdmin(FormDefinitionModelAdmin):
    form = FormDefinitionForm
    inlines = [FieldDefinitionInline]
    list_display = ["name", "title", "enabled", "ask", "version", "updated"]
    list_filter = ["enabled", "ask"]
    search_fields = ["name", "title", "description"]
    readonly_fields = ["version", "schema_preview", "form_preview"]
    fieldsets = [
        (None, {"fields": ["name", "title", "description", "message", "enabled"]}),
        ("Behaviour", {"fields": ["ask", "permission", "email_to"]}),
        ("Preview", {"fields": ["version", "schema_preview", "form_preview"]}),
    ]

    def _wizard(self, definition: FormDefinition) -> DefinitionWizard | str | None:
        """The tool of a saved definition with steps, or why it cannot be offered; None without steps."""
        rows = list(definition.fields.all())
        if definition._state.adding or not any(starts_step(row) for row in rows):
            return None
        try:
            tool = definition_tool(definition, rows)
        except (DefinitionError, RegistrationError, ImproperlyConfigured) as error:
            return f"This form cannot be offered to assistants: {error}"
        return tool if isinstance(tool, DefinitionWizard) else None

    def _steps_preview(self, definition: FormDefinition, render: Any) -> str | None:
        """For a definition with steps, each step: "Step k of N: title", when it is asked, and
        ``render(wizard, step)``; or why it cannot be offered. None for a definition without steps."""
        wizard = self._wizard(definition)
        if wizard is None or isinstance(wizard, str):
            return wizard
        count = len(wizard.steps)
        return format_html_join(
            "",
            '<section class="mcpforms-step"><h4>Step {} of {}: {}</h4><p>{}</p>{}</section>',
            (
                (
                    number,
                    count,
                    wizard.get_step_title(step),
                    _asked(wizard.describe_condition(step)),
                    render(wizard, step),
                )
                for number, step in enumerate(wizard.steps, start=1)
            ),
        )

    def _form_class(self, definition: FormDefinition) -> type[forms.Form] | None:
        if definition._state.adding:  # nothing to preview before the definition is saved
            return None
        try:
            return definition_form_class(definition)
        except DefinitionError:
            return None

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        if formset.model is not FieldDefinition:
            super().save_formset(request, form, formset, change)
            return
        # One save in the admin is one new version: save_model() already made it (a new definition starts
        # at 1), so the rows saved after it, in the same transaction, must not each add another.
        rows = formset.save(commit=False)
        for row in formset.deleted_objects:
            row.delete(touch=False)
        for row in rows:
            row.save(touch=False)
        formset.save_m2m()

    @admin.display(description="Elicitation schema")
    def schema_preview(self, definition: FormDefinition) -> str:
        steps = self._steps_preview(
            definition,
            lambda wizard, step: format_html(
                "<pre>{}</pre>", json.dumps(form_schema(wizard.step_fields(None, step)), indent=2)
            ),
        )
        if steps is not None:
            return steps
        form_class = self._form_class(definition)
        if form_class is None:
            return "Save the form to see the schema the assistant's client receives."
        schema = form_schema([auto_field_from_row(row) for row in definition.fields.all()])
        return format_html("<pre>{}</pre>", json.dumps(schema, indent=2))

    @admin.display(description="Rendered form")
    def form_preview(self, definition: FormDefinition) -> str:
        steps = self._steps_preview(
            definition,
            lambda wizard, step: format_html(
                '<div class="mcpforms-preview">{}</div>', wizard.steps[step]().as_div()
            ),
        )
        if steps is not None:
            return steps
        form_class = self._form_class(definition)
        if form_class is None:
            return "Save the form to see it rendered."
        return format_html('<div class="mcpforms-preview">{}</div>', form_class().as_div())


def _asked(condition: str | None) -> str:
    return "Always asked" if condition is None else f"Asked {condition}"


class SubmissionAdminForm(SubmissionModelForm):
    class Meta:
        model = Submission
        fields = ["status"]


@admin.register(Submission)
class SubmissionAdmin(SubmissionModelAdmin):
    form = SubmissionAdminForm
    list_display = ["__str__", "tool_name", "user", "status", "created"]
    list_filter = ["status", "definition", "created"]
    search_fields = ["tool_name", "data", "user__username"]
    date_hierarchy = "created"
    readonly_fields = ["definition", "tool_name", "pretty_data", "user", "client_info", "created"]
    fields = ["status", "definition", "tool_name", "pretty_data", "user", "client_info", "created"]
    actions = ["export_csv"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # submissions come from assistants, never typed in

    @admin.display(description="Data")
    def pretty_data(self, submission: Submission) -> str:
        return format_html(
            "<pre>{}</pre>", json.dumps(submission.ordered_data(), indent=2, ensure_ascii=False)
        )

    @admin.action(description="Export selected submissions as CSV")
    def export_csv(self, request: HttpRequest, queryset: QuerySet[Submission]) -> HttpResponse:
        submissions = list(
            queryset.select_related("user", "definition")
            .prefetch_related("definition__fields")
            .order_by("created", "pk")
        )
        keys: list[str] = []
        for submission in submissions:  # every data key, in form order as first seen
            keys.extend(key for key in submission.ordered_data() if key not in keys)
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="submissions.csv"'
        writer = csv.writer(response)
        writer.writerow(["id", "created", "form", "user", "status", *keys])
        for submission in submissions:
            row = [
                submission.pk,
                submission.created.isoformat(),
                submission.tool_name,
                _cell(submission.user.get_username()) if submission.user else "",
                submission.status,
            ]
            writer.writerow(row + [_cell(submission.data.get(key)) for key in keys])
        return response


def _cell(value: Any) -> str:
    if value is None:
        return ""
    text = ", ".join(str(item) for item in value) if isinstance(value, list) else str(value)
    # Spreadsheets run a cell starting with one of these as a formula: user input must stay text.
    return "'" + text if text.startswith(("=", "+", "-", "@", "\t", "\r")) else text


# Personal access tokens ----------------------------------------------------------------------------------

if TYPE_CHECKING:
    AccessTokenModelAdmin = admin.ModelAdmin[AccessToken]
else:
    AccessTokenModelAdmin = admin.ModelAdmin


# Issuing a token for someone else is acting as them: whoever holds this (or is a superuser) may, everyone
# else issues, sees and revokes only their own tokens.
ISSUE_FOR_OTHERS = "mcpforms.issue_token_for_others"

# The secret of the token a request just created, from save_model() to response_add(): never through the
# messages framework, whose cookie or session row would keep it after the page is gone.
_new_secrets: WeakKeyDictionary[HttpRequest, str] = WeakKeyDictionary()


@admin.register(AccessToken)
class AccessTokenAdmin(AccessTokenModelAdmin):
    """Tokens are created here (the secret is shown once, on the page that answers the save), renamed, given
    an expiry, and revoked; a revoked token stays listed so its last use can still be read."""

    list_display = ("name", "user", "shown", "created", "expires_at", "last_used_at", "status")
    list_filter = (("revoked_at", admin.EmptyFieldListFilter),)
    search_fields = ("name", "prefix", "user__username")
    raw_id_fields = ("user",)
    readonly_fields = ("shown", "created", "last_used_at", "revoked_at", "status")
    actions = ["revoke"]
    created_template = "admin/mcpforms/accesstoken/token_created.html"

    @admin.display(description="token")
    def shown(self, token: AccessToken) -> str:
        return f"{token.prefix}…" if token.prefix else "—"

    @admin.display(description="status")
    def status(self, token: AccessToken) -> str:
        return token.status

    def may_act_for_others(self, request: HttpRequest) -> bool:
        """Whether this editor may choose a token's user, and see and revoke other users' tokens."""
        return request.user.has_perm(ISSUE_FOR_OTHERS)  # always true for an active superuser

    def get_queryset(self, request: HttpRequest) -> QuerySet[AccessToken]:
        # The changelist, the change and delete views and every action start from here: a token outside
        # it is, to this editor, a token that does not exist.
        tokens = super().get_queryset(request)
        return tokens if self.may_act_for_others(request) else tokens.filter(user_id=_editor(request).pk)

    def get_exclude(self, request: HttpRequest, obj: AccessToken | None = None) -> Any:
        # Without the permission there is no user to choose: the form has no such field, so a posted
        # "user" is ignored and save_model() makes the editor the owner.
        if obj is None and not self.may_act_for_others(request):
            return ("user",)
        return super().get_exclude(request, obj)

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        return {"user": request.user.pk, **super().get_changeform_initial_data(request)}

    def get_readonly_fields(self, request: HttpRequest, obj: AccessToken | None = None) -> Any:
        # A token acts for the user it was made for: moving it to someone else would hand them a secret
        # another person holds.
        return self.readonly_fields + (("user",) if obj is not None else ())

    def save_model(self, request: HttpRequest, obj: AccessToken, form: Any, change: bool) -> None:
        if not change:
            if not self.may_act_for_others(request):
                obj.user_id = _editor(request).pk
            _new_secrets[request] = obj.new_secret()
        super().save_model(request, obj, form, change)

    def response_add(
        self, request: HttpRequest, obj: AccessToken, post_url_continue: str | None = None
    ) -> Any:
        # The secret is shown here, in the answer to the save, whichever save button was used: a redirect
        # would have to carry it to the next page, and anything that carries it keeps it.
        secret = _new_secrets.pop(request, None)
        if secret is None:  # not a token this request created: nothing secret to show
            return super().response_add(request, obj, post_url_continue)
        next_url, next_label = self._after_created(request, obj)
        response = TemplateResponse(
            request,
            self.created_template,
            {
                **self.admin_site.each_context(request),
                "opts": self.opts,
                "title": f"Copy the token for “{obj.name}” now",
                "token": obj,
                "secret": secret,
                "next_url": next_url,
                "next_label": next_label,
                "changelist_url": self._changelist_url(request),
            },
        )
        add_never_cache_headers(response)  # no browser or proxy cache keeps a copy either
        return response

    def _after_created(self, request: HttpRequest, obj: AccessToken) -> tuple[str, str]:
        """Where the button the editor pressed would have gone, offered as a link under the secret."""
        if "_continue" in request.POST and self.has_change_permission(request, obj):
            return self._url("change", obj.pk), "Edit this token"
        if "_addanother" in request.POST:
            return self._url("add"), "Add another token"
        return "", ""

    def _changelist_url(self, request: HttpRequest) -> str:
        # Someone who may only add tokens cannot open the list: the page links to the admin's index instead.
        return self._url("changelist") if self.has_view_or_change_permission(request) else ""

    def _url(self, view: str, *args: Any) -> str:
        name = f"admin:{self.opts.app_label}_{self.opts.model_name}_{view}"
        return reverse(name, args=args, current_app=self.admin_site.name)

    @admin.action(description="Revoke the selected tokens", permissions=["change"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[AccessToken]) -> None:
        # The queryset comes from get_queryset(): an id of a token the editor may not manage selects nothing.
        revoked = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"Revoked {revoked} token(s).", messages.SUCCESS)


def _editor(request: HttpRequest) -> AbstractBaseUser:
    # AdminSite.admin_view lets only signed-in staff reach a ModelAdmin, so this is the user, never anonymous.
    if isinstance(request.user, AnonymousUser):
        raise PermissionDenied
    return request.user


# Approval requests (and, for those who may see every task, background ones): their own module.
import mcpforms.task_admin  # noqa: E402, F401

# The connected assistants (django-oauth-toolkit's access tokens), only where the optional extra is installed.
if apps.is_installed("oauth2_provider"):
    import mcpforms.oauth.admin  # noqa: F401
