"""URLconf of the formset browser test's server: the test URLs, plus a "crew" wizard whose second step is a
formset (one to three members)."""

from __future__ import annotations

from django import forms

import mcpforms
from tests.urls import urlpatterns


class CrewForm(forms.Form):
    crew = forms.CharField(max_length=40)


class MemberForm(forms.Form):
    name = forms.CharField(max_length=30)
    age = forms.IntegerField(min_value=0, required=False)


class RemarksForm(forms.Form):
    remarks = forms.CharField()


class CrewWizard(mcpforms.WizardTool):
    """Put a crew together: its name, its members, a remark."""

    name = "crew"
    form_list = [
        ("about", CrewForm),
        ("members", forms.formset_factory(MemberForm, extra=1, min_num=1, max_num=3, validate_max=True)),
        ("closing", RemarksForm),
    ]

    def handle(self, request, form_list, form_dict):  # type: ignore[override]
        members = [
            f"{row['name']} ({row['age']})" if row["age"] is not None else row["name"]
            for row in form_dict["members"].cleaned_data
            if row
        ]
        return f"Crew {form_dict['about'].cleaned_data['crew']}: {', '.join(members)}."


mcpforms.register(CrewWizard)

__all__ = ["urlpatterns"]
