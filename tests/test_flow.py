"""The write-once flow of a registered form tool, round by round, through the protocol core."""

from __future__ import annotations

from typing import Any

import mcp_types
import pytest
from django import forms
from django.contrib.auth.models import AnonymousUser, Permission, User
from django.core.exceptions import ValidationError
from django.core.validators import MinLengthValidator, RegexValidator
from django.test import Client

import mcpforms
from mcpforms.flow import Ask
from mcpforms.protocol.server import Server
from mcpforms.registry import register, registry_for
from mcpforms.signals import tool_declined
from mcpforms.tools import FormTool
from tests.core_client import (
    APPS,
    CoreClient,
    accept,
    asked,
    assert_unknown_tool,
    page_path,
    text,
    url_request,
)
from tests.forms import SignupForm
from tests.testapp.models import Colour, Gadget

pytestmark = pytest.mark.django_db


class GadgetForm(forms.ModelForm):
    """Add a gadget to the catalogue."""

    class Meta:
        model = Gadget
        fields = ["name", "slug", "stock", "colour"]


@pytest.fixture
def runs() -> list[dict[str, Any]]:
    return []


@pytest.fixture
def server(runs) -> Server:
    server = Server(name="test")

    @mcpforms.tool(SignupForm, server=server, message="Create your account")
    def signup(request, form):
        runs.append(dict(form.cleaned_data))
        return {"email": form.cleaned_data["email"], "plan": form.cleaned_data["plan"]}

    @mcpforms.tool(SignupForm, name="confirm_signup", ask="always", server=server)
    def confirm(request, form):
        runs.append(dict(form.cleaned_data))
        return "Signed up."

    @mcpforms.tool(SignupForm, name="plain_signup", ask="never", server=server)
    def plain(request, form):
        runs.append(dict(form.cleaned_data))
        return "Signed up."

    register(GadgetForm, name="add_gadget", server=server)
    register(GadgetForm, name="edit_gadget", update=True, server=server)
    return server


@pytest.fixture(params=["core", "http"])
def over_http(request) -> bool:
    """Every flow test runs twice: against the protocol core, and through the Streamable HTTP edge."""
    return bool(request.param == "http")


@pytest.fixture
def client(server, over_http) -> CoreClient:
    return CoreClient(server, over_http=over_http)


def assert_wire_valid(result: dict[str, Any]) -> None:
    if result.get("resultType") == "input_required":
        mcp_types.InputRequiredResult.model_validate(result)
    else:
        mcp_types.CallToolResult.model_validate(result)


# ---- listing ---------------------------------------------------------------------------------------------


def test_tools_are_listed_with_optional_arguments_and_a_description_that_says_the_user_is_asked(
    server, over_http
):
    editor = User.objects.create(username="editor")
    editor.user_permissions.add(Permission.objects.get(codename="change_gadget"))
    client = CoreClient(server, user=User.objects.get(pk=editor.pk), over_http=over_http)
    tools = {tool["name"]: tool for tool in client.result("tools/list")["tools"]}
    signup = tools["signup"]
    assert signup["description"] == "Create an account. Missing details are asked from the user."
    assert "required" not in signup["inputSchema"]
    assert signup["inputSchema"]["properties"]["plan"]["oneOf"][0] == {"const": "pro", "title": "Pro"}
    assert signup["annotations"] == {"title": "Signup"}  # a custom handler: no guesses about what it does
    add = tools["add_gadget"]
    assert add["annotations"] == {
        "title": "Add gadget",
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": False,
        "openWorldHint": False,
    }
    edit = tools["edit_gadget"]
    assert edit["inputSchema"]["required"] == ["pk"]
    assert edit["annotations"]["destructiveHint"] is True
    for tool in tools.values():
        mcp_types.Tool.model_validate(tool)


# ---- the signup flow -------------------------------------------------------------------------------------


def test_everything_given_up_front_runs_at_once(client, runs):
    result = client.call("signup", {"email": "ada@example.com", "plan": "pro", "age": 36})
    assert_wire_valid(result)
    assert result["structuredContent"] == {"email": "ada@example.com", "plan": "pro"}
    assert not result.get("isError")
    assert runs == [{"email": "ada@example.com", "plan": "pro", "age": 36, "newsletter": False}]


def test_missing_fields_are_asked_with_the_optional_ones_nobody_filled(client, runs):
    first = client.call("signup", {"plan": "team"})
    assert_wire_valid(first)
    params = asked(first, "signup")
    assert params["message"].startswith("Create your account")
    schema = params["requestedSchema"]
    assert list(schema["properties"]) == ["email", "age", "newsletter"]  # plan is known and valid
    assert schema["required"] == ["email"]
    assert params["message"] == "Create your account"  # nothing to correct yet: email is simply asked
    assert runs == []

    done = client.answer(first, "signup", {"plan": "team"}, signup=accept(email="ada@example.com", age=40))
    assert done["structuredContent"] == {"email": "ada@example.com", "plan": "team"}
    assert runs == [{"email": "ada@example.com", "plan": "team", "age": 40, "newsletter": False}]


def test_an_invalid_answer_is_re_asked_alone_with_djangos_message_and_the_previous_answer(client, runs):
    first = client.call("signup", {})
    second = client.answer(first, "signup", signup=accept(email="ada@example.invalid", plan="pro", age=30))
    params = asked(second, "signup")
    assert list(params["requestedSchema"]["properties"]) == ["email"]
    assert params["requestedSchema"]["properties"]["email"]["default"] == "ada@example.invalid"
    assert "Email (email): That domain does not receive mail." in params["message"]
    assert runs == []

    third = client.answer(second, "signup", signup=accept(email="ada@example.com"))
    assert not third.get("isError"), third
    # Earlier answers came back from the signed state, not from the client's last message.
    assert runs == [{"email": "ada@example.com", "plan": "pro", "age": 30, "newsletter": False}]


def test_an_out_of_bounds_argument_is_asked_again_with_the_form_message(client):
    first = client.call("signup", {"email": "ada@example.com", "plan": "pro", "age": 12})
    params = asked(first, "signup")
    assert "age" in params["requestedSchema"]["properties"]
    assert "Age (age): Ensure this value is greater than or equal to 18." in params["message"]


def test_each_correction_is_quoted_on_its_own_line(client):
    first = client.call("signup", {"email": "nope", "plan": "pro", "age": 12})
    assert asked(first, "signup")["message"] == (
        "Create your account\nPlease correct:\n"
        "- Email (email): Enter a valid email address.\n"
        "- Age (age): Ensure this value is greater than or equal to 18."
    )


@pytest.mark.parametrize(("action", "word"), [("decline", "declined"), ("cancel", "cancelled")])
def test_decline_and_cancel_end_the_call_without_running(client, runs, action, word):
    first = client.call("signup", {})
    result = client.answer(first, "signup", signup={"action": action})
    assert result["isError"] is True
    assert word in text(result)
    assert "nothing was submitted" in text(result)
    assert runs == []


@pytest.mark.parametrize(
    ("action", "said"),
    [
        ("decline", "The user declined to fill in the Signup form; nothing was submitted."),
        ("cancel", "The user cancelled the Signup form; nothing was submitted."),
    ],
)
def test_decline_and_cancel_name_the_form_and_tell_tool_declined_receivers_which_it_was(
    client, django_capture_on_commit_callbacks, action, said
):
    heard: list[str] = []

    def receive(sender: Any, *, action: str, **kwargs: Any) -> None:
        heard.append(action)

    first = client.call("signup", {})
    tool_declined.connect(receive)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            result = client.answer(first, "signup", signup={"action": action})
    finally:
        tool_declined.disconnect(receive)
    assert text(result) == said
    assert heard == [action]


def test_a_tampered_state_is_a_json_rpc_error(client, runs):
    first = client.call("signup", {})
    state = first["requestState"]
    tampered = state[:-2] + ("AA" if state[-2:] != "AA" else "BB")
    body = client.send(
        "tools/call",
        {
            "name": "signup",
            "arguments": {},
            "requestState": tampered,
            "inputResponses": {"signup": accept(email="a@b.co", plan="pro")},
        },
    )
    assert body["error"]["code"] == -32602
    assert body["error"]["message"] == "Invalid or expired requestState"
    assert runs == []


@pytest.mark.parametrize(("name", "arguments"), [("confirm_signup", {}), ("signup", {"plan": "pro"})])
def test_a_state_minted_for_another_tool_or_other_arguments_is_refused(client, runs, name, arguments):
    first = client.call("signup", {})
    body = client.send(
        "tools/call",
        {
            "name": name,
            "arguments": arguments,
            "requestState": first["requestState"],
            "inputResponses": {name: accept(email="a@b.co", plan="pro")},
        },
    )
    assert body["error"]["code"] == -32602
    assert runs == []


def test_a_state_minted_for_another_user_is_refused(server, runs, over_http):
    ada = User.objects.create(username="ada")
    bob = User.objects.create(username="bob")
    first = CoreClient(server, user=ada, over_http=over_http).call("signup", {})
    body = CoreClient(server, user=bob, over_http=over_http).send(
        "tools/call",
        {
            "name": "signup",
            "arguments": {},
            "requestState": first["requestState"],
            "inputResponses": {"signup": accept(email="a@b.co", plan="pro")},
        },
    )
    assert body["error"]["code"] == -32602


def test_the_final_round_replayed_runs_the_handler_once_and_gets_the_same_outcome(client, runs):
    first = client.call("signup", {})
    answer = {"signup": accept(email="ada@example.com", plan="pro")}
    done = client.answer(first, "signup", **answer)
    assert not done.get("isError")
    # The client lost the response and retries: it learns the outcome, nothing runs again.
    again = client.answer(first, "signup", **answer)
    assert again == done
    assert len(runs) == 1


def test_an_earlier_round_answered_again_after_the_flow_completed_runs_nothing(client, runs):
    first = client.call("signup", {})
    second = client.answer(first, "signup", signup=accept(email="not-an-email", plan="pro"))
    assert second["resultType"] == "input_required"  # re-asked for the email
    done = client.answer(second, "signup", signup=accept(email="ada@example.com"))
    assert not done.get("isError")
    # The first round's state belongs to the same flow, which has completed: no second submission.
    replay = client.answer(first, "signup", signup=accept(email="eve@example.com", plan="team"))
    assert replay == done
    assert len(runs) == 1


def test_two_people_giving_the_same_answers_are_two_submissions(client, runs):
    # On an anonymous endpoint every caller is the same principal: identical answers in the same second
    # must still be two flows, while a replay of one flow's last round stays one.
    answer = {"signup": accept(email="ada@example.com", plan="pro")}
    for _ in range(2):
        first = client.call("signup", {})
        assert not client.answer(first, "signup", **answer).get("isError")
    assert len(runs) == 2


@pytest.mark.parametrize(
    "responses", [{"signup": {"action": "accept", "content": {"email": 5}}}, {"other": accept(x=1)}, {}]
)
def test_garbage_answers_never_complete(client, runs, responses):
    result = client.call("signup", {}, inputResponses=responses)
    assert result["resultType"] == "input_required"
    assert runs == []


def test_answers_for_fields_that_were_not_asked_are_ignored(client, runs):
    first = client.call(
        "signup",
        {"email": "ada@example.com", "plan": "pro"},
    )
    assert first.get("resultType") != "input_required"  # ran at once
    runs.clear()
    first = client.call("signup", {"plan": "pro"})
    done = client.answer(
        first, "signup", {"plan": "pro"}, signup=accept(email="ada@example.com", plan="team")
    )
    assert done["structuredContent"]["plan"] == "pro"  # plan was not asked: the model's value stands


# ---- ask modes -------------------------------------------------------------------------------------------


def test_ask_always_shows_everything_prefilled_before_running(client, runs):
    arguments = {"email": "ada@example.com", "plan": "team"}
    first = client.call("confirm_signup", arguments)
    schema = asked(first, "confirm_signup")["requestedSchema"]
    assert list(schema["properties"]) == ["email", "plan", "age", "newsletter"]
    assert schema["properties"]["email"]["default"] == "ada@example.com"
    assert schema["properties"]["plan"]["default"] == "team"
    assert runs == []
    done = client.answer(
        first, "confirm_signup", arguments, confirm_signup=accept(email="ada@example.com", plan="pro")
    )
    assert text(done) == "Signed up."
    assert runs == [{"email": "ada@example.com", "plan": "pro", "age": None, "newsletter": False}]


def test_a_value_the_user_cleared_stays_cleared_in_later_rounds(client, runs):
    # The model guessed an age and the user removed it while fixing the form: in the round after, the
    # model's guess must not come back from the arguments, which every round of the call repeats.
    arguments = {"email": "ada@example.com", "plan": "pro", "age": 40}
    first = client.call("confirm_signup", arguments)
    second = client.answer(
        first, "confirm_signup", arguments, confirm_signup=accept(email="nope", plan="pro")
    )
    assert list(asked(second, "confirm_signup")["requestedSchema"]["properties"]) == ["email"]
    done = client.answer(second, "confirm_signup", arguments, confirm_signup=accept(email="ada@example.com"))
    assert text(done) == "Signed up."
    assert runs == [{"email": "ada@example.com", "plan": "pro", "age": None, "newsletter": False}]


def test_ask_never_behaves_like_a_plain_tool(client, runs):
    result = client.call("plain_signup", {"plan": "pro"})
    assert result["isError"] is True
    assert "Email (email): This field is required." in text(result)
    assert text(client.call("plain_signup", {"plan": "pro", "email": "a@b.co"})) == "Signed up."


# ---- clients without elicitation -------------------------------------------------------------------------


def test_without_elicitation_valid_arguments_still_run(server, runs, over_http):
    client = CoreClient(server, capabilities={}, over_http=over_http)
    assert not client.call("signup", {"email": "ada@example.com", "plan": "pro"}).get("isError")
    assert len(runs) == 1


def test_ask_always_never_runs_without_the_users_confirmation(server, runs, over_http):
    # "always" promises the user confirms first: a client that cannot ask them gets a refusal, however
    # valid the model's arguments are.
    client = CoreClient(server, capabilities={}, over_http=over_http)
    refused = client.call("confirm_signup", {"email": "ada@example.com", "plan": "pro"})
    assert refused["isError"] is True
    assert "needs the user's confirmation before it runs" in text(refused)
    assert text(refused) == (
        "The Confirm signup form needs the user's confirmation before it runs, and this client cannot ask "
        "the user (no form elicitation, no MCP Apps UI, no URL mode). Nothing was submitted."
    )
    assert runs == []


def test_without_elicitation_missing_fields_are_listed_for_the_model(server, runs, over_http):
    result = CoreClient(server, capabilities={"sampling": {}}, over_http=over_http).call(
        "signup", {"email": "nope", "age": 5}
    )
    assert result["isError"] is True
    message = text(result)
    assert "Email (email): Enter a valid email address." in message
    assert "Plan (plan): This field is required." in message
    assert "Age (age): Ensure this value is greater than or equal to 18." in message
    # One line per field, in the form's order, and what the model can do about it.
    assert message == (
        "Could not submit the Signup form; these fields are missing or invalid:\n"
        "- Email (email): Enter a valid email address.\n"
        "- Plan (plan): This field is required.\n"
        "- Age (age): Ensure this value is greater than or equal to 18.\n"
        "Pass valid values as arguments, or ask the user for them."
    )
    assert runs == []


# ---- ModelForms -----------------------------------------------------------------------------------------


def test_model_form_create_saves_once_and_returns_the_object(over_http):
    red = Colour.objects.create(name="Red", code="#f00")
    client = CoreClient(_gadget_server(), over_http=over_http)
    first = client.call("add_gadget", {"name": "Lamp"})
    schema = asked(first, "add_gadget")["requestedSchema"]
    assert schema["properties"]["colour"]["oneOf"] == [{"const": str(red.pk), "title": "Red"}]
    assert Gadget.objects.count() == 0  # nothing written before the last answer
    done = client.answer(
        first, "add_gadget", {"name": "Lamp"}, add_gadget=accept(slug="lamp", stock=2, colour=str(red.pk))
    )
    lamp = Gadget.objects.get()
    # The pk and the form's own fields, as the database stored them: never the rest of the row.
    assert done["structuredContent"] == {
        "pk": lamp.pk,
        "name": "Lamp",
        "slug": "lamp",
        "stock": 2,
        "colour": red.pk,
    }


def test_model_form_uniqueness_is_re_asked(over_http):
    Gadget.objects.create(name="Lamp", slug="lamp")
    client = CoreClient(_gadget_server(), over_http=over_http)
    first = client.call("add_gadget", {"name": "Lamp", "slug": "lamp2", "stock": 1})
    params = asked(first, "add_gadget")
    assert "Name (name): Gadget with this Name already exists." in params["message"]
    assert Gadget.objects.count() == 1


def test_model_form_update_needs_permission_and_asks_with_current_values(over_http):
    lamp = Gadget.objects.create(name="Lamp", slug="lamp", stock=3)
    server = _gadget_server()
    # Without the change permission the tool is not there at all.
    assert_unknown_tool(
        CoreClient(server, user=AnonymousUser(), over_http=over_http), "edit_gadget", {"pk": lamp.pk}
    )
    editor = User.objects.create(username="editor")
    editor.user_permissions.add(Permission.objects.get(codename="change_gadget"))
    client = CoreClient(server, user=User.objects.get(pk=editor.pk), over_http=over_http)

    assert "No gadget with pk 999" in text(client.call("edit_gadget", {"pk": 999}))
    assert "Pass the pk" in text(client.call("edit_gadget", {}))

    first = client.call("edit_gadget", {"pk": lamp.pk, "stock": -1})
    schema = asked(first, "edit_gadget")["requestedSchema"]
    assert list(schema["properties"]) == ["stock", "colour"]  # the invalid change, and what is still empty
    assert schema["properties"]["stock"]["default"] == -1
    done = client.answer(first, "edit_gadget", {"pk": lamp.pk, "stock": -1}, edit_gadget=accept(stock=7))
    assert done["structuredContent"]["stock"] == 7
    lamp.refresh_from_db()
    assert (lamp.name, lamp.slug, lamp.stock) == ("Lamp", "lamp", 7)


def _gadget_server() -> Server:
    server = Server(name="gadgets")
    register(GadgetForm, name="add_gadget", server=server)
    register(GadgetForm, name="edit_gadget", update=True, server=server)
    return server


def test_model_form_update_without_changes_shows_the_whole_form_with_current_values(over_http):
    lamp = Gadget.objects.create(name="Lamp", slug="lamp", stock=3)
    root = User.objects.create(username="root", is_superuser=True)
    client = CoreClient(_gadget_server(), user=root, over_http=over_http)
    first = client.call("edit_gadget", {"pk": lamp.pk})
    schema = asked(first, "edit_gadget")["requestedSchema"]
    assert {name: prop.get("default") for name, prop in schema["properties"].items()} == {
        "name": "Lamp",
        "slug": "lamp",
        "stock": 3,
        "colour": None,
    }
    assert Gadget.objects.get().stock == 3
    client.answer(
        first, "edit_gadget", {"pk": lamp.pk}, edit_gadget=accept(name="Lamp", slug="lamp-2", stock=3)
    )
    assert Gadget.objects.get().slug == "lamp-2"
    assert Gadget.objects.count() == 1


class CampaignForm(forms.Form):
    """Join a campaign the model picked."""

    campaign = forms.CharField(widget=forms.HiddenInput)
    email = forms.EmailField()


class OnlyHiddenForm(forms.Form):
    campaign = forms.CharField(widget=forms.HiddenInput)


def test_a_missing_hidden_field_is_for_the_model_to_pass(over_http):
    server = Server()
    register(CampaignForm, server=server)
    client = CoreClient(server, over_http=over_http)
    refused = client.call("campaign", {"email": "ada@example.com"})
    assert refused["isError"] is True
    assert "campaign (hidden)" in text(refused)
    assert "must be passed as an argument" in text(refused)
    done = client.call("campaign", {"campaign": "spring", "email": "ada@example.com"})
    assert done["structuredContent"] == {"campaign": "spring", "email": "ada@example.com"}


class ReferralForm(forms.Form):
    """Sign up through a referral the model knows about."""

    campaign = forms.CharField(widget=forms.HiddenInput)
    referrer = forms.CharField(widget=forms.HiddenInput)
    email = forms.EmailField()


def test_every_missing_hidden_field_is_named_for_the_model(over_http):
    server = Server()
    register(ReferralForm, server=server)
    refused = CoreClient(server, over_http=over_http).call("referral", {"email": "ada@example.com"})
    assert text(refused) == (
        "The Referral form needs campaign (hidden), referrer (hidden), which cannot be asked in a form "
        "elicitation: a hidden field must be passed as an argument.\n"
        "- Campaign (campaign): This field is required.\n"
        "- Referrer (referrer): This field is required."
    )


def test_a_form_with_nothing_askable_cannot_be_confirmed_by_elicitation(over_http):
    server = Server()
    register(OnlyHiddenForm, name="only_hidden", ask="always", server=server)
    result = CoreClient(server, over_http=over_http).call("only_hidden", {"campaign": "spring"})
    assert result["isError"] is True
    assert "has no field a form elicitation can ask" in text(result)
    assert text(result) == "The Only hidden form has no field a form elicitation can ask."


def test_arguments_that_are_not_plain_json_values_are_ignored(client, runs):
    first = client.call("signup", {"email": {"address": "ada@example.com"}, "plan": "pro"})
    params = asked(first, "signup")
    assert "email" in params["requestedSchema"]["properties"]
    assert "default" not in params["requestedSchema"]["properties"]["email"]


def test_the_flow_tolerates_arguments_that_are_not_an_object():
    from mcpforms.flow import FormFlow, Refused, run
    from mcpforms.protocol.context import RequestContext

    ctx = RequestContext(
        method="tools/call", binding="tool:x", arguments=None, client_capabilities={}, meta={}
    )
    outcome = run(FormFlow(SignupForm, key="x", message="m"), ctx, None, confirm_label="the X form")
    assert isinstance(outcome, Refused)
    assert "Email (email): This field is required." in outcome.text


# ---- form_kwargs: a form whose __init__ takes the user ---------------------------------------------------

TEAMS = {"ada": ["engines", "looms"], "bob": ["bridges"]}


class ProjectForm(forms.Form):
    """Start a project in one of your teams."""

    name = forms.CharField()
    team = forms.ChoiceField(choices=[])

    def __init__(self, *args: Any, user: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        teams = TEAMS.get(getattr(user, "username", ""), [])
        team = self.fields["team"]
        assert isinstance(team, forms.ChoiceField)
        team.choices = [(slug, slug.title()) for slug in teams]
        team.initial = teams[0] if teams else None


def _project_server(runs: list[dict[str, Any]]) -> Server:
    server = Server()

    @mcpforms.tool(ProjectForm, server=server, form_kwargs=lambda request: {"user": request.user})
    def project(request, form):
        runs.append(dict(form.cleaned_data))
        return "Started."

    return server


def test_form_kwargs_build_the_form_for_the_caller_and_it_is_asked_accordingly(runs, over_http):
    ada = User.objects.create(username="ada")
    client = CoreClient(_project_server(runs), user=ada, over_http=over_http)
    first = client.call("project", {"name": "Analytical"})
    team = asked(first, "project")["requestedSchema"]["properties"]["team"]
    assert team["oneOf"] == [{"const": "engines", "title": "Engines"}, {"const": "looms", "title": "Looms"}]
    assert team["default"] == "engines"  # the initial the user's form set
    done = client.answer(first, "project", {"name": "Analytical"}, project=accept(team="looms"))
    assert text(done) == "Started."
    assert runs == [{"name": "Analytical", "team": "looms"}]


def test_form_kwargs_validate_against_the_callers_form(runs, over_http):
    server = _project_server(runs)
    ada = User.objects.create(username="ada")
    bob = User.objects.create(username="bob")
    arguments = {"name": "Tower", "team": "bridges"}
    first = CoreClient(server, user=ada, over_http=over_http).call("project", arguments)
    assert (
        "Team (team): Select a valid choice. bridges is not one of the available choices."
        in asked(first, "project")["message"]
    )
    assert runs == []
    done = CoreClient(server, user=bob, over_http=over_http).call("project", arguments)
    assert text(done) == "Started."
    assert runs == [{"name": "Tower", "team": "bridges"}]


# ---- form-level errors (clean()) --------------------------------------------------------------------------


class MeetingForm(forms.Form):
    """Book a meeting room."""

    start = forms.IntegerField(min_value=0, max_value=23)
    end = forms.IntegerField(min_value=0, max_value=23)
    topic = forms.CharField(required=False)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        start, end = cleaned.get("start"), cleaned.get("end")
        if start is not None and end is not None and end <= start:
            raise ValidationError("The meeting must end after it starts.")
        return cleaned


def test_a_form_level_error_re_asks_every_field_with_the_forms_message(runs, over_http):
    server = Server()

    @mcpforms.tool(MeetingForm, server=server, message="Book a room")
    def meeting(request, form):
        runs.append(dict(form.cleaned_data))
        return "Booked."

    client = CoreClient(server, over_http=over_http)
    arguments = {"start": 10, "end": 9, "topic": "Plans"}
    first = client.call("meeting", arguments)
    params = asked(first, "meeting")
    assert params["message"] == "Book a room\nPlease correct:\n- The meeting must end after it starts."
    properties = params["requestedSchema"]["properties"]
    # Every field, even those valid on their own: the user fixes a combination.
    assert {name: prop.get("default") for name, prop in properties.items()} == {
        "start": 10,
        "end": 9,
        "topic": "Plans",
    }
    assert runs == []

    # Still wrong after an answer: every field is asked again, not only the ones with errors.
    second = client.answer(first, "meeting", arguments, meeting=accept(start=12, end=11, topic="Plans"))
    params = asked(second, "meeting")
    assert "The meeting must end after it starts." in params["message"]
    assert list(params["requestedSchema"]["properties"]) == ["start", "end", "topic"]
    assert runs == []

    done = client.answer(second, "meeting", arguments, meeting=accept(start=12, end=13, topic="Plans"))
    assert text(done) == "Booked."
    assert runs == [{"start": 12, "end": 13, "topic": "Plans"}]


# ---- multi-selects ---------------------------------------------------------------------------------------


class PizzaForm(forms.Form):
    """Order a pizza."""

    size = forms.ChoiceField(choices=[("s", "Small"), ("l", "Large")])
    toppings = forms.MultipleChoiceField(choices=[("ham", "Ham"), ("egg", "Egg"), ("cheese", "Cheese")])


def _pizza_client(runs: list[dict[str, Any]], over_http: bool) -> CoreClient:
    server = Server()

    @mcpforms.tool(PizzaForm, server=server, message="Your order")
    def pizza(request, form):
        runs.append(dict(form.cleaned_data))
        return "Ordered."

    return CoreClient(server, over_http=over_http)


def test_a_multi_select_passed_as_an_argument_reaches_the_handler(runs, over_http):
    client = _pizza_client(runs, over_http)
    assert text(client.call("pizza", {"size": "l", "toppings": ["ham", "cheese"]})) == "Ordered."
    assert runs == [{"size": "l", "toppings": ["ham", "cheese"]}]


def test_a_multi_select_answer_reaches_the_handler_with_repeated_picks_once(runs, over_http):
    client = _pizza_client(runs, over_http)
    first = client.call("pizza", {"size": "s"})
    toppings = asked(first, "pizza")["requestedSchema"]["properties"]["toppings"]
    assert toppings["type"] == "array"
    done = client.answer(first, "pizza", {"size": "s"}, pizza=accept(toppings=["egg", "cheese", "egg"]))
    assert text(done) == "Ordered."
    assert runs == [{"size": "s", "toppings": ["egg", "cheese"]}]


def test_a_multi_select_answer_with_a_choice_never_offered_is_re_asked_with_djangos_message(runs, over_http):
    client = _pizza_client(runs, over_http)
    first = client.call("pizza", {"size": "s"})
    second = client.answer(first, "pizza", {"size": "s"}, pizza=accept(toppings=["egg", "pineapple"]))
    assert (
        "Toppings (toppings): Select a valid choice. pineapple is not one of the available choices."
        in asked(second, "pizza")["message"]
    )
    assert runs == []


@pytest.mark.parametrize(
    "toppings", [["ham", {"name": "egg"}], [["ham"]], ["ham", None], None, {"ham": True}]
)
def test_a_multi_select_argument_that_is_not_a_list_of_plain_values_is_ignored(runs, over_http, toppings):
    client = _pizza_client(runs, over_http)
    first = client.call("pizza", {"size": "l", "toppings": toppings})
    params = asked(first, "pizza")
    # Ignored, not judged: toppings is simply asked, with no default and nothing to correct.
    assert params["message"] == "Your order"
    assert list(params["requestedSchema"]["properties"]) == ["toppings"]
    assert "default" not in params["requestedSchema"]["properties"]["toppings"]
    assert runs == []


def test_a_multi_select_answer_holding_an_object_is_dropped_and_asked_again(runs, over_http):
    client = _pizza_client(runs, over_http)
    first = client.call("pizza", {"size": "l"})
    second = client.answer(first, "pizza", {"size": "l"}, pizza=accept(toppings=["ham", {"name": "egg"}]))
    params = asked(second, "pizza")
    assert params["message"] == "Your order"
    assert "default" not in params["requestedSchema"]["properties"]["toppings"]
    assert runs == []


# ---- what the user leaves out, and what the schema rejects -----------------------------------------------


def test_a_field_the_user_left_out_is_cleared_even_when_the_model_passed_it(client, runs):
    arguments = {"email": "ada@example.com", "plan": "team", "age": 40}
    first = client.call("confirm_signup", arguments)
    assert asked(first, "confirm_signup")["requestedSchema"]["properties"]["age"]["default"] == 40
    done = client.answer(
        first, "confirm_signup", arguments, confirm_signup=accept(email="ada@example.com", plan="team")
    )
    assert text(done) == "Signed up."
    assert runs == [{"email": "ada@example.com", "plan": "team", "age": None, "newsletter": False}]


def test_a_re_asked_field_the_user_left_out_does_not_keep_its_earlier_answer(client, runs):
    first = client.call("signup", {})
    second = client.answer(first, "signup", signup=accept(email="ada@example.invalid", plan="pro", age=30))
    email = asked(second, "signup")["requestedSchema"]["properties"]["email"]
    assert email["default"] == "ada@example.invalid"
    third = client.answer(second, "signup", signup=accept())
    params = asked(third, "signup")
    # The rejected address is gone: email is asked afresh, not corrected.
    assert params["message"] == "Create your account"
    assert list(params["requestedSchema"]["properties"]) == ["email"]
    assert "default" not in params["requestedSchema"]["properties"]["email"]
    done = client.answer(third, "signup", signup=accept(email="ada@example.com"))
    assert runs == [{"email": "ada@example.com", "plan": "pro", "age": 30, "newsletter": False}]
    assert not done.get("isError")


@pytest.mark.parametrize(
    ("content", "field", "message"),
    [
        ({"email": "not-an-email"}, "email", "Email (email): Enter a valid email address."),
        ({"age": 12}, "age", "Age (age): Ensure this value is greater than or equal to 18."),
        ({"age": 121}, "age", "Age (age): Ensure this value is less than or equal to 120."),
        ({"age": "forty"}, "age", "Age (age): Enter a whole number."),
    ],
)
def test_an_answer_the_schema_rejects_is_re_asked_with_djangos_message(client, runs, content, field, message):
    first = client.call("signup", {})
    answer = {"email": "ada@example.com", "plan": "pro"} | content
    second = client.answer(first, "signup", signup=accept(**answer))
    params = asked(second, "signup")
    assert message in params["message"]
    assert list(params["requestedSchema"]["properties"]) == [field]
    assert runs == []


# ---- several messages for one field, or for the whole form -----------------------------------------------


class VoucherForm(forms.Form):
    """Redeem a voucher."""

    code = forms.CharField(
        validators=[MinLengthValidator(6), RegexValidator(r"^[A-Z0-9]+$", "Use capitals and digits only.")]
    )
    nights = forms.IntegerField(min_value=1)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if cleaned.get("nights", 0) > 7:
            raise ValidationError(["A voucher covers a week at most.", "Book the rest separately."])
        return cleaned


def _voucher_client(over_http: bool) -> CoreClient:
    server = Server()
    register(VoucherForm, server=server, message="Your voucher")
    return CoreClient(server, over_http=over_http)


def test_a_field_with_several_problems_gets_them_all_on_its_line(over_http):
    first = _voucher_client(over_http).call("voucher", {"code": "ab1", "nights": 2})
    assert asked(first, "voucher")["message"] == (
        "Your voucher\nPlease correct:\n"
        "- Code (code): Ensure this value has at least 6 characters (it has 3). Use capitals and digits only."
    )


def test_a_form_with_several_problems_of_its_own_gets_them_all_on_one_line(over_http):
    first = _voucher_client(over_http).call("voucher", {"code": "SPRING26", "nights": 9})
    assert asked(first, "voucher")["message"] == (
        "Your voucher\nPlease correct:\n- A voucher covers a week at most. Book the rest separately."
    )


# ---- MCP Apps hosts: the form UI --------------------------------------------------------------------------


def test_an_apps_host_shows_the_form_prefilled_with_only_the_models_mistakes_marked(server, runs, over_http):
    client = CoreClient(server, capabilities=APPS | {"elicitation": {"form": {}}}, over_http=over_http)
    shown = client.call("signup", {"plan": "pro", "age": 12})
    assert_wire_valid(shown)
    assert shown["resultType"] == "complete"  # a tool result the host renders, not an elicitation
    assert shown["_meta"]["ui"]["resourceUri"] == "ui://mcpforms/signup"
    content = shown["structuredContent"]
    assert [field["name"] for field in content["fields"]] == ["email", "plan", "age", "newsletter"]
    assert content["values"] == {"plan": "pro", "age": 12}
    # The missing email is for the user to fill in; only the age the model passed is judged.
    assert content["errors"] == {"age": ["Ensure this value is greater than or equal to 18."]}
    assert runs == []


def test_the_apps_submit_tool_returns_djangos_messages_per_field_and_runs_on_valid_values(
    server, runs, over_http
):
    client = CoreClient(server, capabilities=APPS, over_http=over_http)
    refused = client.call("signup_submit", {"email": "nope", "plan": "pro"})
    assert refused["isError"] is True
    assert refused["structuredContent"] == {"errors": {"email": ["Enter a valid email address."]}}
    assert runs == []
    done = client.call("signup_submit", {"email": "ada@example.com", "plan": "pro"})
    assert done["structuredContent"] == {"email": "ada@example.com", "plan": "pro"}
    assert len(runs) == 1


# ---- passwords, and confirmation on the URL-mode page ------------------------------------------------------


class LoginForm(forms.Form):
    """Sign in to the archive."""

    username = forms.CharField()
    password = forms.CharField(widget=forms.PasswordInput)


URL_ONLY: dict[str, Any] = {"elicitation": {"url": {}}}
FORM_AND_URL: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}


@pytest.fixture
def page_server(server: Server, settings: Any) -> Server:
    """``server`` with a password form, on a site whose URL-mode pages have an address."""
    settings.MCPFORMS = {**settings.MCPFORMS, "BASE_URL": "http://testserver"}
    register(LoginForm, server=server)
    register(LoginForm, name="plain_login", ask="never", server=server)
    return server


def _page_html(result: dict[str, Any], key: str) -> str:
    page = Client().get(page_path(result, key))
    assert page.status_code == 200
    return page.content.decode()


def test_a_missing_password_sends_the_user_to_the_page_prefilled_with_the_rest(page_server, over_http):
    client = CoreClient(page_server, capabilities=FORM_AND_URL, over_http=over_http)
    first = client.call("login", {"username": "ada"})
    assert "a password" in url_request(first, "login")["message"]
    assert 'name="username" value="ada"' in _page_html(first, "login")


def test_without_url_mode_the_missing_password_is_named_for_the_model(page_server, over_http):
    refused = CoreClient(page_server, over_http=over_http).call("login", {"username": "ada"})
    assert refused["isError"] is True
    assert text(refused).endswith(
        "Use a client that supports it.\n- Password (password): This field is required."
    )


def test_a_tool_that_never_asks_lists_a_missing_password_for_the_model_like_any_field(page_server, over_http):
    client = CoreClient(page_server, capabilities=FORM_AND_URL, over_http=over_http)
    refused = client.call("plain_login", {"username": "ada"})
    assert refused["isError"] is True
    assert text(refused) == (
        "Could not submit the Plain login form; these fields are missing or invalid:\n"
        "- Password (password): This field is required.\n"
        "Pass valid values as arguments, or ask the user for them."
    )


def test_ask_always_is_confirmed_on_the_page_by_a_client_with_url_mode_only(page_server, runs, over_http):
    client = CoreClient(page_server, capabilities=URL_ONLY, over_http=over_http)
    first = client.call("confirm_signup", {"email": "ada@example.com", "plan": "team"})
    url_request(first, "confirm_signup")
    assert 'value="ada@example.com"' in _page_html(first, "confirm_signup")
    assert runs == []


# ---- a form that changes while it is being filled in -----------------------------------------------------

STALE = "This form changed while it was being filled in; please check the answers again."


class PlanOnlyForm(SignupForm):
    """Choose a plan."""

    email = None  # type: ignore[assignment]  # the new version asks no email


def _publish(
    server: Server,
    runs: list[dict[str, Any]],
    form: type[forms.BaseForm],
    *,
    version: str,
    ask: Ask = "missing",
) -> None:
    """(Re)define the ``survey`` tool, as saving an admin-defined form does: a new version of its form."""

    class Survey(FormTool):
        form_class = form
        name = "survey"

        def handle(self, request: Any, form: forms.BaseForm) -> str:
            runs.append(dict(form.cleaned_data))
            return "Thanks."

    Survey.version, Survey.ask = version, ask
    registry_for(server).unregister("survey")
    register(Survey, server=server)


def test_a_changed_form_is_asked_again_afresh_and_the_old_final_round_runs_nothing(server, runs, over_http):
    _publish(server, runs, SignupForm, version="1")
    client = CoreClient(server, over_http=over_http)
    first = client.call("survey", {"plan": "pro"})
    final = accept(email="ada@example.com", age=30)
    _publish(server, runs, SignupForm, version="2")
    again = client.answer(first, "survey", {"plan": "pro"}, survey=final)
    params = asked(again, "survey")
    assert params["message"] == f"{STALE}\nPlease fill in: Survey"
    # What the model passed still stands; the old answers are no answers to the new form.
    assert list(params["requestedSchema"]["properties"]) == ["email", "age", "newsletter"]
    assert "default" not in params["requestedSchema"]["properties"]["email"]
    assert runs == []
    done = client.answer(again, "survey", {"plan": "pro"}, survey=final)
    assert text(done) == "Thanks."
    assert runs == [{"email": "ada@example.com", "plan": "pro", "age": 30, "newsletter": False}]


def test_a_changed_form_that_needs_nothing_more_is_still_shown_to_the_user_first(server, runs, over_http):
    arguments = {"plan": "pro", "age": 30, "newsletter": True}
    _publish(server, runs, SignupForm, version="1")
    client = CoreClient(server, over_http=over_http)
    first = client.call("survey", arguments)
    _publish(server, runs, PlanOnlyForm, version="2")
    again = client.answer(first, "survey", arguments, survey=accept(email="ada@example.com"))
    properties = asked(again, "survey")["requestedSchema"]["properties"]
    assert {name: prop.get("default") for name, prop in properties.items()} == arguments
    assert runs == []


def test_a_changed_form_is_refused_to_a_client_that_cannot_show_it(server, runs, over_http):
    _publish(server, runs, SignupForm, version="1")
    first = CoreClient(server, over_http=over_http).call("survey", {"plan": "pro"})
    _publish(server, runs, SignupForm, version="2")
    plain = CoreClient(server, capabilities={}, over_http=over_http)
    refused = plain.answer(first, "survey", {"plan": "pro"}, survey=accept(email="ada@example.com"))
    assert refused["isError"] is True
    assert text(refused) == f"{STALE} Call the tool again; nothing was submitted."
    assert runs == []


def test_a_form_changed_to_never_ask_runs_the_old_round_on_valid_arguments_as_any_call(
    server, runs, over_http
):
    # Nobody is ever asked to look at a form that never asks: a fresh call with these arguments would run.
    arguments = {"plan": "pro", "age": 30}
    _publish(server, runs, SignupForm, version="1")
    client = CoreClient(server, over_http=over_http)
    first = client.call("survey", arguments)
    _publish(server, runs, PlanOnlyForm, version="2", ask="never")
    done = client.answer(first, "survey", arguments, survey=accept(email="ada@example.com"))
    assert text(done) == "Thanks."
    assert runs == [{"plan": "pro", "age": 30, "newsletter": False}]
