"""``manage.py mcpforms_tools``: every tool of the default server, where it comes from, how it is filled,
its schemas; one tool in full; JSON; admin-defined forms; a broken form reported, not raised."""

from __future__ import annotations

import json
from collections.abc import Iterator
from io import StringIO
from typing import Any

import pytest
from django import forms
from django.core.management import CommandError, call_command
from django.http import HttpResponseRedirect
from django.test import override_settings
from formtools.wizard.views import SessionWizardView

from mcpforms.definitions import catalog_version, definition_tools
from mcpforms.management.commands import mcpforms_tools
from mcpforms.models import FieldDefinition, FormDefinition
from mcpforms.protocol.server import Server, default_server
from mcpforms.registry import register, register_prompt, register_wizard, registry_for
from mcpforms.tools import tool_class
from mcpforms.wizards import WizardTool
from tests.forms import SignupForm

pytestmark = pytest.mark.django_db


class VaultForm(forms.Form):
    username = forms.CharField()
    password = forms.CharField(widget=forms.PasswordInput)


class Unmapped(forms.Field):
    """A field class no converter knows."""


class BrokenForm(forms.Form):
    name = forms.CharField()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["odd"] = Unmapped()  # added per instance: register() cannot see it coming


class TripForm(forms.Form):
    destination = forms.CharField()
    international = forms.BooleanField(required=False)


class PassportForm(forms.Form):
    passport_number = forms.CharField()


class FaxForm(forms.Form):
    fax = forms.CharField(required=False)


class BudgetForm(forms.Form):
    budget = forms.IntegerField(min_value=1)


def goes_abroad(tool: Any, request: Any, cleaned: Any) -> bool:
    """When the trip leaves the country."""
    return bool(cleaned["trip"]["international"])


class CmdTrip(WizardTool):
    """Request a trip."""

    name = "cmd_trip"
    form_list = [("trip", TripForm), ("passport", PassportForm), ("fax", FaxForm), ("budget", BudgetForm)]
    condition_dict = {"passport": goes_abroad, "fax": False}
    always_ask = {"budget"}


class CmdTripInWords(CmdTrip):
    """A wizard that words its conditions itself, as an admin-defined one does."""

    name = "cmd_trip_in_words"

    def describe_condition(self, step: str) -> str | None:
        return "when international is true" if step == "passport" else super().describe_condition(step)


def view_goes_abroad(wizard: SessionWizardView) -> bool:
    """When the trip is international."""
    return bool((wizard.get_cleaned_data_for_step("trip") or {}).get("international"))


class TripView(SessionWizardView):  # type: ignore[misc]  # formtools is untyped
    form_list = [("trip", TripForm), ("passport", PassportForm)]
    condition_dict = {"passport": view_goes_abroad}

    def done(self, form_list: Any, form_dict: Any = None, **kwargs: Any) -> HttpResponseRedirect:
        return HttpResponseRedirect("/trips/")


NAMES = ("cmd_vault", "cmd_confirm", "cmd_form_only", "cmd_broken", "cmd_trip", "cmd_trip_in_words")


@pytest.fixture(autouse=True)
def tools() -> Iterator[None]:
    register(VaultForm, name="cmd_vault", permission="auth.view_user")
    register(SignupForm, name="cmd_confirm", ask="always")
    register(SignupForm, name="cmd_form_only", path="form")
    yield
    for name in (*NAMES, "cmd_prompt", "cmd_trip_view", "cmd_bad_ask"):
        registry_for(default_server).unregister(name)


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("mcpforms_tools", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def listed(*args: str) -> dict[str, Any]:
    out, _ = run(*args, "--json")
    report: dict[str, Any] = json.loads(out)
    return report


def by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in report["tools"]}


def definition(**overrides: Any) -> FormDefinition:
    made = FormDefinition.objects.create(
        **{"name": "cmd_rsvp", "title": "RSVP", "message": "Coming?", **overrides}
    )
    FieldDefinition.objects.create(definition=made, order=0, name="name", type="text", required=True)
    return FormDefinition.objects.get(pk=made.pk)


def row_of(out: str, name: str) -> str:
    (line,) = [line for line in out.splitlines() if line.startswith(f"{name} ")]
    return line


@override_settings(MCPFORMS={"ALLOW_ANONYMOUS": ["signup", "cmd_vault"]})
def test_the_listing_shows_every_tool_with_its_source_ask_permission_paths_and_anonymous_access():
    rsvp = definition()
    out, err = run()
    assert err == ""
    assert "ALLOW_ANONYMOUS = ['signup', 'cmd_vault']" in out
    assert out.splitlines()[2].split() == ["NAME", "SOURCE", "ASK", "PERMISSION", "PATHS", "ANONYMOUS"]
    assert row_of(out, "signup").split() == [
        "signup", "code", "form", "tests.forms.SignupForm", "missing", "-", "ui,", "form", "yes"
    ]  # fmt: skip
    assert row_of(out, "create_colour").split()[1:4] == [
        "code",
        "class",
        "tests.testapp.mcp_tools.CreateColour",
    ]
    assert row_of(out, "create_colour").split()[-1] == "no"  # ALLOW_ANONYMOUS does not name it
    # A password goes to the URL-mode page only; a permission keeps anonymous callers out even when listed.
    assert row_of(out, "cmd_vault").split()[-4:] == ["missing", "auth.view_user", "url", "no"]
    assert row_of(out, "cmd_confirm").split()[-3:] == ["form,", "url", "no"]  # "always": no UI
    assert row_of(out, "cmd_form_only").split()[-2:] == ["form", "no"]
    assert row_of(out, "cmd_rsvp").split()[1:4] == ["admin", f"#{rsvp.pk}", f"v{rsvp.version}"]
    assert "manage.py mcpforms_tools NAME" in out


def test_one_tool_in_full_shows_its_input_schema_its_elicitation_schema_and_the_url_page():
    out, _ = run("cmd_vault")
    assert out.startswith("cmd_vault — Cmd vault\n")
    assert "source       code: form tests.test_tools_command.VaultForm, default handler" in out
    assert "permission   auth.view_user" in out
    assert "paths        URL-mode page" in out
    assert "URL page     the whole form: username, password (only there: password)" in out
    assert "fields       username (text, required), password (password, required)" in out
    input_schema = out.split("inputSchema (what the model may pass):\n")[1].split("\n\n")[0]
    assert json.loads(input_schema) == {
        "type": "object",
        "properties": {"username": {"type": "string", "title": "Username"}},
    }  # never the password
    elicitation = out.split("asking every field):\n")[1]
    assert json.loads(elicitation) == {
        "type": "object",
        "properties": {"username": {"type": "string", "title": "Username"}},
        "required": ["username"],
    }


def test_one_tool_with_the_ui_names_its_submit_tool_and_a_submit_tool_finds_its_form():
    out, _ = run("signup")
    assert "paths        MCP Apps UI (submit tool signup_submit), form elicitation" in out
    assert "URL page     not used" in out
    assert "plan (select of text, required)" in out
    assert run("signup_submit")[0] == out


STEPS = "Steps, one per round (a step whose condition is false is skipped):"


def section(out: str, heading: str) -> str:
    """What follows ``heading`` in the command's output, up to the next blank line."""
    return out.split(f"{heading}\n", 1)[1].split("\n\n", 1)[0]


def test_a_wizard_in_full_shows_each_step_with_when_it_is_asked_and_its_fields():
    register(CmdTrip)
    out, err = run("cmd_trip")
    assert err == ""
    assert "source       code: wizard class tests.test_tools_command.CmdTrip, default handler" in out
    assert section(out, STEPS).splitlines() == [
        "  1. trip — Trip — always",
        "     fields: destination (text, required), international (boolean)",
        "  2. passport — Passport — When the trip leaves the country",  # a callable: its docstring
        "     fields: passport_number (text, required)",
        "  3. fax — Fax — never",
        "     fields: fax (text)",
        "  4. budget — Budget — always, answered by the user even when the arguments fill it",
        "     fields: budget (integer, required)",
    ]
    # No round asks every step at once: each step's own requestedSchema instead of the whole form's.
    assert "asking every field" not in out
    assert json.loads(section(out, "Elicitation schema of step passport (a round asking all of it):")) == {
        "type": "object",
        "properties": {"passport_number": {"type": "string", "title": "Passport number"}},
        "required": ["passport_number"],
    }
    entry = json.loads(run("cmd_trip", "--json")[0])
    steps = [(step["name"], step["title"], step["condition"], step["always_ask"]) for step in entry["steps"]]
    assert steps == [
        ("trip", "Trip", None, False),
        ("passport", "Passport", "When the trip leaves the country", False),
        ("fax", "Fax", "never", False),
        ("budget", "Budget", None, True),
    ]
    assert [field["name"] for field in entry["steps"][0]["fields"]] == ["destination", "international"]
    # The user answers the budget step themselves: no App, whose submit tool the model could call too.
    assert (entry["paths"], entry["submit_tool"]) == (["form", "url"], None)
    assert "paths        form elicitation, URL-mode page\n" in out
    # The page shows one step: the budget, for a client that shows no form elicitation.
    assert "URL page     step budget: budget\n" in out
    assert entry["url_page_fields"] == ["budget"]
    assert [step["on_page"] for step in entry["steps"]] == [False, False, False, True]
    assert "steps" not in by_name(listed())["signup"]  # a plain form's entry is as it was


def test_a_wizard_that_words_its_conditions_is_shown_in_its_words():
    register(CmdTripInWords)
    out, _ = run("cmd_trip_in_words")
    assert "  2. passport — Passport — when international is true\n" in out
    assert "  3. fax — Fax — never\n" in out


def test_a_registered_formtools_view_shows_the_view_and_its_conditions_on_the_view():
    register_wizard(TripView, name="cmd_trip_view")
    out, _ = run("cmd_trip_view")
    assert "source       code: formtools view tests.test_tools_command.TripView, the view's done()" in out
    assert section(out, STEPS).splitlines() == [
        "  1. trip — Trip — always",
        "     fields: destination (text, required), international (boolean)",
        "  2. passport — Passport — When the trip is international",
        "     fields: passport_number (text, required)",
    ]
    source = json.loads(run("cmd_trip_view", "--json")[0])["source"]
    assert source["view"] == "tests.test_tools_command.TripView"


def test_json_lists_every_tool_with_stable_keys():
    report = listed()
    assert set(report) == {
        "endpoints", "allow_anonymous", "tools", "other_tools", "prompts", "not_served", "problems",
    }  # fmt: skip
    assert report["endpoints"] == ["/mcp"]
    tools = by_name(report)
    assert {"signup", "create_colour", "testapp_signup", *NAMES[:3]} <= set(tools)
    signup = tools["signup"]
    assert set(signup) == {
        "name", "title", "description", "source", "ask", "path", "update", "permission", "anonymous",
        "paths", "runs", "submit_tool", "fields", "url_page_fields", "page_only_fields", "input_schema",
        "elicitation_schema", "error",
    }  # fmt: skip
    assert signup["source"] == {
        "kind": "code",
        "class": None,
        "form": "tests.forms.SignupForm",
        "handler": "own",
    }
    assert signup["paths"] == ["ui", "form"] and signup["submit_tool"] == "signup_submit"
    assert signup["anonymous"] is True  # the test settings let anonymous callers use every tool
    assert tools["cmd_vault"]["anonymous"] is False  # ...that needs no permission
    assert signup["elicitation_schema"]["required"] == ["email", "plan"]
    assert tools["cmd_vault"]["page_only_fields"] == ["password"]
    assert tools["cmd_vault"]["url_page_fields"] == ["username", "password"]
    assert tools["cmd_confirm"]["paths"] == ["form", "url"] and tools["cmd_confirm"]["submit_tool"] is None


@override_settings(MCPFORMS={"ALLOW_ANONYMOUS": False})
def test_without_anonymous_callers_no_tool_is_anonymous():
    report = listed()
    assert report["allow_anonymous"] is False
    assert not any(entry["anonymous"] for entry in report["tools"])


def test_json_of_one_tool_is_its_entry():
    out, _ = run("cmd_form_only", "--json")
    entry = json.loads(out)
    assert entry["kind"] == "tool" and entry["name"] == "cmd_form_only"
    assert entry["paths"] == ["form"] and entry["path"] == "form"
    assert entry["input_schema"]["properties"]["age"] == {
        "type": "integer",
        "minimum": 18,
        "maximum": 120,
        "title": "Age",
    }


def test_an_admin_defined_form_names_its_definition_and_what_is_not_served_says_why():
    served = definition()
    definition(name="cmd_off", enabled=False)
    definition(name="signup")  # a code-registered tool has that name
    report = listed()
    assert by_name(report)["cmd_rsvp"]["source"] == {
        "kind": "admin",
        "definition": served.pk,
        "version": served.version,
        "enabled": True,
    }
    assert by_name(report)["cmd_rsvp"]["paths"] == ["ui", "form"]
    reasons = {entry["name"]: entry["reason"] for entry in report["not_served"]}
    assert reasons == {
        "cmd_off": "disabled in the admin",
        "signup": "a code-registered tool has this name and wins",
    }
    out, _ = run()
    assert "Admin-defined forms not served:" in out and "cmd_off" in out
    assert run("cmd_off")[0].startswith("cmd_off — not served (admin #")


def test_prompts_are_listed_apart():
    register_prompt(SignupForm, name="cmd_prompt", template="Welcome {email}")
    out, _ = run()
    assert "Prompts (not tools):\n  cmd_prompt  form tests.forms.SignupForm" in out
    assert listed()["prompts"] == [
        {"name": "cmd_prompt", "title": "Cmd prompt", "form": "tests.forms.SignupForm"}
    ]
    assert json.loads(run("cmd_prompt", "--json")[0])["kind"] == "prompt"


def test_an_unknown_name_is_an_error_naming_close_matches():
    with pytest.raises(CommandError, match=r"No tool or prompt named 'sign_up'\. Did you mean signup"):
        run("sign_up")
    with pytest.raises(CommandError, match=r"Known: .*cmd_vault"):
        run("zzzzzz")


def test_a_form_that_fails_to_convert_is_reported_not_raised():
    register(BrokenForm, name="cmd_broken")
    out, err = run()
    assert "Traceback" not in out + err
    assert row_of(out, "cmd_broken").split()[-2:] == ["error", "yes"]
    assert (
        "cmd_broken: not served (left out of tools/list; a call of it answers -32603 until it is fixed): "
        "FormConversionError"
    ) in out
    assert "tools/list" not in err  # the list itself works, as every client sees it
    entry = json.loads(run("cmd_broken", "--json")[0])
    assert entry["error"].startswith("FormConversionError: ") and "odd" in entry["error"]
    assert entry["input_schema"] is None and entry["paths"] == []
    detail, _ = run("cmd_broken")
    assert "error        FormConversionError" in detail


def test_a_tool_whose_options_fail_their_checks_is_reported_as_not_served():
    register(SignupForm, name="cmd_bad_ask", ask="sometimes")  # type: ignore[arg-type]
    out, err = run()
    assert "Traceback" not in out + err
    assert row_of(out, "cmd_bad_ask").split()[-2:] == ["error", "no"]  # served to nobody
    assert (
        "cmd_bad_ask: not served (left out of tools/list; a call of it answers -32603 until it is fixed): "
        in out
    )
    assert "mcpforms.E401: ask='sometimes'" in out
    entry = json.loads(run("cmd_bad_ask", "--json")[0])
    assert entry["error"].startswith("mcpforms.E401: ") and "'sometimes'" in entry["error"]
    assert entry["input_schema"] is None and entry["paths"] == []


def test_what_the_registry_serves_from_its_sources_is_what_is_listed(monkeypatch):
    server = Server()
    registry = registry_for(server)
    registry.add_source(lambda: [tool_class(SignupForm, name="cmd_sourced")()], version=lambda: 1)
    monkeypatch.setattr(mcpforms_tools, "default_server", server)
    definition(name="cmd_sourced")
    definition(name="cmd_rsvp")
    # Without the admin-defined forms among its sources, the server serves none of them.
    report = listed()
    assert list(by_name(report)) == ["cmd_sourced"] and report["not_served"] == []
    assert by_name(report)["cmd_sourced"]["source"] == {
        "kind": "source",
        "class": "mcpforms.tools.SignupFormTool",
    }
    # With them after the first source, that source wins a name they share, as a call would find.
    registry.add_source(definition_tools, version=catalog_version)
    report = listed()
    assert by_name(report)["cmd_sourced"]["source"]["kind"] == "source"
    assert by_name(report)["cmd_rsvp"]["source"]["kind"] == "admin"
    assert [(entry["name"], entry["source"]["kind"], entry["reason"]) for entry in report["not_served"]] == [
        ("cmd_sourced", "admin", "a tool of an earlier source has this name and wins")
    ]
    assert type(registry.form_tool("cmd_sourced")).__name__ == "SignupFormTool"  # the call finds it too
    # A source added again (an app registry populated anew runs ready() again) serves nothing more.
    registry.add_source(definition_tools, version=catalog_version)
    assert listed() == report


@override_settings(ROOT_URLCONF="tests.urls_without_endpoint")
def test_an_endpoint_in_no_urlconf_is_said_first():
    out, _ = run()
    assert out.startswith("Not served: no MCP endpoint is in the URLconf, so clients get 404 Not Found.")
    assert listed()["endpoints"] == []


def test_where_the_endpoint_is_served_is_said_first():
    out, _ = run()
    assert out.startswith("Served at /mcp\n")
