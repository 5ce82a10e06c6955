"""A wizard step that is a formset, on the wire: one argument (a list of rows) in the inputSchema, taken
from the model's arguments on the elicitation path (else a clear tool error), shown with its rows in an
MCP Apps host, validated by Django, and handed to the handler as the bound formset."""

from __future__ import annotations

from typing import Any

import pytest
from django import forms
from django.core.exceptions import ValidationError

from mcpforms.protocol.era2025.sessions import MemorySessions
from mcpforms.protocol.server import Server
from mcpforms.protocol.state import SALT
from mcpforms.protocol.tokens import unsign
from mcpforms.registry import register
from mcpforms.tools import RegistrationError
from mcpforms.ui import STEP_BACK, STEP_STATE
from mcpforms.wizards import WizardTool
from tests.core_client import APPS, ELICITATION, CoreClient, accept, asked, text
from tests.protocol.test_era2025 import ELICITATION as ELICITATION_2025
from tests.protocol.test_era2025 import Era2025Client
from tests.testapp.models import Colour

pytestmark = pytest.mark.django_db  # a completed wizard records its flow


class TeamForm(forms.Form):
    team = forms.CharField(max_length=40)


class MemberForm(forms.Form):
    name = forms.CharField(max_length=30)
    age = forms.IntegerField(min_value=0, required=False)


class BaseMembers(forms.BaseFormSet):
    def clean(self) -> None:
        names = [form.cleaned_data.get("name") for form in self.forms if form.cleaned_data]
        if len(names) != len(set(names)):
            raise ValidationError("Each member is named once.")


Members = forms.formset_factory(
    MemberForm, formset=BaseMembers, extra=1, min_num=1, validate_min=True, max_num=3, validate_max=True
)


class RemarksForm(forms.Form):
    remarks = forms.CharField()


class TeamWizard(WizardTool):
    name = "team"
    form_list = [("about", TeamForm), ("members", Members), ("closing", RemarksForm)]
    handled: list[dict[str, Any]] = []

    def handle(self, request, form_list, form_dict):  # type: ignore[override]
        members = form_dict["members"]
        self.handled.append({"steps": list(form_dict), "formset": members})
        names = ", ".join(row["name"] for row in members.cleaned_data if row)
        return f"Team {form_dict['about'].cleaned_data['team']}: {names}."


@pytest.fixture
def server() -> Server:
    TeamWizard.handled = []
    server = Server()
    register(TeamWizard, server=server)
    return server


@pytest.fixture
def host(server: Server) -> CoreClient:
    return CoreClient(server, capabilities=APPS)


def answers_of(token: str) -> dict[str, Any]:
    """What a requestState carries (signed, not encrypted: anyone may read it)."""
    payload: dict[str, Any] = unsign(token, salt=SALT, max_age=3600)
    return dict(payload["answers"])


def submit(host: CoreClient, shown: dict[str, Any], **values: Any) -> dict[str, Any]:
    return host.call("team_submit", {**values, STEP_STATE: shown["structuredContent"][STEP_STATE]})


# Registration ----------------------------------------------------------------------------------------


def test_a_formset_step_registers_and_is_one_list_argument_of_the_input_schema(server):
    (tool,) = CoreClient(server).result("tools/list")["tools"]
    properties = tool["inputSchema"]["properties"]
    assert list(properties) == ["team", "remarks", "members"]
    members = properties["members"]
    assert members["type"] == "array"
    assert (members["minItems"], members["maxItems"]) == (1, 3)
    assert members["items"]["type"] == "object"
    assert members["items"]["properties"]["name"] == {"type": "string", "title": "Name", "maxLength": 30}
    assert members["items"]["properties"]["age"]["type"] == "integer"


class UploadRow(forms.Form):
    scan = forms.FileField()


def test_a_formset_whose_rows_have_a_file_field_is_refused():
    wizard = type("Uploads", (WizardTool,), {"form_list": [("scans", forms.formset_factory(UploadRow))]})
    with pytest.raises(RegistrationError, match=r"step 'scans' is a formset whose rows have scan"):
        register(wizard, server=Server())


def test_a_formset_step_named_as_a_field_is_refused():
    wizard = type("Clash", (WizardTool,), {"form_list": [("about", TeamForm), ("team", Members)]})
    with pytest.raises(
        RegistrationError, match=r"formset step 'team' has the name of a field of step 'about'"
    ):
        register(wizard, server=Server())


def test_a_wizard_with_a_formset_step_warns_that_only_an_apps_host_shows_it():
    (warning,) = [message for message in TeamWizard().check() if message.id == "mcpforms.W416"]
    assert "'members'" in warning.msg and "MCP Apps" in warning.msg
    plain = type("Plain", (WizardTool,), {"form_list": [TeamForm, RemarksForm]})
    assert [message.id for message in plain().check() if message.id == "mcpforms.W416"] == []


# The elicitation path --------------------------------------------------------------------------------


def test_on_the_elicitation_path_a_formset_step_nobody_passed_is_a_clear_tool_error(server):
    client = CoreClient(server, capabilities=ELICITATION)
    first = client.call("team")
    assert asked(first, "team")["message"] == "Step 1 of at most 3: About"
    refused = client.answer(first, "team", team=accept(team="Owls"))
    assert refused["isError"] is True
    assert text(refused) == (
        "Step 'members' (Members) of the Team form is a list of rows, which a form elicitation cannot ask. "
        "Pass `members` as a list of objects with name (Name, required), age (Age), or use a client that "
        "renders MCP Apps. Nothing was submitted."
    )
    assert TeamWizard.handled == []


def test_a_2025_session_gets_the_same_error_for_the_formset_step():
    TeamWizard.handled = []
    server = Server(name="legacy", sessions=MemorySessions())
    register(TeamWizard, server=server)
    client = Era2025Client(server, capabilities=ELICITATION_2025)
    reply = client.request("tools/call", {"name": "team", "arguments": {"team": "Owls"}})
    assert isinstance(reply.body, dict), reply
    result = reply.body["result"]
    assert result["isError"] is True
    assert "Pass `members` as a list of objects with name (Name, required)" in text(result)
    assert TeamWizard.handled == []


def test_a_valid_list_from_the_arguments_completes_the_step_and_the_handler_gets_the_formset(server):
    client = CoreClient(server, capabilities=ELICITATION)
    rows = [{"name": "Ann", "age": 31}, {"name": "Bo"}]
    first = client.call("team", {"team": "Owls", "members": rows})
    # The formset step is done: the round asks the step after it, and carries the rows in its state.
    assert asked(first, "team")["message"] == "Step 3 of at most 3: Closing"
    assert answers_of(first["requestState"])["members"] == rows
    done = client.answer(first, "team", {"team": "Owls", "members": rows}, team=accept(remarks="Go"))
    assert text(done) == "Team Owls: Ann, Bo."
    (handled,) = TeamWizard.handled
    assert handled["steps"] == ["about", "members", "closing"]
    formset = handled["formset"]
    assert isinstance(formset, BaseMembers) and formset.is_bound and formset.is_valid()
    assert formset.prefix == "members"  # as formtools binds a step
    assert formset.cleaned_data == [{"name": "Ann", "age": 31}, {"name": "Bo", "age": None}]


def test_an_invalid_list_from_the_arguments_names_each_rows_problem(server):
    client = CoreClient(server, capabilities=ELICITATION)
    refused = client.call("team", {"team": "Owls", "members": [{"age": -1}, {"name": "Bo"}, {"name": "Bo"}]})
    assert refused["isError"] is True
    assert text(refused).endswith(
        "The `members` passed is not valid:\n"
        "- row 1, Name (name): This field is required.\n"
        "- row 1, Age (age): Ensure this value is greater than or equal to 0.\n"
        "- Each member is named once."
    )
    too_many = client.call("team", {"team": "Owls", "members": [{"name": n} for n in "abcd"]})
    assert "Please submit at most 3 forms." in text(too_many)
    not_a_list = client.call("team", {"team": "Owls", "members": {"name": "Ann"}})
    assert text(not_a_list).endswith(
        "The `members` passed is not valid:\n- Enter a list of objects, one per row."
    )
    assert TeamWizard.handled == []


# The App path ----------------------------------------------------------------------------------------


def test_the_app_page_has_the_formset_step_with_its_rows_an_empty_row_and_the_buttons(host):
    (content,) = host.result("resources/read", {"uri": "ui://mcpforms/team"})["contents"]
    html = content["text"]
    assert 'data-step="members"' in html
    # min_num 1 plus extra 1: two rows to start with, and the row "Add a row" copies.
    assert 'name="members-0-name"' in html and 'name="members-1-name"' in html
    assert 'name="members-2-name"' not in html
    assert 'name="members-__prefix__-name"' in html
    assert "Add a row" in html and html.count('class="remove-row"') == 3
    assert '"formset": {"prefix": "members", "min": 1, "max": 3' in html


def test_the_app_shows_the_formset_step_and_judges_its_rows(host):
    first = host.call("team")
    members = submit(host, first, team="Owls")
    content = members["structuredContent"]
    assert content["step"] == {
        "name": "members",
        "title": "Members",
        "k": 2,
        "at_most": 3,
        "can_go_back": True,
    }
    assert [field["name"] for field in content["fields"]] == ["name", "age"]
    assert content["values"] == {"members": []}
    # min_num with validate_min: no row is not enough.
    empty = submit(host, members, members=[])
    assert empty["isError"] is True
    assert empty["structuredContent"] == {"errors": {"members": ["Please submit at least 1 form."]}}
    wrong = submit(host, members, members=[{"name": "Ann", "age": -3}])
    assert wrong["structuredContent"]["errors"] == {
        "members-0-age": ["Ensure this value is greater than or equal to 0."]
    }
    assert text(wrong).startswith("Step 2 of at most 3: Members\nPlease correct:\n- row 1, Age (age):")
    rows = [{"name": "Ann", "age": 30}, {"name": "Bo"}]
    closing = submit(host, members, members=rows)
    assert closing["structuredContent"]["step"]["name"] == "closing"
    assert answers_of(closing["structuredContent"][STEP_STATE])["members"] == rows
    # Back shows the rows again, as they were sent.
    again = host.call("team_submit", {STEP_STATE: closing["structuredContent"][STEP_STATE], STEP_BACK: True})
    assert again["structuredContent"]["step"]["name"] == "members"
    assert again["structuredContent"]["values"] == {"members": rows}
    done = submit(host, closing, remarks="Go")
    assert not done.get("isError") and text(done) == "Team Owls: Ann, Bo."
    (handled,) = TeamWizard.handled
    assert handled["formset"].cleaned_data == [{"name": "Ann", "age": 30}, {"name": "Bo", "age": None}]


def test_the_models_rows_satisfy_the_formset_step_in_the_app_too(host):
    rows = [{"name": "Ann"}]
    about = host.call("team", {"members": rows})
    assert about["structuredContent"]["step"]["name"] == "about"
    # The model's rows wait in the App's state for the step they fill, which is then not shown.
    shown = submit(host, about, team="Owls")
    assert shown["structuredContent"]["step"]["name"] == "closing"
    assert text(submit(host, shown, remarks="Go")) == "Team Owls: Ann."


# A model formset ----------------------------------------------------------------------------------------


ColourRows = forms.modelformset_factory(Colour, fields=["name", "code"], extra=1)


class PaletteWizard(WizardTool):
    name = "palette"
    form_list = [("colours", ColourRows)]

    def handle(self, request, form_list, form_dict):  # type: ignore[override]
        saved = form_dict["colours"].save()
        return ", ".join(colour.name for colour in saved)


def test_a_model_formset_step_adds_its_rows_and_never_shows_the_table():
    Colour.objects.create(name="Existing", code="#000000")
    server = Server()
    register(PaletteWizard, server=server)
    host = CoreClient(server, capabilities=APPS)
    (content,) = host.result("resources/read", {"uri": "ui://mcpforms/palette"})["contents"]
    assert "Existing" not in content["text"]  # INITIAL_FORMS 0 and no queryset: only the extra row
    assert 'name="colours-0-name"' in content["text"] and 'name="colours-1-name"' not in content["text"]
    rows = [{"name": "Teal", "code": "#008080"}]
    done = CoreClient(server, capabilities=ELICITATION).call("palette", {"colours": rows})
    assert text(done) == "Teal"
    assert sorted(Colour.objects.values_list("name", flat=True)) == ["Existing", "Teal"]
