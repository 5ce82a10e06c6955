"""The demo's MCP tools: two forms the project already had, a refund that finance approves in the admin
before it is recorded, an export that a worker runs in the background, and a travel request asked one
step at a time. The README quotes this file."""

import time

import mcpforms
from project.demo.forms import (
    ConfirmForm,
    DestinationForm,
    ExportForm,
    PassportForm,
    RefundForm,
    SignupForm,
    TicketForm,
    TripDatesForm,
)
from project.demo.models import Refund, Ticket, TravelRequest


@mcpforms.tool(SignupForm, title="Sign up", message="Create your account")
def signup(request, form):
    return {"created": True, "email": form.cleaned_data["email"], "plan": form.cleaned_data["plan"]}


class CreateTicket(mcpforms.FormTool):
    """A ModelForm as a tool, written out as a class: without a handle() of its own it saves the ticket."""

    form_class = TicketForm
    name = "create_ticket"
    title = "Create ticket"
    message = "Open a support ticket"


mcpforms.register(CreateTicket)


@mcpforms.tool(
    RefundForm,
    title="Request a refund",
    message="Which order should be refunded?",
    approval="demo.approve_refund",  # finance (seed_demo) approves, rejects or sends it back in the admin
)
def refund_request(request, form):
    """Runs only once a finance user approved the request; ``request.user`` is who asked for it."""
    refund = Refund.objects.create(**form.cleaned_data, requested_by=request.user)
    return {
        "content": [
            {
                "type": "text",
                "text": f"Refund #{refund.pk} of {refund.amount} for {refund.order} is recorded.",
            }
        ],
        "structuredContent": {"refund": refund.pk, "order": refund.order, "amount": str(refund.amount)},
    }


@mcpforms.tool(
    ExportForm,
    title="Export tickets",
    message="Which tickets should be exported?",
    background=True,  # a client that follows tasks polls it while a worker runs it (make run starts one)
)
def export_tickets(request, form):
    """Slow on purpose, a second a ticket: the task's statusMessage shows where it is."""
    priority = form.cleaned_data["priority"]
    tickets = list(Ticket.objects.filter(priority=priority) if priority else Ticket.objects.all())
    total = len(tickets)
    for done, ticket in enumerate(tickets):
        request.report_progress(done, total, f"Exporting ticket {done + 1} of {total}: {ticket}")
        time.sleep(1)
    return {
        "content": [{"type": "text", "text": f"Exported {total} ticket(s)."}],
        "structuredContent": {"exported": [ticket.subject for ticket in tickets]},
    }


def goes_abroad(tool, request, cleaned):
    """When the trip is international"""  # what manage.py mcpforms_tools shows for the passport step
    return cleaned["destination"]["international"]


class TravelRequestWizard(mcpforms.WizardTool):
    """Request a business trip, step by step: the passport is asked only for a trip abroad, and a last step
    confirms the request."""

    name = "travel_request"
    title = "Request travel"
    form_list = [
        ("destination", DestinationForm),
        ("passport", PassportForm),
        ("dates_and_budget", TripDatesForm),
        ("confirmation", ConfirmForm),
    ]
    # A condition gets the tool, the request and the cleaned data of the active steps before its step.
    condition_dict = {"passport": goes_abroad}
    # The user confirms, even when the model passed confirmed=true along with the rest.
    always_ask = {"confirmation"}

    # Every step's form, where a FormTool's handle takes one: hence the type checker's "override".
    def handle(self, request, form_list, form_dict):  # type: ignore[override]
        """Runs once, when every step that applies is valid: the passport step's form is there only abroad."""
        answers = {name: value for form in form_list for name, value in form.cleaned_data.items()}
        del answers["confirmed"]
        trip = TravelRequest.objects.create(**answers, requested_by=request.user)
        dates = f"{trip.departure} to {trip.return_date}"
        return f"Travel request #{trip.pk} to {trip.destination}, {dates}, is recorded."


mcpforms.register(TravelRequestWizard)
