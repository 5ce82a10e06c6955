"""The form UI path (MCP Apps, spec §11), display_form, and the per-request choice of path, on the wire."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

import pytest
from django import forms
from django.http import QueryDict
from django.test import override_settings

import mcpforms
from mcpforms import display_form, form_schema
from mcpforms.fields import AutoFormField, Option, fields_for_form
from mcpforms.protocol.server import Server
from mcpforms.registry import register, registry_for
from mcpforms.ui import (
    EXTENSION_ID,
    MIME_TYPE,
    form_resource,
    render_done,
    render_form,
    submit_name,
    submitted_values,
    supports_apps,
)
from tests.core_client import CoreClient, asked, assert_unknown_tool, text
from tests.forms import SignupForm

APPS: dict[str, Any] = {"extensions": {EXTENSION_ID: {"mimeTypes": [MIME_TYPE]}}}
APPS_AND_FORMS: dict[str, Any] = {**APPS, "elicitation": {"form": {}}}
FIELDS = [
    AutoFormField("email", label="Email", type="email", required=True),
    AutoFormField("plan", label="Plan", options=[Option("pro", "Pro"), Option("team")]),
]


class LoginForm(forms.Form):
    username = forms.CharField()
    password = forms.CharField(widget=forms.PasswordInput)


@pytest.fixture
def server() -> Server:
    server = Server()
    register(SignupForm, server=server)
    return server


class Inputs(HTMLParser):
    """Collect the form controls and the element ids of a rendered page."""

    def __init__(self) -> None:
        super().__init__()
        self.controls: dict[str, dict[str, str | None]] = {}
        self.ids: dict[str, dict[str, str | None]] = {}
        self.labels: set[str] = set()
        self.scripts: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag in ("input", "select", "textarea") and attributes.get("name"):
            self.controls.setdefault(str(attributes["name"]), attributes | {"tag": tag})
        if attributes.get("id"):
            self.ids[str(attributes["id"])] = attributes | {"tag": tag}
        if tag == "label" and attributes.get("for"):
            self.labels.add(str(attributes["for"]))
        if tag == "script":
            self.scripts.append(attributes)


def parse(html: str) -> Inputs:
    parser = Inputs()
    parser.feed(html)
    return parser


# Discovery and listing ------------------------------------------------------------------------------------


def test_discover_advertises_the_apps_extension(server):
    result = CoreClient(server).result("server/discover")
    assert result["capabilities"]["extensions"][EXTENSION_ID] == {}


def test_the_tool_links_its_ui_and_the_submit_tool_is_app_only(server):
    tools = {tool["name"]: tool for tool in CoreClient(server, APPS).result("tools/list")["tools"]}
    assert tools["signup"]["_meta"]["ui"] == {"resourceUri": "ui://mcpforms/signup"}
    assert tools["signup"]["_meta"]["ui/resourceUri"] == "ui://mcpforms/signup"
    submit = tools["signup_submit"]
    assert submit["_meta"]["ui"] == {"resourceUri": "ui://mcpforms/signup", "visibility": ["app"]}
    assert set(submit["inputSchema"]["properties"]) == {"email", "plan", "age", "newsletter"}


def test_a_form_path_tool_has_no_ui():
    server = Server()
    register(SignupForm, server=server, path="form")
    tools = {tool["name"]: tool for tool in CoreClient(server).result("tools/list")["tools"]}
    assert set(tools) == {"signup"}
    assert "_meta" not in tools["signup"]


def test_bad_path_option_is_refused():
    server = Server()
    register(SignupForm, server=server, path="web")  # type: ignore[arg-type]
    (error,) = registry_for(server).check()
    assert error.id == "mcpforms.E402" and "path='web' is not one of auto, form, url" in error.msg


def test_submit_names_stay_within_64_characters():
    assert submit_name("signup") == "signup_submit"
    long = submit_name("x" * 64)
    assert len(long) <= 64
    assert long != submit_name("x" * 63 + "y")


# The ui:// resource ---------------------------------------------------------------------------------------


def test_the_ui_resource_is_a_self_contained_accessible_form(server):
    result = CoreClient(server).result("resources/read", {"uri": "ui://mcpforms/signup"})
    (content,) = result["contents"]
    assert content["mimeType"] == "text/html;profile=mcp-app"
    assert content["_meta"]["ui"]["csp"] == {"connectDomains": [], "resourceDomains": []}
    html = content["text"]
    page = parse(html)
    assert set(page.controls) == {"email", "plan", "age", "newsletter"}
    for name, control in page.controls.items():
        input_id = control["id"]
        assert input_id in page.labels, name  # every input has its label
        error_id = f"{input_id}_error"
        assert error_id in (control["aria-describedby"] or "").split()  # each error box is tied to its input
        assert page.ids[error_id]["role"] == "alert"  # and announced
    assert page.controls["email"]["type"] == "email"
    assert page.controls["age"]["type"] == "number"
    assert page.controls["plan"]["tag"] == "select"
    # Inline only: no external script, style sheet or image (spec §11.3).
    assert all("src" not in script for script in page.scripts)
    assert not re.search(r"<link\b|src=\"http", html)
    assert '"submit": "signup_submit"' in html
    assert "ui/initialize" in html and "ui/notifications/initialized" in html
    assert "ui/notifications/tool-input" in html


def test_an_unknown_ui_resource_is_not_found(server):
    body = CoreClient(server).send("resources/read", {"uri": "ui://mcpforms/nope"})
    assert body["error"]["code"] == -32602
    assert body["error"]["data"] == {"uri": "ui://mcpforms/nope"}


def test_a_password_form_gets_no_ui():
    server = Server()
    register(LoginForm, server=server)
    tools = {tool["name"]: tool for tool in CoreClient(server).result("tools/list")["tools"]}
    assert set(tools) == {"login"}
    assert "_meta" not in tools["login"]
    body = CoreClient(server).send("resources/read", {"uri": "ui://mcpforms/login"})
    assert body["error"]["code"] == -32602


def test_the_template_is_overridable(tmp_path, server):
    (tmp_path / "mcpforms").mkdir()
    (tmp_path / "mcpforms" / "form.html").write_text(
        "<p>{{ title }}: {% for f in fields %}{{ f.name }} {% endfor %}</p>"
    )
    templates = [
        {"BACKEND": "django.template.backends.django.DjangoTemplates", "DIRS": [tmp_path], "APP_DIRS": True}
    ]
    with override_settings(TEMPLATES=templates):
        result = CoreClient(server).result("resources/read", {"uri": "ui://mcpforms/signup"})
    assert result["contents"][0]["text"] == "<p>Signup: email plan age newsletter </p>"


# Which path, per request ----------------------------------------------------------------------------------


def test_an_apps_host_gets_the_ui_with_a_text_fallback(server):
    client = CoreClient(server, capabilities=APPS_AND_FORMS)
    result = client.call("signup", {"plan": "team", "age": 12})
    assert result["resultType"] == "complete"
    assert "isError" not in result
    assert result["_meta"]["ui"] == {"resourceUri": "ui://mcpforms/signup"}
    content = result["structuredContent"]
    assert content["submit"] == "signup_submit"
    assert content["values"] == {"plan": "team", "age": 12}
    # The model's invalid value is judged; the field nobody filled yet is not an error.
    assert content["errors"] == {"age": ["Ensure this value is greater than or equal to 18."]}
    assert "- email (Email, required)" in text(result)
    assert "call signup with these arguments" in text(result)  # the tool the model sees


@pytest.mark.django_db
def test_an_apps_host_with_complete_arguments_completes_at_once(server):
    client = CoreClient(server, capabilities=APPS)
    result = client.call("signup", {"email": "ada@example.com", "plan": "pro"})
    assert result["structuredContent"]["email"] == "ada@example.com"


def test_without_apps_a_form_elicitation_is_returned(server):
    result = CoreClient(server).call("signup", {"plan": "team"})
    assert set(asked(result, "signup")["requestedSchema"]["properties"]) >= {"email"}


def test_without_apps_nor_elicitation_the_missing_fields_result(server):
    result = CoreClient(server, capabilities={}).call("signup", {"plan": "team"})
    assert result["isError"] is True
    assert "Email (email): This field is required." in text(result)


def test_apps_declared_without_the_html_mime_type_is_not_apps(server):
    other = {"extensions": {EXTENSION_ID: {"mimeTypes": ["text/plain"]}}, "elicitation": {}}
    assert not supports_apps(other)
    assert asked(CoreClient(server, capabilities=other).call("signup", {}), "signup")


def test_a_form_path_tool_elicits_even_on_an_apps_host():
    server = Server()
    register(SignupForm, server=server, path="form")
    result = CoreClient(server, capabilities=APPS_AND_FORMS).call("signup", {})
    assert asked(result, "signup")["mode"] == "form"


# The app-only submit tool ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_submit_tool_runs_the_handler_with_the_values():
    received: list[dict[str, Any]] = []
    server = Server()

    @mcpforms.tool(SignupForm, server=server)
    def signup(request, form):
        received.append(form.cleaned_data)
        return f"Welcome, {form.cleaned_data['email']}"

    client = CoreClient(server, capabilities=APPS)
    values = {"email": "ada@example.com", "plan": "team", "age": 36, "newsletter": True}
    result = client.call("signup_submit", values)
    assert text(result) == "Welcome, ada@example.com"
    assert received == [values]


def test_the_submit_tool_returns_djangos_errors_per_field(server):
    client = CoreClient(server, capabilities=APPS)
    result = client.call("signup_submit", {"email": "ada@example.invalid", "age": 3})
    assert result["isError"] is True
    assert result["structuredContent"]["errors"] == {
        "email": ["That domain does not receive mail."],
        "plan": ["This field is required."],
        "age": ["Ensure this value is greater than or equal to 18."],
    }


def test_the_submit_tool_checks_the_permission():
    server = Server()
    register(SignupForm, server=server, permission="auth.add_user")
    client = CoreClient(server, capabilities=APPS)
    assert_unknown_tool(client, "signup_submit", {"email": "a@example.com", "plan": "pro"})
    assert_unknown_tool(client, "signup")
    # Its form is no more readable than the tool is callable.
    body = client.send("resources/read", {"uri": "ui://mcpforms/signup"})
    assert body["error"]["code"] == -32602 and body["error"]["data"] == {"uri": "ui://mcpforms/signup"}


# display_form -----------------------------------------------------------------------------------------------


def test_display_form_asks_the_same_thing_on_both_paths():
    shown = display_form(FIELDS, "signup", title="Create your account")
    elicited = display_form(FIELDS, "signup", title="Create your account", elicit=True)
    assert shown["_meta"]["ui"]["resourceUri"] == "ui://mcpforms/signup"
    assert [field["name"] for field in shown["structuredContent"]["fields"]] == ["email", "plan"]
    assert shown["structuredContent"]["fields"][1]["options"] == [
        {"value": "pro", "label": "Pro"},
        {"value": "team", "label": "team"},
    ]
    assert "- plan (Plan, one of: pro, team)" in shown["content"][0]["text"]
    params = asked(elicited, "signup")
    assert params["message"] == "Create your account"
    assert params["requestedSchema"] == form_schema(FIELDS)
    assert list(params["requestedSchema"]["properties"]) == ["email", "plan"]


def test_display_form_elicit_options():
    result = display_form(
        FIELDS, "signup", title="T", elicit={"key": "k", "message": "Sign up", "request_state": "s"}
    )
    assert asked(result, "k")["message"] == "Sign up"
    assert result["requestState"] == "s"


def test_form_resource_renders_the_same_fields_and_submits_to_the_tool():
    server = Server()
    server.add_resource(form_resource(FIELDS, tool="signup", title="Create your account"))
    result = CoreClient(server).result("resources/read", {"uri": "ui://mcpforms/signup"})
    html = result["contents"][0]["text"]
    assert set(parse(html).controls) == {"email", "plan"}
    assert '"submit": "signup"' in html
    assert '<h1 id="mcpforms-title">Create your account</h1>' in html


def test_render_form_shows_djangos_errors_inline():
    form = SignupForm(data={"email": "ada@example.invalid", "plan": "pro"})
    form.is_valid()
    page = parse(html := render_form(form, title="Sign up", mode="url"))
    assert page.controls["email"]["aria-invalid"] == "true"
    assert 'id="id_email_error" role="alert"><p>That domain does not receive mail.</p>' in html
    assert "csrfmiddlewaretoken" not in html  # no request, no token: the page view passes its request


def test_date_fields_get_native_pickers():
    class When(forms.Form):
        day = forms.DateField()
        at = forms.TimeField()
        moment = forms.DateTimeField()

    page = parse(render_form(When(), title="When", mode="app"))
    assert [page.controls[name]["type"] for name in ("day", "at", "moment")] == [
        "date",
        "time",
        "datetime-local",
    ]


def test_fields_match_between_paths_for_a_registered_form(server):
    names = [field.name for field in fields_for_form(SignupForm)]
    html = CoreClient(server).result("resources/read", {"uri": "ui://mcpforms/signup"})["contents"][0]["text"]
    assert list(parse(html).controls) == names


def test_help_text_and_error_both_describe_the_input():
    class Helped(forms.Form):
        nick = forms.CharField(help_text="What friends call you")

    page = parse(html := render_form(Helped(), title="Nick", mode="app"))
    assert page.controls["nick"]["aria-describedby"] == "id_nick_helptext id_nick_error"
    assert '<p class="help" id="id_nick_helptext">What friends call you</p>' in html


def test_a_prompt_cannot_take_a_password():
    from mcpforms.registry import register_prompt

    server = Server()
    register_prompt(LoginForm, template="{username}", server=server)
    body = CoreClient(server).send("prompts/get", {"name": "login", "arguments": {"username": "ada"}})
    assert body["error"]["code"] == -32602
    assert "password or file" in body["error"]["message"]


def test_a_form_the_user_must_always_confirm_has_no_submit_tool_a_model_could_call():
    from mcpforms.protocol.server import Server
    from tests.core_client import APPS, CoreClient

    server = Server()
    register(SignupForm, name="confirm", ask="always", server=server)
    tools = {tool["name"]: tool for tool in CoreClient(server).result("tools/list")["tools"]}
    assert list(tools) == ["confirm"]
    assert "_meta" not in tools["confirm"]
    first = CoreClient(server, capabilities={**APPS, "elicitation": {}}).call("confirm", {"email": "a@b.co"})
    assert first["resultType"] == "input_required"  # an elicitation, even on an MCP Apps host


# Multi-selects as checkboxes --------------------------------------------------------------------------------


class Toppings(forms.Form):
    toppings = forms.MultipleChoiceField(choices=[("ham", "Ham"), ("egg", "Egg"), ("cheese", "Cheese")])
    extras = forms.TypedMultipleChoiceField(choices=[(1, "One"), (2, "Two")], coerce=int, required=False)


class ListBox(forms.SelectMultiple):
    """A widget of the project's own: mcpforms keeps it."""


@pytest.mark.parametrize("mode", ["app", "url"])
def test_a_multi_select_is_a_group_of_checkboxes_in_both_modes(mode):
    html = render_form(Toppings(), title="Order", mode=mode)
    boxes = re.findall(
        r'<input type="checkbox" name="toppings" value="(\w+)"[^>]*id="(id_toppings_\d)"', html
    )
    assert boxes == [("ham", "id_toppings_0"), ("egg", "id_toppings_1"), ("cheese", "id_toppings_2")]
    assert "<select" not in html
    page = parse(html)
    assert {box_id for _, box_id in boxes} <= page.labels  # each checkbox has its label
    assert "<legend>Toppings" in html  # the group is named once, by its legend
    assert 'aria-describedby="id_toppings_error"' in html
    assert page.ids["id_toppings_error"]["role"] == "alert"
    if mode == "app":
        assert '{"name": "toppings", "id": "id_toppings", "kind": "multiple"}' in html  # a list, typed


def test_checkboxes_submit_the_same_values_as_the_list_box():
    data = QueryDict("toppings=ham&toppings=cheese&extras=2")
    shown = Toppings(data=data)
    render_form(shown, title="Order", mode="url")
    assert type(shown.fields["toppings"].widget) is forms.CheckboxSelectMultiple
    plain = Toppings(data=data)
    assert shown.is_valid() and plain.is_valid()
    assert shown.cleaned_data == plain.cleaned_data == {"toppings": ["ham", "cheese"], "extras": [2]}
    # The class's own fields are untouched: only this form instance shows checkboxes.
    assert type(Toppings.base_fields["toppings"].widget) is forms.SelectMultiple


@pytest.mark.django_db
def test_a_model_multi_select_is_checkboxes_too():
    from tests.testapp.models import Colour

    red = Colour.objects.create(name="Red", code="#f00")
    Colour.objects.create(name="Blue", code="#00f")

    class Palette(forms.Form):
        palette = forms.ModelMultipleChoiceField(queryset=Colour.objects.all())

    html = render_form(Palette(), title="Palette", mode="app")
    assert re.findall(r'type="checkbox" name="palette" value="(\d+)"', html) == [
        str(pk) for pk in Colour.objects.values_list("pk", flat=True)
    ]
    bound = Palette(data=QueryDict(f"palette={red.pk}"))
    render_form(bound, title="Palette", mode="url")
    assert bound.is_valid() and list(bound.cleaned_data["palette"]) == [red]


def test_a_widget_of_the_projects_own_is_kept():
    class Own(forms.Form):
        picks = forms.MultipleChoiceField(choices=[("a", "A")], widget=ListBox)

    html = render_form(Own(), title="Own", mode="url")
    assert '<select name="picks"' in html and "multiple" in html


# The App outside a host -------------------------------------------------------------------------------------


def test_the_app_says_it_needs_a_host_when_there_is_none(server):
    html = CoreClient(server).result("resources/read", {"uri": "ui://mcpforms/signup"})["contents"][0]["text"]
    notice = parse(html).ids["mcpforms-no-host"]
    assert "hidden" in notice  # shown only when no host answers
    assert notice["role"] == "status"
    assert "This form runs inside an MCP host." in html
    # No parent window at all (a plain tab), or no answer to ui/initialize in time: the form says so and
    # disables its button instead of posting to itself.
    assert "var standalone = window.parent === window;" in html
    assert "setTimeout(withoutHost, 2000)" in html
    assert "if (standalone) { withoutHost(); return; }" in html


def test_the_url_page_has_no_host_notice():
    html = render_form(SignupForm(), title="Sign up", mode="url")
    assert "mcpforms-no-host" not in html
    assert "<script" not in html


# The URL-mode confirmation ---------------------------------------------------------------------------------


class Booking(forms.Form):
    name = forms.CharField()
    password = forms.CharField(widget=forms.PasswordInput)
    room = forms.ChoiceField(choices=[("s", "Single"), ("d", "Double")])
    nights = forms.IntegerField()
    day = forms.DateField()
    extras = forms.MultipleChoiceField(choices=[("bf", "Breakfast"), ("pk", "Parking")], required=False)
    newsletter = forms.BooleanField(required=False)
    notes = forms.CharField(required=False)
    token = forms.CharField(widget=forms.HiddenInput, required=False)


BOOKING = QueryDict(
    "name=Ada&password=hunter2hunter2&room=d&nights=3&day=2027-06-18&extras=bf&extras=pk&token=t0k3n"
)


def test_submitted_values_read_as_the_user_wrote_them_without_secrets():
    form = Booking(data=BOOKING)
    assert form.is_valid()
    assert submitted_values(form) == [
        ("Name", "Ada"),
        ("Room", "Double"),  # the label, not the key
        ("Nights", "3"),
        ("Day", "June 18, 2027"),
        ("Extras", "Breakfast, Parking"),
        ("Newsletter", "No"),
        ("Notes", ""),  # shown as "Not given"
    ]


def test_the_confirmation_page_shows_what_was_sent_and_what_to_do_next():
    form = Booking(data=BOOKING)
    assert form.is_valid()
    result = {
        "content": [{"type": "text", "text": '{"booked": true}'}],
        "structuredContent": {"booked": True},
    }
    html = render_done(form, title="Book a room", result=result)
    assert '<h1 id="mcpforms-title">Submitted.</h1>' in html
    assert "<title>Submitted: Book a room</title>" in html
    assert "<strong>Book a room</strong>" in html
    assert re.search(r"<dt>Room</dt>\s*<dd>Double</dd>", html)
    assert re.search(r"<dt>Notes</dt>\s*<dd><span class=\"empty\">Not given</span></dd>", html)
    assert "You can close this page and return to your assistant." in html
    assert "hunter2" not in html and "Password" not in html and "t0k3n" not in html
    assert "booked" not in html  # the tool's result is written for the model, not shown to the user
    assert "<script" not in html


def test_the_confirmation_template_is_overridable(tmp_path):
    (tmp_path / "mcpforms").mkdir()
    (tmp_path / "mcpforms" / "url_done.html").write_text(
        "{{ title }}: {% for label, text in values %}{{ label }}={{ text }};{% endfor %} {{ result.isError }}"
    )
    templates = [
        {"BACKEND": "django.template.backends.django.DjangoTemplates", "DIRS": [tmp_path], "APP_DIRS": True}
    ]
    form = Booking(data=BOOKING)
    assert form.is_valid()
    with override_settings(TEMPLATES=templates):
        html = render_done(form, title="Book", result={"content": [], "isError": False})
    assert html.startswith("Book: Name=Ada;Room=Double;Nights=3;")
    assert html.endswith(" False")


def test_the_field_and_base_templates_are_overridable(tmp_path):
    (tmp_path / "mcpforms").mkdir()
    (tmp_path / "mcpforms" / "field.html").write_text("[{{ field.name }}]")
    (tmp_path / "mcpforms" / "base.html").write_text("<main>{% block content %}{% endblock %}</main>")
    templates = [
        {"BACKEND": "django.template.backends.django.DjangoTemplates", "DIRS": [tmp_path], "APP_DIRS": True}
    ]
    with override_settings(TEMPLATES=templates):
        html = render_form(SignupForm(), title="Sign up", mode="url")
    assert html.startswith("<main>") and html.endswith("</main>")
    assert "[email][plan][age][newsletter]" in html
