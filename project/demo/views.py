import json

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from mcpforms import fields_for_form, form_schema
from project.demo.forms import SignupForm, TicketForm


def home(request: HttpRequest) -> HttpResponse:
    """Show each demo form next to the elicitation schema mcpforms derives from it."""
    demos = [
        {"name": name, "form": form_class(), "schema": form_schema(fields_for_form(form_class))}
        for name, form_class in (("signup", SignupForm), ("create_ticket", TicketForm))
    ]
    for demo in demos:
        demo["schema_json"] = json.dumps(demo["schema"], indent=2)
    return render(request, "demo/home.html", {"demos": demos})
