from __future__ import annotations

import re
from typing import Any

import pytest
from django import forms
from django.core.checks import CheckMessage, Error
from django.test import override_settings

import mcpforms
from mcpforms.checks.registry import check_registered_forms
from mcpforms.protocol.server import Server, default_server
from mcpforms.registry import check_form_tools, register, register_prompt, registry_for
from mcpforms.tools import RegistrationError, default_name
from tests.core_client import APPS, ELICITATION, CoreClient, asked
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


def check_errors(form: type[forms.BaseForm], **options: Any) -> list[tuple[str | None, str]]:
    """The id and text of each check error of ``form`` registered with ``options``."""
    server = Server()
    register(form, server=server, **options)
    return [(message.id, message.msg) for message in registry_for(server).check()]


def test_unconvertible_forms_and_bad_options_are_refused():
    ((id, msg),) = check_errors(OddForm)
    assert id == "mcpforms.E405" and re.search(r"OddForm\.odd: Odd has no mapping", msg)
    ((id, msg),) = check_errors(SignupForm, ask="sometimes")
    assert id == "mcpforms.E401" and "ask='sometimes' is not one of missing, always, never" in msg
    ((id, msg),) = check_errors(SignupForm, update=True)
    assert id == "mcpforms.E404" and "update=True needs a ModelForm" in msg
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

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            if Colour.objects.count() > 1:  # what the database holds decides the fields
                self.fields["odd"] = Odd()

    register(Shifty, name="shifty")
    try:
        Colour.objects.create(name="Red", code="#f00")

        # Every server's forms are checked: only the default server's shifty is this test's.
        def shifty() -> list[CheckMessage]:
            return [
                m for m in check_registered_forms() if m.msg.startswith("The form registered as 'shifty' ")
            ]

        assert shifty() == []
        Colour.objects.create(name="Blue", code="#00f")
        (message,) = shifty()
        assert isinstance(message, Error)
        assert message.id == "mcpforms.E101"
        assert "'shifty'" in message.msg
        assert "Shifty.odd: Odd has no mapping" in message.msg
    finally:
        registry_for(default_server).unregister("shifty")
    assert default_server.tools.get("shifty") is None


def test_an_output_schema_is_declared_with_the_tool():
    server = Server()
    schema = {"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]}

    @mcpforms.tool(SignupForm, output_schema=schema, server=server)
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

    @mcpforms.tool(ContactForm, server=server)
    def call_me_back(request, form):
        return "soon"

    @mcpforms.tool(ContactForm, server=server, name="contact_sales")
    def sales(request, form):
        return "sales"

    register(ContactForm, server=server)  # no function: the form names the tool

    tools = registry_for(server).tools
    assert sorted(tools) == ["call_me_back", "contact", "contact_sales"]
    assert tools["call_me_back"].get_title() == "Call me back"
    served = [tool.name for tool in server.tools.all() if not tool.name.endswith("_submit")]
    assert served == ["call_me_back", "contact", "contact_sales"]


def test_a_decorated_name_that_clashes_is_refused():
    server = Server()
    register(ContactForm, server=server, name="callback")
    with pytest.raises(RegistrationError, match="'callback' is already registered"):

        @mcpforms.tool(ContactForm, server=server)
        def callback(request, form):
            return "twice"


# ---- forms are converted when a client first needs them -------------------------------------------------


def counted_forms(count: int, converted: list[str]) -> list[type[forms.Form]]:
    """``count`` form classes that note their name in ``converted`` whenever they are instantiated (reading
    a form's fields for its tool definition instantiates it)."""

    class Counted(forms.Form):
        email = forms.EmailField()

        def __init__(self, *args: object, **kwargs: object) -> None:
            converted.append(type(self).__name__)
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    return [type(f"Form{number}", (Counted,), {}) for number in range(count)]


def lazy_server(count: int, converted: list[str]) -> Server:
    server = Server()
    for number, form_class in enumerate(counted_forms(count, converted)):
        register(form_class, server=server, name=f"t{number:02d}")
    return server


def every_page(client: CoreClient) -> list[list[str]]:
    pages, cursor = [], None
    while True:
        result = client.result("tools/list", {"cursor": cursor} if cursor else {})
        pages.append([tool["name"] for tool in result["tools"]])
        cursor = result.get("nextCursor")
        if cursor is None:
            return pages


@override_settings(MCPFORMS={"ALLOW_ANONYMOUS": True, "PAGE_SIZE": 3})
def test_a_page_converts_its_own_tools_and_a_call_the_tool_it_calls():
    converted: list[str] = []
    server = lazy_server(10, converted)
    assert converted == []  # registering reads no form
    client = CoreClient(server)
    first = client.result("tools/list")
    assert [tool["name"] for tool in first["tools"]] == ["t00", "t01", "t02"]
    assert "nextCursor" in first
    assert set(converted) == {"Form0", "Form1", "Form2"}  # not the next page's, nor any submit tool's
    asked(client.result("tools/call", {"name": "t07", "arguments": {}}), "t07")
    assert set(converted) == {"Form0", "Form1", "Form2", "Form7"}
    client.result("tools/list")
    client.result("tools/call", {"name": "t07", "arguments": {}})
    assert set(converted) == {"Form0", "Form1", "Form2", "Form7"}
    assert converted.count("Form0") == 1  # converted once, listed from then on


@override_settings(MCPFORMS={"ALLOW_ANONYMOUS": True, "PAGE_SIZE": 3})
def test_paging_lazily_lists_every_tool_once_in_order_and_submit_tools_only_to_app_hosts():
    converted: list[str] = []
    server = lazy_server(7, converted)
    register(ContactForm, server=server, name="t03x", path="form")  # no UI, so no submit tool
    names = [f"t{number:02d}" for number in range(7)] + ["t03x"]
    plain = every_page(CoreClient(server))
    assert [len(page) for page in plain] == [3, 3, 2]
    assert sum(plain, []) == sorted(names)
    apps = every_page(CoreClient(server, capabilities={**ELICITATION, **APPS}))
    submits = [f"t{number:02d}_submit" for number in range(7)]
    assert sum(apps, []) == sorted(names + submits)
    assert all(len(page) == 3 for page in apps[:-1])
    assert CoreClient(server).send("tools/call", {"name": "t03x_submit"})["error"]["code"] == -32602


@override_settings(MCPFORMS={"ALLOW_ANONYMOUS": True, "PAGE_SIZE": 2})
def test_a_tool_that_fails_to_convert_is_left_out_of_the_list_not_the_list_broken(caplog):
    class ShiftyForm(forms.Form):
        """Fine when registered, unconvertible once instantiated."""

        name = forms.CharField()

        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            self.fields["odd"] = Odd()

    server = Server()
    register(SignupForm, server=server, name="a")
    register(ShiftyForm, server=server, name="b")
    register(ContactForm, server=server, name="c")
    assert sum(every_page(CoreClient(server)), []) == ["a", "c"]
    assert "'b' cannot be listed" in caplog.text
    assert "Odd has no mapping" in caplog.text
    error = CoreClient(server).send("tools/call", {"name": "b", "arguments": {}})["error"]
    assert error["code"] == -32603  # as before: a tool that cannot be defined is the server's fault


def test_register_written_as_a_decorator_fails_at_that_line_naming_mcpforms_tool():
    class ContactForm(forms.Form):
        email = forms.EmailField()

    server = Server()
    with pytest.raises(RegistrationError) as refused:

        @mcpforms.register(ContactForm, server=server)
        def contact(request: Any, form: Any) -> str:
            return "Thanks."

    assert str(refused.value) == (
        "mcpforms.register(ContactForm) registers the form at once and decorates nothing, so contact would "
        "not be its handler. To make contact the handler, decorate it with @mcpforms.tool(ContactForm) "
        "instead; to register a FormTool subclass, call mcpforms.register(YourTool) after the class."
    )
    assert server.tools.get("contact") is None  # the echo tool it registered first is gone again


def test_register_as_a_plain_call_still_registers_the_form():
    class ContactForm(forms.Form):
        email = forms.EmailField()

    server = Server()
    mcpforms.register(ContactForm, server=server)
    assert server.tools.get("contact") is not None


@pytest.mark.django_db  # the conversion check reads every registered form, database choices included
def test_one_unmapped_field_is_reported_once():
    server = Server(key="reported-once")
    register(OddForm, server=server, name="odd_once")
    try:
        messages = [*check_form_tools(), *check_registered_forms()]  # the two that could each say it
        reported = [message.id for message in messages if "odd_once" in str(message.obj) + message.msg]
    finally:
        registry_for(server).unregister("odd_once")
    assert reported == ["mcpforms.E405"]  # its own check says it; E101 does not say it again
