"""The demo's MCP tools: two forms the project already had, one call each. The README quotes this file."""

import mcpforms
from project.demo.forms import SignupForm, TicketForm


@mcpforms.register(SignupForm, title="Sign up", message="Create your account")
def signup(request, form):
    return {"created": True, "email": form.cleaned_data["email"], "plan": form.cleaned_data["plan"]}


mcpforms.register(TicketForm, name="create_ticket", title="Create ticket", message="Open a support ticket")
