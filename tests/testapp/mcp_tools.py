"""Found by autodiscovery: the test app's tools, served by the default server. Each way a project registers
a tool once: a form with the default handler, a form with a handler of its own, and a ModelForm tool
written out as a class."""

from django import forms

import mcpforms
from tests.forms import SignupForm
from tests.testapp.models import Colour

mcpforms.register(SignupForm, name="testapp_signup")


@mcpforms.tool(SignupForm, title="Sign up", message="Create your account")
def signup(request, form):
    return {"created": True, "email": form.cleaned_data["email"], "plan": form.cleaned_data["plan"]}


class ColourForm(forms.ModelForm):
    """Add a colour."""

    class Meta:
        model = Colour
        fields = ["name", "code"]


class CreateColour(mcpforms.FormTool):
    """Without a handle() of its own, the tool saves the colour."""

    form_class = ColourForm
    name = "create_colour"
    title = "Create colour"
    message = "Add a colour"


mcpforms.register(CreateColour)
