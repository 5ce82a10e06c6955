"""The admin's connected assistants: which assistant holds tokens of which user, how it was registered (a
client metadata document's host, dynamic registration, or by staff), and a revoke action.

Django's admin has one ModelAdmin per model and site, and django-oauth-toolkit registers one for its access
tokens; a second model (a proxy) would need a migration. So this replaces the toolkit's access-token admin
with a subclass that keeps everything it does (masked tokens, no adding, no raw deletes) and adds the
connected-assistant view, unless the project named its own class in ``ACCESS_TOKEN_ADMIN_CLASS``. The
subclass also drops the toolkit's "Revoke selected access tokens" action: it declares no permission, so
staff allowed only to *view* tokens could revoke them.

Registered from ``mcpforms/admin.py`` when ``oauth2_provider`` is installed.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.contrib import admin, messages
from django.db.models import Exists, Max, OuterRef, QuerySet
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from oauth2_provider import admin as toolkit_admin  # first: the toolkit's admins, whatever the app order
from oauth2_provider.models import get_access_token_model, get_application_model, get_refresh_token_model

from mcpforms.oauth.consent import client_of, revoke_assistant

EVERY_TOKEN = "every"


class RowsFilter(admin.SimpleListFilter):
    """One row per user and assistant (its newest token) unless staff ask for every token."""

    title = "rows"
    parameter_name = "tokens"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(EVERY_TOKEN, "Every token")]

    def choices(self, changelist: Any) -> Any:
        yield {
            "selected": self.value() is None,
            "query_string": changelist.get_query_string(remove=[self.parameter_name]),
            "display": "One per user and assistant",
        }
        yield {
            "selected": self.value() == EVERY_TOKEN,
            "query_string": changelist.get_query_string({self.parameter_name: EVERY_TOKEN}),
            "display": "Every token",
        }

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == EVERY_TOKEN:
            return queryset
        newest = (
            get_access_token_model()
            .objects.order_by()
            .values("user", "application")
            .annotate(newest=Max("pk"))
            .values("newest")
        )
        return queryset.filter(pk__in=newest)


class RegistrationFilter(admin.SimpleListFilter):
    """How the assistant came to be known: the host of its client metadata document, by registering itself
    (RFC 7591), or added by staff."""

    title = "registered"
    parameter_name = "registered"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        cimd_ids = (
            get_application_model()
            .objects.filter(registration_source="cimd")
            .values_list("client_id", flat=True)
        )
        hosts = sorted({urlsplit(client_id).netloc.lower() for client_id in cimd_ids} - {""})
        return [
            *((f"cimd:{host}", f"{host} (metadata document)") for host in hosts),
            ("dcr", "Registered itself (DCR)"),
            ("manual", "Added by staff"),
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        if value in ("dcr", "manual"):
            return queryset.filter(application__registration_source=value)
        if value and value.startswith("cimd:"):
            # The host is followed by the path's slash: claude.ai never matches claude.ai.evil.example.
            prefix = f"https://{value.removeprefix('cimd:')}/"
            return queryset.filter(
                application__registration_source="cimd", application__client_id__istartswith=prefix
            )
        return queryset


class ConnectedAssistantAdmin(toolkit_admin.AccessTokenAdmin):  # type: ignore[misc]
    list_display = ("assistant", "user", "registered", "scope", "created", "expires", "connected")
    list_filter = (RowsFilter, RegistrationFilter)
    actions = ("revoke_assistants",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        live_refresh = get_refresh_token_model().objects.filter(
            user=OuterRef("user"), application=OuterRef("application"), revoked__isnull=True
        )
        queryset: QuerySet[Any] = super().get_queryset(request)
        annotated: QuerySet[Any] = queryset.annotate(has_live_refresh=Exists(live_refresh))
        return annotated

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        title = "Connected assistants" if request.GET.get(RowsFilter.parameter_name) != EVERY_TOKEN else None
        context = {**(extra_context or {}), **({"title": title} if title else {})}
        response: HttpResponse = super().changelist_view(request, extra_context=context)
        return response

    @admin.display(description="assistant", ordering="application__name")
    def assistant(self, token: Any) -> str:
        return client_of(token.application).name if token.application is not None else "—"

    @admin.display(description="registered", ordering="application__registration_source")
    def registered(self, token: Any) -> str:
        if token.application is None:
            return "—"
        client = client_of(token.application)
        if client.source == "cimd":
            return f"{client.host} (metadata document)"
        return "Registered itself (DCR), name unverified" if client.unverified else "Added by staff"

    @admin.display(description="connected", boolean=True)
    def connected(self, token: Any) -> bool:
        # Usable now, or renewable: a live refresh token mints the next access token.
        return bool(token.expires > timezone.now() or getattr(token, "has_live_refresh", False))

    @admin.action(
        description="Revoke the selected assistants’ access (every token of that user)",
        permissions=["change"],
    )
    def revoke_assistants(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        pairs = {(token.user, token.application) for token in queryset.select_related("user", "application")}
        revoked = [
            revoke_assistant(user, application) for user, application in pairs if application is not None
        ]
        ended = sum(1 for count in revoked if count)
        self.message_user(request, f"Revoked the access of {ended} assistant(s).", messages.SUCCESS)


class RefreshTokenAdmin(toolkit_admin.RefreshTokenAdmin):  # type: ignore[misc]
    """The toolkit's refresh-token admin, whose revoke action needs the change permission: as declared
    there, staff allowed only to view refresh tokens could revoke every assistant's."""

    @admin.action(description="Revoke selected refresh tokens", permissions=["change"])
    def revoke_tokens(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        super().revoke_tokens(request, queryset)


def _replace(site: admin.AdminSite, model: Any, toolkit_class: type, ours: type) -> None:
    """Register ``ours`` for ``model`` in place of the toolkit's own admin, but never in place of a
    class the project chose (the toolkit's ``*_ADMIN_CLASS`` settings): that is theirs to keep."""
    if site.is_registered(model):
        if type(site.get_model_admin(model)) is not toolkit_class:
            return
        site.unregister(model)
    site.register(model, ours)


def register(site: admin.AdminSite = admin.site) -> None:
    """Show access tokens as connected assistants, and guard the toolkit's refresh-token revoke action."""
    _replace(site, get_access_token_model(), toolkit_admin.AccessTokenAdmin, ConnectedAssistantAdmin)
    _replace(site, get_refresh_token_model(), toolkit_admin.RefreshTokenAdmin, RefreshTokenAdmin)


register()
