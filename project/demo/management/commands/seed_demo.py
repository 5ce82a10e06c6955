"""Seed the demo database. Safe to run on every `make run`: it only adds what is missing."""

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management.base import BaseCommand
from django.db import transaction

from mcpforms.models import FieldDefinition, FormDefinition
from project.demo.models import Ticket

TICKETS = [
    ("Printer on floor 2 jams", "It jams on every duplex job since Monday.", "normal"),
    ("VPN drops every hour", "The connection resets at the top of each hour.", "high"),
]

# Local demo only: the README documents this login.
STAFF_USERNAME = "staff"
STAFF_PASSWORD = "mcpforms-demo"
# Staff but no superuser: they may approve refund requests (the refund_request tool's approval permission)
# and do nothing else in the admin. The staff user asks, finance decides: nobody approves their own request.
FINANCE_USERNAME = "finance"
FINANCE_PASSWORD = "mcpforms-finance"
APPROVE_REFUND = ("demo", "approve_refund")

ADMIN_FORMS: list[dict[str, Any]] = [
    {
        "name": "event_rsvp",
        "title": "Event RSVP",
        "description": "Answer the invitation to the summer party on 2027-06-18.",
        "message": "Will you come to the summer party?",
        "fields": [
            {"name": "name", "label": "Your name", "type": "text", "required": True, "max": 80},
            {"name": "email", "type": "email", "required": True},
            {
                "name": "attending",
                "label": "Will you attend?",
                "type": "text",
                "required": True,
                "choices": "yes|Yes\nno|No\nmaybe|Maybe",
            },
            {
                "name": "guests",
                "label": "Extra guests",
                "type": "integer",
                "min": 0,
                "max": 4,
                "default": "0",
            },
            {
                "name": "diet",
                "label": "Dietary needs",
                "type": "text",
                "choices": "vegetarian|Vegetarian\nvegan|Vegan\ngluten_free|Gluten-free",
                "multiple": True,
            },
        ],
    },
    {
        "name": "feedback",
        "title": "Product feedback",
        "description": "Tell the product team what works and what does not.",
        "message": "How is it going?",
        "fields": [
            {
                "name": "rating",
                "label": "Rating (1-5)",
                "type": "integer",
                "required": True,
                "min": 1,
                "max": 5,
            },
            {"name": "comments", "type": "textarea", "max": 2000},
            {"name": "contact_me", "label": "You may contact me about this", "type": "boolean"},
        ],
    },
]


class Command(BaseCommand):
    help = "Add the demo's sample data if it is not there yet."

    @transaction.atomic
    def handle(self, *args: Any, **options: Any) -> None:
        created = 0
        for subject, body, priority in TICKETS:
            _, was_created = Ticket.objects.get_or_create(
                subject=subject, defaults={"body": body, "priority": priority}
            )
            created += was_created
        forms_added = 0
        for spec in ADMIN_FORMS:
            fields = spec["fields"]
            definition, was_created = FormDefinition.objects.get_or_create(
                name=spec["name"], defaults={k: v for k, v in spec.items() if k not in ("name", "fields")}
            )
            if was_created:
                forms_added += 1
                for order, field in enumerate(fields):
                    # Rows made with their definition: one version for the whole form, as in the admin.
                    FieldDefinition(definition=definition, order=order, **field).save(touch=False)
        users = get_user_model().objects
        if not users.filter(username=STAFF_USERNAME).exists():
            users.create_superuser(STAFF_USERNAME, "staff@example.com", STAFF_PASSWORD)
        if not users.filter(username=FINANCE_USERNAME).exists():
            finance = users.create_user(
                FINANCE_USERNAME, "finance@example.com", FINANCE_PASSWORD, is_staff=True
            )
            app_label, codename = APPROVE_REFUND
            finance.user_permissions.add(
                Permission.objects.get(content_type__app_label=app_label, codename=codename)
            )
        self.stdout.write(
            f"Demo data ready ({created} ticket(s), {forms_added} admin-defined form(s) added; "
            f"admin login {STAFF_USERNAME} / {STAFF_PASSWORD}, refunds approved by "
            f"{FINANCE_USERNAME} / {FINANCE_PASSWORD})."
        )
