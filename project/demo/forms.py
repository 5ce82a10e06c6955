"""The demo's forms: ordinary Django forms that mcpforms turns into MCP tools."""

from decimal import Decimal

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


class RefundForm(forms.Form):
    """Ask for a refund of an order. Finance approves it in the admin before anything is paid back."""

    order = forms.RegexField(
        regex=r"^ORD-\d{4,8}$",
        label="Order reference",
        max_length=13,
        help_text="As on the receipt, e.g. ORD-1042.",
        error_messages={"invalid": "Enter the reference as on the receipt, e.g. ORD-1042."},
    )
    amount = forms.DecimalField(min_value=Decimal("0.01"), max_digits=10, decimal_places=2)
    reason = forms.CharField(max_length=500, widget=forms.Textarea, help_text="Why the money goes back.")


class ExportForm(forms.Form):
    """Export the support tickets, all of them or those of one priority."""

    priority = forms.ChoiceField(
        choices=[("", "Any priority"), *Ticket.Priority.choices],
        required=False,
        help_text="Leave empty to export every ticket.",
    )
