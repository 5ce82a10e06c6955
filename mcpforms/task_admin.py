"""The admin's approval requests: staff see the requests they may decide, read what was asked, and approve,
reject or send one back for an amendment (``mcpforms.approvals``).

Who sees a request is who may decide it: a tool's ``approval`` (a permission, or a callable asked about
each request) decides, and ``mcpforms.view_all_tasks`` shows every task, background ones too. Nothing here
edits a task: what the requester asked is shown read-only, under the tool's labels, and each decision is
its own POST.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from django.contrib import admin, messages
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from mcpforms.approvals import ApprovalRefused, Decided, amend, approve, fingerprint, reject, why_not
from mcpforms.fields import AutoFormField
from mcpforms.form_tasks import requester_gone
from mcpforms.models import ToolTask
from mcpforms.registry import form_tool_of
from mcpforms.task_store import LIVE
from mcpforms.tools import FormTool

if TYPE_CHECKING:
    ToolTaskModelAdmin = admin.ModelAdmin[ToolTask]
else:
    ToolTaskModelAdmin = admin.ModelAdmin

VIEW_ALL = "mcpforms.view_all_tasks"
DECISIONS = {"approve", "reject", "amend"}


def decidable_by(user: Any) -> QuerySet[ToolTask]:
    """The approval requests ``user`` may decide (``FormTool.may_approve``): every request of a tool whose
    approval is a permission they hold, whatever its status; of a tool whose approval is a callable (or a
    ``may_approve`` of its own), those waiting for a decision that it lets them decide, and those they
    decided. The callable is asked about each waiting request, which the task budgets bound, and never
    about the table's history: a week of decided requests would make every page ask it thousands of
    times."""
    requests = ToolTask.objects.filter(runner=ToolTask.Runner.STAFF)
    mine = Q(pk__in=[])
    for server, name in requests.values_list("server", "tool").distinct().order_by():
        tool = form_tool_of(server, name)
        if tool is None or tool.approval is None:
            continue  # nobody may decide a request of a tool not served here now
        of_tool = Q(server=server, tool=name)
        if isinstance(tool.approval, str) and type(tool).may_approve is FormTool.may_approve:
            if tool.may_approve(user, None):  # a permission: the same answer for every request
                mine |= of_tool
            continue
        waiting = requests.filter(of_tool, status__in=LIVE).exclude(expires__lte=timezone.now())
        mine |= Q(pk__in=[task.pk for task in waiting if tool.may_approve(user, task)])
        if getattr(user, "pk", None) is not None:
            mine |= of_tool & Q(decided_by=user.pk)
    return requests.filter(mine)


class ToolTaskAdmin(ToolTaskModelAdmin):
    list_display = ["number", "tool", "requester", "client_name", "status", "created"]
    list_filter = ["status"]
    ordering = ["-created"]
    list_select_related = ["user"]
    readonly_fields = [
        "number",
        "tool_title",
        "requester",
        "created",
        "client_name",
        "status",
        "status_message",
        "expires",
        "submitted",
        "decision",
        "decided_by",
        "decided_at",
        "reason",
    ]
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "number",
                    "tool_title",
                    "requester",
                    "created",
                    "client_name",
                    "status",
                    "status_message",
                    "expires",
                ]
            },
        ),
        ("What was asked", {"fields": ["submitted"]}),
        ("Decision", {"fields": ["decision", "decided_by", "decided_at", "reason"]}),
    ]

    # Who sees what -----------------------------------------------------------------------------------------

    def get_queryset(self, request: HttpRequest) -> QuerySet[ToolTask]:
        user = request.user
        if user.has_perm(VIEW_ALL):
            return super().get_queryset(request)
        return self._decidable(request).select_related("user")

    def has_view_permission(self, request: HttpRequest, obj: ToolTask | None = None) -> bool:
        if request.user.has_perm(VIEW_ALL):
            return True
        if obj is not None:
            tool = form_tool_of(obj.server, obj.tool)
            return tool is not None and tool.may_approve(request.user, obj)
        return self._decidable(request).exists()

    def _decidable(self, request: HttpRequest) -> QuerySet[ToolTask]:
        """``decidable_by`` the request's user, worked out once per request: the list, its count and the
        menu of every admin page (``has_module_permission``) all ask."""
        found: QuerySet[ToolTask] | None = getattr(request, "_mcpforms_decidable", None)
        if found is None:
            found = decidable_by(request.user)
            setattr(request, "_mcpforms_decidable", found)  # noqa: B010  (HttpRequest declares no such attribute)
        return found

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self.has_view_permission(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # requests come from assistants' calls, never typed in

    def has_change_permission(self, request: HttpRequest, obj: ToolTask | None = None) -> bool:
        return False  # what was asked is decided on, never edited: decisions have their own POST

    def has_delete_permission(self, request: HttpRequest, obj: ToolTask | None = None) -> bool:
        return False  # the record of who decided what; mcpforms_cleanup deletes expired ones

    # The columns and the page --------------------------------------------------------------------------

    @admin.display(description="request", ordering="pk")
    def number(self, task: ToolTask) -> str:
        return f"#{task.pk}"

    @admin.display(description="tool")
    def tool_title(self, task: ToolTask) -> str:
        tool = form_tool_of(task.server, task.tool)
        return task.tool if tool is None else f"{tool.get_title()} ({task.tool})"

    @admin.display(description="requester", ordering="user__username")
    def requester(self, task: ToolTask) -> str:
        name = task.user.get_username() if task.user is not None else task.principal
        gone = requester_gone(task.user, task.principal)
        return name if gone is None else f"{name} ({gone})"

    @admin.display(description="client")
    def client_name(self, task: ToolTask) -> str:
        client = task.client or {}
        name = client.get("title") or client.get("name") or "—"
        return f"{name} {client['version']}" if client.get("version") else name

    @admin.display(description="values")
    def submitted(self, task: ToolTask) -> str:
        tool = form_tool_of(task.server, task.tool)
        values, arguments = _part(task, "values"), _part(task, "arguments")
        rows = list(_shown(tool, values))
        if tool is not None and tool.update and tool.lookup in arguments:
            rows.insert(0, (f"Changes the object with {tool.lookup}", _display(arguments[tool.lookup])))
        if not rows:
            return "—"
        lines = format_html_join("", "<tr><th>{}</th><td>{}</td></tr>", rows)
        return format_html('<table class="mcpforms-values">{}</table>', lines)

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: Any = None
    ) -> HttpResponse:
        task = self.get_object(request, object_id)
        context = dict(extra_context or {})
        if task is not None:
            context |= self._decision_context(request, task)
        return super().change_view(request, object_id, form_url, context)

    def _decision_context(self, request: HttpRequest, task: ToolTask) -> dict[str, Any]:
        """The decision form under the request, or why there is none."""
        tool = form_tool_of(task.server, task.tool)
        if task.runner != ToolTask.Runner.STAFF:
            return {}
        if tool is None:
            return {"cannot_decide": f"The tool {task.tool!r} is not served here now; nobody can decide it."}
        refusal = why_not(tool, task, request.user)
        if refusal is not None:
            return {"cannot_decide": refusal}
        context = {"decision_url": self._url("decide", task.pk), "seen": fingerprint(task)}
        if (gone := requester_gone(task.user, task.principal)) is not None:
            context["requester_gone"] = (
                f"The account that made this request has been {gone}: approving runs nothing, and the "
                "request ends with that error. Reject it to close it with your reason."
            )
        return context

    # Deciding ------------------------------------------------------------------------------------------

    def get_urls(self) -> list[URLPattern]:
        opts = self.opts
        decide = path(
            "<path:object_id>/decide/",
            self.admin_site.admin_view(self.decide_view),
            name=f"{opts.app_label}_{opts.model_name}_decide",
        )
        return [decide, *super().get_urls()]

    def decide_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Approve, reject or send back one request (a POST from its page, CSRF-checked by the admin),
        then show its page again with what happened."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        task = self.get_object(request, object_id)
        if task is None or not self.has_view_permission(request, task):
            raise PermissionDenied
        tool = form_tool_of(task.server, task.tool)
        choice = request.POST.get("decision", "")
        if tool is None or choice not in DECISIONS:
            self.message_user(
                request, "Nothing was decided: choose Approve, Reject or Send back.", messages.ERROR
            )
            return HttpResponseRedirect(self._url("change", task.pk))
        approver = _approver(request)
        text, seen = request.POST.get("reason", ""), request.POST.get("seen") or None
        try:
            if choice == "approve":
                decided = approve(tool, task, approver, seen=seen)
            elif choice == "reject":
                decided = reject(tool, task, approver, text, seen=seen)
            else:
                decided = amend(tool, task, approver, text, seen=seen)
        except ApprovalRefused as refusal:
            self.message_user(request, str(refusal), messages.ERROR)
        else:
            self.message_user(request, decided.message, _level(decided))
        return HttpResponseRedirect(self._url("change", task.pk))

    def _url(self, view: str, *args: Any) -> str:
        name = f"admin:{self.opts.app_label}_{self.opts.model_name}_{view}"
        return reverse(name, args=args, current_app=self.admin_site.name)


def _level(decided: Decided) -> int:
    return messages.SUCCESS if decided.succeeded else messages.WARNING


def _approver(request: HttpRequest) -> Any:
    # AdminSite.admin_view lets only signed-in staff through: this is the user, never anonymous.
    if isinstance(request.user, AnonymousUser):
        raise PermissionDenied
    return request.user


def _part(task: ToolTask, name: str) -> dict[str, Any]:
    """What the task kept as ``name`` (its call's arguments, or the values its form was bound to)."""
    kept = task.arguments.get(name) if isinstance(task.arguments, dict) else None
    return dict(kept) if isinstance(kept, dict) else {}


def _shown(tool: FormTool | None, values: dict[str, Any]) -> Iterable[tuple[str, str]]:
    """Each kept value under its field's label, in the form's order, a choice by its label."""
    fields: dict[str, AutoFormField] = {}
    if tool is not None:
        fields = {auto.name: auto for auto in tool.fields_for(None)}
    for name in [
        *(name for name in fields if name in values),
        *(name for name in values if name not in fields),
    ]:
        auto = fields.get(name)
        label = auto.label if auto is not None else name
        yield label, _display(values[name], auto)


def _display(value: Any, auto: AutoFormField | None = None) -> str:
    choices = {option.value: option.label for option in auto.options} if auto is not None else {}
    if isinstance(value, list):
        return ", ".join(_display(item, auto) for item in value) or "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None or value == "":
        return "—"
    return str(choices.get(str(value), value))


admin.site.register(ToolTask, ToolTaskAdmin)
