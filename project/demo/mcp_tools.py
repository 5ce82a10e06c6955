"""The demo's MCP tools: two forms the project already had, and a refund that finance approves in the admin
before it is recorded. The README quotes this file."""

import mcpforms
from project.demo.forms import RefundForm, SignupForm, TicketForm
from project.demo.models import Refund


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
