from django.contrib import admin

from project.demo.models import Ticket


@admin.register(Ticket)
class TicketAdmin(admin.ModelAdmin):
    list_display = ["subject", "priority", "due", "created"]
    list_filter = ["priority"]
    search_fields = ["subject", "body"]
