"""The system checks of a form tool's options (``mcpforms.tool_checks``): one per id, each with the valid
choices in its hint; a bad option never raises at registration, and its tool is never served."""

from __future__ import annotations

from typing import Any

import pytest
from django import forms
from django.core.checks import Error
from django.test import override_settings

from mcpforms.protocol.server import Server
from mcpforms.registry import check_form_tools, register, registry_for
from mcpforms.tool_checks import FormToolChecks
from mcpforms.tools import FormTool
from tests.core_client import CoreClient
from tests.forms import SignupForm
from tests.test_setup_checks import NO_URLS, check
from tests.testapp.models import Colour


class Odd(forms.Field):
    pass


class OddForm(forms.Form):
    odd = Odd()


class ColourForm(forms.ModelForm):
    class Meta:
        model = Colour
        fields = ["name"]


class PasswordForm(forms.Form):
    user = forms.CharField()
    password = forms.CharField(widget=forms.PasswordInput)


def messages(form: type[forms.BaseForm] | type[FormTool], **options: Any) -> list[Any]:
    """What ``manage.py check`` says of the one tool registered on a server of its own."""
    server = Server()
    register(form, server=server, **options)
    ours = list(registry_for(server).tools.values())
    return [message for message in check_form_tools() if message.obj in ours]


def test_a_tool_with_good_options_passes():
    assert messages(SignupForm, ask="always", path="url", scope="forms.read forms.write") == []
    assert messages(SignupForm, approval="auth.change_user") == []
    assert messages(SignupForm, approval=lambda approver, task: approver.is_superuser) == []


@pytest.mark.parametrize(
    ("form", "options", "id", "message", "hint"),
    [
        (
            SignupForm,
            {"ask": "sometimes"},
            "mcpforms.E401",
            "ask='sometimes' is not one of missing, always, never.",
            "Valid choices: 'missing', 'always', 'never'.",
        ),
        (
            SignupForm,
            {"path": "web"},
            "mcpforms.E402",
            "path='web' is not one of auto, form, url.",
            "Valid choices: 'auto', 'form', 'url'.",
        ),
        (
            SignupForm,
            {"scope": "two  spaces"},
            "mcpforms.E403",
            "scope='two  spaces' must be OAuth scope names separated by single spaces",
            "Valid choices: None, or names such as 'billing'",
        ),
        (
            SignupForm,
            {"update": True},
            "mcpforms.E404",
            "update=True needs a ModelForm; SignupForm is not one.",
            "Valid choices: update=False, or a forms.ModelForm as form_class.",
        ),
        (
            OddForm,
            {},
            "mcpforms.E405",
            "OddForm.odd: Odd has no mapping; register one with mcpforms.fields.register_converter",
            "Valid choices: the field classes of the field table at https://mcpforms.readthedocs.io/en/latest/"
            "reference/fields.html",
        ),
        (
            SignupForm,
            {"approval": "approve_everything"},
            "mcpforms.E407",
            "approval='approve_everything' must be a permission ('app_label.codename') or a callable",
            "Valid choices: None, 'billing.approve_refund', or a function.",
        ),
        (
            PasswordForm,
            {"approval": "auth.change_user"},
            "mcpforms.E408",
            "approval= cannot be set on PasswordForm: its fields password (passwords or files) would wait",
            "Leave those fields out of the form that needs approval.",
        ),
        (
            ColourForm,
            {"result_fields": ["name", "password"]},
            "mcpforms.E418",
            "result_fields=['name', 'password']: password is no field of Colour.",
            "Valid choices: None (the pk and the form's fields), '__all__', or a list of the model's",
        ),
        (
            ColourForm,
            {"result_fields": "name"},
            "mcpforms.E418",
            "result_fields='name': it must be a list of field names.",
            "Valid choices: None (the pk and the form's fields), '__all__'",
        ),
        (
            SignupForm,
            {"approval": "auth.change_user", "path": "url"},
            "mcpforms.E409",
            "approval= cannot be set with path='url': every call would go to the URL-mode page, which "
            "answers a person, so no client could follow the approval request as a task.",
            "Valid choices: path='auto' or path='form'",
        ),
    ],
)
def test_each_bad_option_is_an_error_with_its_id_and_the_valid_choices(form, options, id, message, hint):
    (error,) = messages(form, **options)
    assert isinstance(error, Error)
    assert error.id == id
    assert error.msg.startswith(message)
    assert hint in str(error.hint)
    assert isinstance(error.obj, FormTool)  # Django prints the tool with its name before the message


def test_e406_a_form_with_more_fields_than_the_limit():
    wide = type("WideForm", (forms.Form,), {f"field_{n}": forms.CharField() for n in range(3)})
    with override_settings(MCPFORMS={"MAX_FORM_FIELDS": 3}):
        assert messages(wide) == []
    with override_settings(MCPFORMS={"MAX_FORM_FIELDS": 2}):
        (error,) = messages(wide)
    assert error.id == "mcpforms.E406"
    assert "at most MCPFORMS['MAX_FORM_FIELDS'] fields" in str(error.hint)


def test_a_formtool_subclass_is_checked_as_its_options_are():
    class Sometimes(FormTool):
        form_class = SignupForm
        ask = "sometimes"  # type: ignore[assignment]

    assert [error.id for error in messages(Sometimes)] == ["mcpforms.E401"]


def test_a_subclass_may_check_options_of_its_own():
    class Checks(FormToolChecks):
        def check(self, tool: Any, **kwargs: Any) -> list[Any]:
            return [*super().check(tool), Error("No Mondays.", obj=tool, id="myapp.E001")]

    class Picky(FormTool):
        form_class = SignupForm
        checks_class = Checks

    assert [error.id for error in messages(Picky)] == ["myapp.E001"]


def test_a_tool_that_fails_its_checks_is_not_served(caplog):
    server = Server()
    register(SignupForm, server=server, name="good")
    register(SignupForm, server=server, name="bad", ask="sometimes")  # type: ignore[arg-type]
    client = CoreClient(server)
    assert [tool["name"] for tool in client.result("tools/list")["tools"]] == ["good"]
    assert "'bad' cannot be listed" in caplog.text
    assert "mcpforms.E401" in caplog.text
    assert client.send("tools/call", {"name": "bad", "arguments": {}})["error"]["code"] == -32603


MCP_TOOLS = """
from django import forms

import mcpforms


class NoteForm(forms.Form):
    text = forms.CharField()


mcpforms.register(NoteForm, ask="sometimes")
"""


def test_manage_py_check_fails_on_a_bad_option(tmp_path):
    """The check is registered with Django, and a bad option does not stop the project from starting."""
    app = tmp_path / "notes"
    app.mkdir()
    (app / "__init__.py").write_text("")
    (app / "mcp_tools.py").write_text(MCP_TOOLS)
    output = check(tmp_path, extra_apps=["notes"], mcpforms={}, urls=NO_URLS)
    assert (
        "<NoteFormTool 'note'>: (mcpforms.E401) ask='sometimes' is not one of missing, always, never."
        in output
    )
    assert "HINT: Valid choices: 'missing', 'always', 'never'." in output
    assert "SystemCheckError" in output  # manage.py check exits non-zero on an error
