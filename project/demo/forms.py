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


# The steps of the ``travel_request`` wizard (mcp_tools.py), one form each, asked one per round.


class DestinationForm(forms.Form):
    """Where the trip goes."""

    destination = forms.CharField(max_length=100, help_text="A city, e.g. Tokyo.")
    international = forms.BooleanField(required=False, label="The trip leaves the country")


class PassportForm(forms.Form):
    """Asked only for an international trip."""

    passport_number = forms.RegexField(
        regex=r"^[A-Z0-9]{6,9}$",
        max_length=9,
        error_messages={"invalid": "Enter the 6 to 9 letters and digits of the passport, e.g. X1234567."},
    )
    passport_expiry = forms.DateField(label="Passport valid until")


class TripDatesForm(forms.Form):
    """When, and how much it may cost."""

    departure = forms.DateField()
    return_date = forms.DateField()
    budget = forms.DecimalField(min_value=Decimal("1"), max_digits=10, decimal_places=2)

    def clean(self):
        departure, back = self.cleaned_data.get("departure"), self.cleaned_data.get("return_date")
        if departure and back and back < departure:
            raise forms.ValidationError("The return date cannot be before the departure.")
        return self.cleaned_data


class ConfirmForm(forms.Form):
    """The last step: the user says the request is right before it is stored."""

    confirmed = forms.BooleanField(label="I confirm this travel request")
