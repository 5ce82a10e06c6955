"""Forms shared by the test modules: one field of every kind mcpforms maps."""

from __future__ import annotations

import datetime
import decimal
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import MaxLengthValidator, MinValueValidator

from tests.testapp.models import Colour


class EveryFieldForm(forms.Form):
    """A field of each class in the mapping table, with bounds, help text and initial values."""

    char = forms.CharField(min_length=2, max_length=20, help_text="Some text", initial="hello")
    secret = forms.CharField(widget=forms.PasswordInput)
    essay = forms.CharField(widget=forms.Textarea, required=False, validators=[MaxLengthValidator(500)])
    email = forms.EmailField(required=False)
    website = forms.URLField(required=False, assume_scheme="https")
    slug = forms.SlugField(required=False)
    postcode = forms.RegexField(regex=r"^\d{4}$", required=False, max_length=4)
    count = forms.IntegerField(min_value=1, max_value=10, initial=3)
    ratio = forms.FloatField(required=False, validators=[MinValueValidator(0.5)])
    price = forms.DecimalField(
        required=False,
        min_value=decimal.Decimal("0.5"),
        max_value=decimal.Decimal("99"),
        initial=decimal.Decimal("2.50"),
    )
    agree = forms.BooleanField(required=False, initial=True)
    maybe = forms.NullBooleanField(required=False, initial=False)
    day = forms.DateField(required=False, initial=datetime.date(2026, 1, 2))
    moment = forms.DateTimeField(
        required=False, initial=datetime.datetime(2026, 1, 2, 3, 4, tzinfo=datetime.UTC)
    )
    split_moment = forms.SplitDateTimeField(required=False)
    at = forms.TimeField(required=False, initial=datetime.time(9, 30))
    size = forms.ChoiceField(
        choices=[("", "---------"), ("s", "Small"), ("Big ones", [("l", "Large"), ("xl", "Huge")])],
        initial="s",
    )
    typed = forms.TypedChoiceField(choices=[(1, "One"), (2, "Two")], coerce=int, required=False)
    path = forms.FilePathField(path=str(__import__("pathlib").Path(__file__).parent / "testapp"))
    toppings = forms.MultipleChoiceField(
        choices=[("ham", "Ham"), ("egg", "Egg"), ("cheese", "Cheese")], required=False, initial=["egg"]
    )
    numbers = forms.TypedMultipleChoiceField(choices=[(1, "One"), (2, "Two")], coerce=int, required=False)
    colour = forms.ModelChoiceField(queryset=Colour.objects.all(), required=False)
    colour_by_code = forms.ModelChoiceField(
        queryset=Colour.objects.all(), to_field_name="code", required=False
    )
    palette = forms.ModelMultipleChoiceField(queryset=Colour.objects.all(), required=False)
    upload = forms.FileField(required=False)
    picture = forms.ImageField(required=False)
    token = forms.CharField(widget=forms.HiddenInput, required=False, initial="abc")
    ident = forms.UUIDField(required=False)
    address = forms.GenericIPAddressField(required=False)
    wait = forms.DurationField(required=False)
    payload = forms.JSONField(required=False)
    nickname = forms.CharField(
        required=False, widget=forms.TextInput(attrs={"placeholder": "e.g. Ada"}), label="Nick"
    )


class SignupForm(forms.Form):
    """Create an account."""

    email = forms.EmailField()
    plan = forms.ChoiceField(choices=[("pro", "Pro"), ("team", "Team")])
    age = forms.IntegerField(min_value=18, max_value=120, required=False)
    newsletter = forms.BooleanField(required=False)

    def clean_email(self) -> str:
        email: str = self.cleaned_data["email"]
        if email.endswith("@example.invalid"):
            raise ValidationError("That domain does not receive mail.")
        return email


class PrefixedForm(forms.Form):
    prefix = "pre"
    name = forms.CharField()
    when = forms.SplitDateTimeField()


class CustomisedForm(forms.Form):
    """Its __init__ narrows a field, the way many real forms do."""

    plan = forms.ChoiceField(choices=[("free", "Free"), ("pro", "Pro")])

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        plan = self.fields["plan"]
        assert isinstance(plan, forms.ChoiceField)
        plan.choices = [("pro", "Pro only")]
        self.fields["plan"].help_text = "Chosen in __init__"
