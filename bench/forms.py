"""The form every target binds: the demo's ``SignupForm``, declared here so that no target needs the demo's
app (whose models, admin and tools a plain project does not have)."""

from django import forms


class SignupForm(forms.Form):
    """Create an account for the newsletter service."""

    email = forms.EmailField(help_text="We send the confirmation link here.")
    plan = forms.ChoiceField(choices=[("pro", "Pro"), ("team", "Team")])
    age = forms.IntegerField(min_value=18, max_value=120, required=False)
    newsletter = forms.BooleanField(required=False, label="Send me the newsletter")
