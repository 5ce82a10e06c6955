from __future__ import annotations

import pytest
from django import forms
from django.core.checks import Error
from django.test import override_settings

from mcpforms.checks import check_registered_forms
from mcpforms.protocol.server import Server, default_server
from mcpforms.registry import register, register_prompt, registry_for
from mcpforms.tools import RegistrationError, default_name
from tests.forms import SignupForm
from tests.testapp.models import Colour


class Odd(forms.Field):
    pass


class OddForm(forms.Form):
    odd = Odd()


class TicketCreateForm(forms.Form):
    subject = forms.CharField()


class NoDocForm(forms.Form):
    subject = forms.CharField()


@pytest.mark.django_db  # the default server also lists admin-defined forms
def test_autodiscovery_registered_the_test_apps_tools_on_the_default_server():
    assert "testapp_signup" in registry_for(default_server).tools
    assert default_server.tools.get("testapp_signup") is not None


def test_default_names_and_titles():
    assert default_name(SignupForm) == "signup"
    assert default_name(TicketCreateForm) == "ticket_create"
    server = Server()
    register(TicketCreateForm, server=server)
    tool = server.tools.get("ticket_create")
    assert tool is not None
    assert tool.title == "Ticket create"


def test_description_comes_from_the_registration_or_the_docstring():
    server = Server()
    register(NoDocForm, name="a", server=server)
    register(NoDocForm, name="b", description="Open a ticket.", server=server)
    register(SignupForm, name="c", server=server)
    descriptions = {name: server.tools.get(name).description for name in "abc"}  # type: ignore[union-attr]
    assert descriptions == {
        "a": "Fill in the A form. Missing details are asked from the user.",
        "b": "Open a ticket. Missing details are asked from the user.",
        "c": "Create an account. Missing details are asked from the user.",
    }


@pytest.mark.parametrize("name", ["", "has space", "slash/name", "x" * 65, "émoji"])
def test_bad_names_are_refused(name):
    with pytest.raises(RegistrationError, match="must be 1-64 characters"):
        register(SignupForm, name=name, server=Server())


def test_a_name_registered_twice_is_refused():
    server = Server()
    register(SignupForm, server=server)
    with pytest.raises(RegistrationError, match="'signup' is already registered"):
        register(SignupForm, server=server)
    register_prompt(SignupForm, template="{email}", server=server)
    with pytest.raises(RegistrationError, match="prompt named 'signup'"):
        register_prompt(SignupForm, template="{email}", server=server)


def test_unconvertible_forms_and_bad_options_are_refused():
    with pytest.raises(RegistrationError, match=r"OddForm\.odd: Odd has no mapping"):
        register(OddForm, server=Server())
    with pytest.raises(RegistrationError, match="ask='sometimes' is not one of missing, always, never"):
        register(SignupForm, ask="sometimes", server=Server())  # type: ignore[arg-type]
    with pytest.raises(RegistrationError, match="update=True needs a ModelForm"):
        register(SignupForm, update=True, server=Server())
    with pytest.raises(RegistrationError, match="unknown fields: nope"):
        register_prompt(SignupForm, template="{nope}", server=Server())


def test_registering_touches_no_database():
    class ColourForm(forms.Form):
        colour = forms.ModelChoiceField(queryset=Colour.objects.all())

    register(ColourForm, server=Server())  # no django_db mark: a query would fail this test


@pytest.mark.django_db
def test_e101_a_registered_form_that_fails_to_convert_at_runtime():
    class Shifty(forms.Form):
        colour = forms.ModelChoiceField(queryset=Colour.objects.all())

    register(Shifty, name="shifty")
    try:
        Colour.objects.create(name="Red", code="#f00")
        Colour.objects.create(name="Blue", code="#00f")
        assert check_registered_forms() == []
        with override_settings(MCPFORMS={"MAX_MODEL_CHOICES": 1}):
            (message,) = check_registered_forms()
        assert isinstance(message, Error)
        assert message.id == "mcpforms.E101"
        assert "'shifty'" in message.msg
        assert "more than 1 choices" in message.msg
    finally:
        registry_for(default_server).unregister("shifty")
    assert default_server.tools.get("shifty") is None


def test_an_output_schema_is_declared_with_the_tool():
    server = Server()
    schema = {"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]}

    @register(SignupForm, output_schema=schema, server=server)
    def signup(request, form):
        return {"email": form.cleaned_data["email"]}

    tool = server.tools.get("signup")
    assert tool is not None
    assert tool.entry["outputSchema"] == schema


def test_bad_prompt_names_are_refused():
    with pytest.raises(RegistrationError, match="Prompt name 'has space' must be 1-64 characters"):
        register_prompt(SignupForm, name="has space", template="{email}", server=Server())


class ContactForm(forms.Form):
    """Ask to be called back."""

    phone = forms.CharField()


def test_a_decorated_function_names_its_tool_unless_a_name_is_given():
    server = Server()

    @register(ContactForm, server=server)
    def call_me_back(request, form):
        return "soon"

    @register(ContactForm, server=server, name="contact_sales")
    def sales(request, form):
        return "sales"

    register(ContactForm, server=server)  # no function: the form names the tool

    tools = registry_for(server).tools
    assert sorted(tools) == ["call_me_back", "contact", "contact_sales"]
    assert tools["call_me_back"].title == "Call me back"
    served = [tool.name for tool in server.tools.all() if not tool.name.endswith("_submit")]
    assert served == ["call_me_back", "contact", "contact_sales"]


def test_a_decorated_name_that_clashes_is_refused():
    server = Server()
    register(ContactForm, server=server, name="callback")
    with pytest.raises(RegistrationError, match="'callback' is already registered"):

        @register(ContactForm, server=server)
        def callback(request, form):
            return "twice"
