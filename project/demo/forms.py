"""The demo's forms: ordinary Django forms that mcpforms turns into MCP tools."""

from django import forms

from project.demo.models import Ticket


class SignupForm(forms.Form):
    """Create an account for the newsletter service."""

    email = forms.EmailField(help_text="We send the confirmation link here.")
    plan = forms.ChoiceField(choices=[("pro", "Pro"), ("team", "Team")])
    age = forms.IntegerField(min_value=18, max_value=120, required=False)
    newsletter = forms.BooleanField(required=False, label="Send me the newsletter")


class TicketForm(forms.ModelForm):
    """Open a support ticket."""

    class Meta:
        model = Ticket
        fields = ["subject", "body", "priority", "due"]
        widgets = {"body": forms.Textarea}
