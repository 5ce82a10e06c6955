"""The bench's tools, found by mcpforms' autodiscovery: ``signup``, the demo's tool of that name, and
``signup_write``, whose handler also stores the signup (``bench/writes.py``) inside the transaction in which
mcpforms records the completed flow."""

import mcpforms
from bench.forms import SignupForm
from bench.writes import insert_signup


@mcpforms.tool(SignupForm, title="Sign up", message="Create your account")
def signup(request, form):
    return {"created": True, "email": form.cleaned_data["email"], "plan": form.cleaned_data["plan"]}


@mcpforms.tool(SignupForm, title="Sign up", message="Create your account")
def signup_write(request, form):
    insert_signup(form.cleaned_data)
    return {"created": True, "email": form.cleaned_data["email"], "plan": form.cleaned_data["plan"]}
