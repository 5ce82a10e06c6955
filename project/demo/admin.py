from django.contrib import admin

from project.demo.models import Refund, Ticket, TravelRequest


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


@admin.register(TravelRequest)
class TravelRequestAdmin(admin.ModelAdmin):
    """The trips the ``travel_request`` tool recorded, once the user went through every step: read only."""

    list_display = ["destination", "international", "departure", "return_date", "budget", "requested_by"]
    list_filter = ["international"]
    search_fields = ["destination"]

    def has_add_permission(self, request):
        return False  # a trip is asked for through the tool's steps, never typed in here

    def has_change_permission(self, request, obj=None):
        return False
