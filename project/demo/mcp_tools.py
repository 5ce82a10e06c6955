"""The demo's MCP tools: two forms the project already had. The README quotes this file."""

import mcpforms
from project.demo.forms import SignupForm, TicketForm


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
