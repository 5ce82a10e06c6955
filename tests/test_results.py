"""What a ModelForm tool's result carries: the pk and the form's own fields, never the rest of the row —
a ``User`` has a password hash — unless the tool asks for more (``result_fields``). The result is what the
model, the host's logs and every stored copy (the completion record, a task, a URL-mode row) keep."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from django import forms
from django.contrib.auth.models import Group, User
from django.test import Client, override_settings

from mcpforms.models import CompletedFlow, UrlElicitation
from mcpforms.protocol.server import Server
from mcpforms.registry import registry_for
from mcpforms.tools import FormTool, tool_class
from tests.core_client import CoreClient, accept, page_path, text
from tests.testapp.models import Colour, Gadget

pytestmark = pytest.mark.django_db

_keys = itertools.count()
# What a User row holds besides the form's fields: none of it may reach a result by default.
HIDDEN = {"password", "is_superuser", "is_staff", "is_active", "last_login", "groups", "user_permissions"}


class ProfileForm(forms.ModelForm):
    class Meta:
        model = User
        fields = ["first_name", "last_name", "email"]


class GadgetForm(forms.ModelForm):
    class Meta:
        model = Gadget
        fields = ["name", "slug", "tags"]


def serve(form_class: type[forms.BaseForm], **options: Any) -> tuple[CoreClient, FormTool]:
    server = Server(key=f"results-{next(_keys)}")
    built = tool_class(form_class, permission=None, **options)()
    registry_for(server).add_tool(built)
    return CoreClient(server), built


def test_an_update_of_a_user_returns_the_pk_and_the_forms_fields_only():
    ada = User.objects.create_user("ada", password="a long secret", is_staff=True, is_superuser=True)
    client, _tool = serve(ProfileForm, name="profile", update=True)
    first = client.call("profile", {"pk": ada.pk})  # an update with no changes: the user confirms it
    done = client.answer(
        first,
        "profile",
        {"pk": ada.pk},
        profile=accept(first_name="Ada", last_name="L", email="ada@example.com"),
    )
    assert done["structuredContent"] == {
        "pk": ada.pk,
        "first_name": "Ada",
        "last_name": "L",
        "email": "ada@example.com",
    }
    assert json.loads(text(done)) == done["structuredContent"]
    stored = CompletedFlow.objects.get().result
    assert HIDDEN.isdisjoint(stored["structuredContent"])
    assert ada.password not in json.dumps(stored)


def test_many_to_many_fields_of_the_form_are_lists_of_pks():
    red = Colour.objects.create(name="Red", code="#f00")
    client, _tool = serve(GadgetForm, name="gadget", ask="never")
    done = client.call("gadget", {"name": "Lamp", "slug": "lamp", "tags": [red.pk]})
    gadget = Gadget.objects.get()
    assert done["structuredContent"] == {"pk": gadget.pk, "name": "Lamp", "slug": "lamp", "tags": [red.pk]}


def test_a_handler_of_its_own_that_returns_the_saved_object_gets_the_same_narrow_result():
    def save(request: Any, form: forms.BaseForm) -> Any:
        return form.save()  # type: ignore[attr-defined]

    client, _tool = serve(ProfileForm, name="signup_user", handler=save, ask="never")
    done = client.call("signup_user", {"first_name": "Bo", "last_name": "B", "email": "bo@example.com"})
    assert set(done["structuredContent"]) == {"pk", "first_name", "last_name", "email"}


def test_result_fields_all_opts_in_to_the_whole_object():
    class GroupForm(forms.ModelForm):
        class Meta:
            model = Group
            fields = ["name"]

    client, _tool = serve(GroupForm, name="group", ask="never", result_fields="__all__")
    done = client.call("group", {"name": "Sales"})
    assert done["structuredContent"] == {"pk": Group.objects.get().pk, "name": "Sales", "permissions": []}


def test_result_fields_names_exactly_what_the_result_carries():
    client, _tool = serve(GadgetForm, name="gadget", ask="never", result_fields=["slug", "stock"])
    done = client.call("gadget", {"name": "Lamp", "slug": "lamp"})
    assert done["structuredContent"] == {"pk": Gadget.objects.get().pk, "slug": "lamp", "stock": 0}


@override_settings(MCPFORMS={"BASE_URL": "http://testserver", "ALLOW_ANONYMOUS": True})
def test_the_url_mode_page_keeps_the_same_narrow_result():
    ada = User.objects.create_user("ada", password="a long secret", is_superuser=True)
    server = Server(key=f"results-{next(_keys)}")
    registry_for(server).add_tool(tool_class(ProfileForm, name="profile", update=True, permission=None)())
    client = CoreClient(server, capabilities={"elicitation": {"url": {}}})
    first = client.call("profile", {"pk": ada.pk})
    page = Client().post(page_path(first, "profile"), {"first_name": "Ada", "last_name": "", "email": ""})
    assert page.status_code == 200
    kept = UrlElicitation.objects.get().result
    assert set(kept["structuredContent"]) == {"pk", "first_name", "last_name", "email"}
