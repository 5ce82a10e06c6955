"""URLconf of the wizard browser test's server: the test URLs, plus a three-step trip wizard whose passport
step is asked only for a trip abroad."""

from __future__ import annotations

from typing import Any

from django import forms

import mcpforms
from tests.urls import urlpatterns


class DestinationForm(forms.Form):
    destination = forms.CharField(max_length=60)
    international = forms.BooleanField(required=False, label="Outside the country")


class PassportForm(forms.Form):
    passport_number = forms.CharField(min_length=6)


class DatesForm(forms.Form):
    start = forms.DateField()
    budget = forms.IntegerField(min_value=1)


def goes_abroad(tool: Any, request: Any, cleaned: Any) -> bool:
    return bool(cleaned["destination"]["international"])


class TripWizard(mcpforms.WizardTool):
    """Plan a trip, step by step."""

    name = "trip"
    form_list = [("destination", DestinationForm), ("passport", PassportForm), ("dates", DatesForm)]
    condition_dict = {"passport": goes_abroad}

    def handle(self, request, form_list, form_dict):  # type: ignore[override]
        answers = {name: value for form in form_list for name, value in form.cleaned_data.items()}
        return f"Trip to {answers['destination']} on {answers['start']}, steps: {', '.join(form_dict)}."


mcpforms.register(TripWizard)

__all__ = ["urlpatterns"]
