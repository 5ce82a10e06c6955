"""``signup_write``: the demo's ``signup`` tool, whose handler also stores the signup (``bench/writes.py``),
inside the transaction in which mcpforms records the completed flow."""

import mcpforms
from bench.writes import insert_signup
from project.demo.forms import SignupForm


@mcpforms.tool(SignupForm, title="Sign up", message="Create your account")
def signup_write(request, form):
    insert_signup(form.cleaned_data)
    return {"created": True, "email": form.cleaned_data["email"], "plan": form.cleaned_data["plan"]}
