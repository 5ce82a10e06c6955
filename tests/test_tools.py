"""FormTool as a class you subclass, the way a ModelAdmin is: options, overridable methods, and the short
``register(Form, **options)`` and ``@mcpforms.tool(Form, **options)`` forms that build the same subclass."""

from __future__ import annotations

from typing import Any

import pytest
from django import forms
from django.contrib.auth.models import Permission, User

import mcpforms
from mcpforms.protocol.server import Server
from mcpforms.registry import register, registry_for
from mcpforms.tools import FormTool, RegistrationError, tool_class
from tests.core_client import APPS, CoreClient, asked, assert_unknown_tool, text
from tests.forms import SignupForm
from tests.testapp.models import Gadget

pytestmark = pytest.mark.django_db


class GadgetForm(forms.ModelForm):
    class Meta:
        model = Gadget
        fields = ["name", "slug", "stock"]


class RestockTool(FormTool):
    """Staff restock gadgets whose name starts with their own username's first letter."""

    form_class = GadgetForm
    name = "restock"
    title = "Restock a gadget"
    update = True
    permission = None

    def has_permission(self, request: Any) -> bool:
        return request.user is not None and request.user.is_staff

    def get_queryset(self, request: Any) -> Any:
        return Gadget.objects.filter(name__startswith=request.user.username[0])

    def handle(self, request: Any, form: Any) -> str:
        gadget = form.save()
        return f"{gadget.name}: {gadget.stock} in stock"


def staff(username: str) -> User:
    return User.objects.create_user(username, is_staff=True)


def serve(tool: type[FormTool], *, user: Any = None) -> CoreClient:
    server = Server()
    register(tool, server=server)
    return CoreClient(server, user=user)


def test_a_subclass_is_listed_with_its_options():
    client = serve(RestockTool, user=staff("ada"))
    client.capabilities = {**client.capabilities, **APPS}  # a host that renders the form UI
    tools = {tool["name"]: tool for tool in client.result("tools/list")["tools"]}
    assert set(tools) == {"restock", "restock_submit"}  # the submit tool of its form UI
    listed = tools["restock"]
    assert listed["name"] == "restock"
    assert listed["title"] == "Restock a gadget"
    assert listed["inputSchema"]["required"] == ["pk"]
    assert listed["annotations"] == {"title": "Restock a gadget"}  # its own handle(): no guessing


def test_its_methods_decide_who_may_call_what_it_changes_and_what_it_returns():
    ada_gadget = Gadget.objects.create(name="anvil", slug="anvil", stock=1)
    other = Gadget.objects.create(name="bolt", slug="bolt", stock=1)

    assert_unknown_tool(
        serve(RestockTool, user=User.objects.create_user("visitor")), "restock", {"pk": ada_gadget.pk}
    )

    client = serve(RestockTool, user=staff("ada"))
    out_of_scope = client.call("restock", {"pk": other.pk, "stock": 9})
    assert out_of_scope["isError"] is True
    assert f"No gadget with pk {other.pk}" in text(out_of_scope)

    done = client.call("restock", {"pk": ada_gadget.pk, "name": "anvil", "slug": "anvil", "stock": 7})
    assert text(done) == "anvil: 7 in stock"
    assert Gadget.objects.get(pk=ada_gadget.pk).stock == 7
    assert Gadget.objects.get(pk=other.pk).stock == 1


PLANS = [("free", "Free"), ("pro", "Pro"), ("team", "Team")]


class PlanForm(forms.Form):
    plan = forms.ChoiceField(choices=PLANS)

    def __init__(self, *args: Any, plans: tuple[str, ...] = ("free", "pro", "team"), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["plan"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [(value, label) for value, label in PLANS if value in plans]


class PlanTool(FormTool):
    form_class = PlanForm

    def get_form_kwargs(self, request: Any) -> dict[str, Any]:
        # Anonymous callers may only pick the free plan.
        return {} if request.user is not None else {"plans": ("free",)}


def test_get_form_kwargs_builds_the_form_each_request_sees():
    anonymous = serve(PlanTool)
    first = anonymous.call("plan", {})
    schema = asked(first, "plan")["requestedSchema"]["properties"]["plan"]
    assert [option["const"] for option in schema["oneOf"]] == ["free"]
    assert anonymous.call("plan", {"plan": "pro"})["resultType"] == "input_required"

    signed_in = serve(PlanTool, user=User.objects.create_user("ada"))
    assert signed_in.call("plan", {"plan": "pro"})["structuredContent"] == {"plan": "pro"}


def test_the_decorator_builds_the_subclass_of_its_options_with_the_function_as_handler():
    server = Server()

    @mcpforms.tool(SignupForm, server=server, name="join", ask="never")
    def join(request: Any, form: forms.BaseForm) -> str:
        return f"Welcome, {form.cleaned_data['email']}"

    built = registry_for(server).tools["join"]
    assert isinstance(built, FormTool)
    assert built.form_class is SignupForm and built.ask == "never"
    assert type(built).__bases__ == (FormTool,)  # one class holds the options and the handler
    assert built.has_own_handler
    result = CoreClient(server).call("join", {"email": "ada@example.com", "plan": "pro"})
    assert text(result) == "Welcome, ada@example.com"


def test_the_public_name_is_the_same_class():
    assert mcpforms.FormTool is FormTool


def test_a_default_handler_keeps_model_permissions_for_updates():
    class EditGadget(FormTool):
        form_class = GadgetForm
        update = True

    gadget = Gadget.objects.create(name="cog", slug="cog")
    user = User.objects.create_user("ada")
    client = serve(EditGadget, user=user)
    assert_unknown_tool(client, "gadget", {"pk": gadget.pk})  # no change permission: no such tool
    user.user_permissions.add(Permission.objects.get(codename="change_gadget"))
    client.user = User.objects.get(pk=user.pk)  # a fresh user: permissions are cached per instance
    changed = client.call("gadget", {"pk": gadget.pk, "stock": 4})
    assert changed["structuredContent"]["stock"] == 4  # the other fields keep the gadget's values
    assert Gadget.objects.get(pk=gadget.pk).stock == 4


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: type("NoForm", (FormTool,), {})(), "NoForm.form_class must be a Django form class"),
        (lambda: tool_class(SignupForm, colour="red"), "Unknown option.*colour.*valid: annotations"),
        (lambda: tool_class(SignupForm, name=""), "Tool name '' must be"),
        (lambda: register(RestockTool, server=Server(), name="x"), "Options belong on the FormTool subclass"),
    ],
)
def test_mistakes_are_registration_errors(build, message):
    with pytest.raises(RegistrationError, match=message):
        build()


class TeamForm(forms.Form):
    """Join one of your teams."""

    team = forms.ChoiceField(choices=[("red", "Red"), ("blue", "Blue"), ("green", "Green")])

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:  # required: only a request has it
        super().__init__(*args, **kwargs)
        field = self.fields["team"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [("red", "Red")] if user is None else [("blue", "Blue"), ("green", "Green")]


def test_a_form_whose_init_needs_the_user_is_listed_checked_and_asked_per_caller():
    server = Server()
    register(TeamForm, server=server, form_kwargs=lambda request: {"user": request.user})
    client = CoreClient(server, user=User.objects.create_user("ada"))
    # Listing has no request: the schema shows the choices the class declares, never another caller's.
    (listed,) = [tool for tool in client.result("tools/list")["tools"] if tool["name"] == "team"]
    assert [o["const"] for o in listed["inputSchema"]["properties"]["team"]["oneOf"]] == [
        "red",
        "blue",
        "green",
    ]
    assert registry_for(server).conversion_failures() == []
    # A call builds the caller's form: Ada picks among her own teams.
    first = client.call("team", {})
    offered = asked(first, "team")["requestedSchema"]["properties"]["team"]["oneOf"]
    assert [option["const"] for option in offered] == ["blue", "green"]
    assert client.call("team", {"team": "green"})["structuredContent"] == {"team": "green"}


class NewGadgetForm(forms.ModelForm):
    class Meta:
        model = Gadget
        fields = ["name", "slug", "stock"]


def test_a_default_is_in_the_input_schema_and_taken_when_nobody_can_be_asked():
    server = Server()
    register(NewGadgetForm, server=server, name="add_gadget")
    (listed,) = [t for t in CoreClient(server).result("tools/list")["tools"] if t["name"] == "add_gadget"]
    assert listed["inputSchema"]["properties"]["stock"]["default"] == 0
    assert "default" not in listed["inputSchema"]["properties"]["name"]

    # No elicitation: the model left stock out, so it takes its default instead of "This field is required."
    no_elicitation = CoreClient(server, capabilities={})
    done = no_elicitation.call("add_gadget", {"name": "Lamp", "slug": "lamp"})
    assert not done.get("isError"), text(done)
    assert Gadget.objects.get(name="Lamp").stock == 0
    # Still required where there is no default: the error names the field.
    refused = no_elicitation.call("add_gadget", {"slug": "desk"})
    assert refused["isError"] and "name" in text(refused).lower()

    # A client that can ask shows the user the default, prefilled, and it is the user's to change.
    first = CoreClient(server).call("add_gadget", {"name": "Desk", "slug": "desk"})
    assert asked(first, "add_gadget")["requestedSchema"]["properties"]["stock"]["default"] == 0


# What the description promises about asking the user -----------------------------------------------------

ASKS_FOR_MISSING = "Missing details are asked from the user."


def listed_descriptions(server: Server) -> dict[str, str]:
    """Each tool's description as ``tools/list`` sends it over HTTP."""
    tools = CoreClient(server, over_http=True).result("tools/list")["tools"]
    return {tool["name"]: tool["description"] for tool in tools}


def test_the_description_says_only_what_the_ask_policy_does():
    server = Server()
    for ask in ("missing", "always", "never"):
        register(SignupForm, server=server, name=f"signup_{ask}", ask=ask)
    described = listed_descriptions(server)
    assert described["signup_missing"] == f"Create an account. {ASKS_FOR_MISSING}"
    assert described["signup_always"] == (
        "Create an account. The user reviews and confirms the details before every call runs."
    )
    assert described["signup_never"] == (
        "Create an account. Pass every required argument: the user is never asked for anything."
    )
    # A page-only tool sends every call to the URL-mode page, whatever its ask policy says.
    register(SignupForm, server=server, name="signup_on_page", ask="never", path="url")
    assert listed_descriptions(server)["signup_on_page"] == (
        "Create an account. The user fills in the form on a web page before every call runs; "
        "arguments prefill it."
    )


@pytest.mark.parametrize(
    ("ask", "promise"),
    [
        ("missing", ASKS_FOR_MISSING),
        ("always", "The user reviews and confirms the details before every call runs."),
        ("never", "Pass every required argument: the user is never asked for anything."),
    ],
)
def test_an_admin_defined_form_describes_its_own_ask_policy(ask, promise):
    from mcpforms.models import FieldDefinition, FormDefinition
    from mcpforms.protocol.server import default_server

    definition = FormDefinition.objects.create(
        name="rsvp", title="RSVP", description="Answer the invitation.", message="Coming?", ask=ask
    )
    FieldDefinition.objects.create(definition=definition, order=0, name="name", type="text", required=True)
    assert listed_descriptions(default_server)["rsvp"] == f"Answer the invitation. {promise}"
