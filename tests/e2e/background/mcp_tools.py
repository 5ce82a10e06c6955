"""The background tool: a handler that works in steps, reporting each, then saves what it made."""

import time

from django import forms

import mcpforms
from tests.testapp.models import Colour


class MixForm(forms.Form):
    """Mix a new colour, slowly."""

    name = forms.CharField(max_length=30)
    steps = forms.IntegerField(min_value=1, max_value=100)


@mcpforms.tool(MixForm, name="mix", background=True)
def mix(request, form):
    name, steps = form.cleaned_data["name"], form.cleaned_data["steps"]
    for step in range(1, steps + 1):
        request.report_progress(step, steps, f"Step {step} of {steps}")
        time.sleep(0.2)
    Colour.objects.create(name=name, code=f"#{steps:06d}")
    return f"Mixed {name} in {steps} steps"
