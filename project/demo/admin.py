from django.contrib import admin

from project.demo.models import Refund, Ticket


@admin.register(Ticket)
class TicketAdmin(admin.ModelAdmin):
    list_display = ["subject", "priority", "due", "created"]
    list_filter = ["priority"]
    search_fields = ["subject", "body"]


@admin.register(Refund)
class RefundAdmin(admin.ModelAdmin):
    """The refunds the ``refund_request`` tool recorded, each once finance approved it: read only."""

    list_display = ["order", "amount", "requested_by", "created"]
    search_fields = ["order", "reason"]

    def has_add_permission(self, request):
        return False  # a refund is asked for through the tool, and approved, never typed in here

    def has_change_permission(self, request, obj=None):
        return False
