"""Seed the demo database. Safe to run on every `make run`: it only adds what is missing."""

from typing import Any

from django.core.management.base import BaseCommand

from project.demo.models import Ticket

TICKETS = [
    ("Printer on floor 2 jams", "It jams on every duplex job since Monday.", "normal"),
    ("VPN drops every hour", "The connection resets at the top of each hour.", "high"),
]


class Command(BaseCommand):
    help = "Add the demo's sample data if it is not there yet."

    def handle(self, *args: Any, **options: Any) -> None:
        created = 0
        for subject, body, priority in TICKETS:
            _, was_created = Ticket.objects.get_or_create(
                subject=subject, defaults={"body": body, "priority": priority}
            )
            created += was_created
        self.stdout.write(f"Demo data ready ({created} ticket(s) added).")
