"""The admin as staff use it: define a form and its fields, preview it, browse and export submissions."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest
from django.contrib.admin.utils import flatten_fieldsets
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from mcpforms.admin import FieldDefinitionInline
from mcpforms.models import FieldDefinition, FormDefinition, Submission

pytestmark = pytest.mark.django_db

# The inline's inputs, as the admin posts them.
FIELD_KEYS = flatten_fieldsets(FieldDefinitionInline.fieldsets or [])


@pytest.fixture
def staff() -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("staff", "staff@example.com", "pw"))
    return client


def definition_post(fields: list[dict[str, Any]], **overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "event_rsvp",
        "title": "Event RSVP",
        "description": "Answer the invitation.",
        "message": "Will you come?",
        "ask": "missing",
        "enabled": "on",
        "permission": "",
        "email_to": "",
        "fields-TOTAL_FORMS": str(len(fields)),
        "fields-INITIAL_FORMS": "0",
        "fields-MIN_NUM_FORMS": "1",
        "fields-MAX_NUM_FORMS": "1000",
        **overrides,
    }
    for index, field in enumerate(fields):
        values = {"order": index, "type": "text", **field}
        for key in FIELD_KEYS:
            value = values.get(key, "")
            if isinstance(value, bool):
                if value:
                    data[f"fields-{index}-{key}"] = "on"
            else:
                data[f"fields-{index}-{key}"] = str(value)
    return data


def add(staff: Client, fields: list[dict[str, Any]], **overrides: Any):
    return staff.post(reverse("admin:mcpforms_formdefinition_add"), definition_post(fields, **overrides))


RSVP_FIELDS = [
    {"name": "name", "required": True, "max": 80},
    {"name": "attending", "required": True, "choices": "yes|Yes\nno|No"},
    {"name": "guests", "type": "integer", "min": 0, "max": 5, "default": "0"},
]


def test_staff_create_a_form_with_its_fields_and_see_the_preview(staff):
    response = add(staff, RSVP_FIELDS)
    assert response.status_code == 302, (
        response.context["adminform"].form.errors if response.context else response
    )
    definition = FormDefinition.objects.get()
    assert [f.name for f in definition.fields.all()] == ["name", "attending", "guests"]

    page = staff.get(reverse("admin:mcpforms_formdefinition_change", args=[definition.pk])).content.decode()
    assert "Elicitation schema" in page
    assert "&quot;oneOf&quot;" in page  # the preview shows the derived schema
    assert '<select name="attending"' in page  # and the form rendered by Django
    assert 'name="guests" value="0"' in page


def test_the_changelist_lists_definitions(staff):
    add(staff, RSVP_FIELDS)
    page = staff.get(reverse("admin:mcpforms_formdefinition_changelist")).content.decode()
    assert "event_rsvp" in page


@pytest.mark.parametrize(
    ("fields", "overrides", "where", "message"),
    [
        (RSVP_FIELDS, {"name": "has space"}, "name", "Use 1-64 letters"),
        (RSVP_FIELDS, {"name": "testapp_signup"}, "name", "already the name of a tool defined in code"),
        (RSVP_FIELDS, {"permission": "nodot"}, "permission", "app_label.codename"),
        (
            [{"name": "n", "type": "integer", "min": 5, "max": 1}],
            {},
            "max",
            "Min (5) is greater than max (1)",
        ),
        ([{"name": "c", "choices": "|x"}], {}, "choices", "Line 1 has no value"),
        ([{"name": "c", "choices": "a\na"}], {}, "choices", "appears twice"),
        ([{"name": "d", "type": "date", "default": "tomorrow"}], {}, "default", "YYYY-MM-DD"),
        ([{"name": "c", "choices": "a\nb", "default": "z"}], {}, "default", "one of the choices"),
        ([{"name": "m", "multiple": True}], {}, "choices", "needs choices"),
        ([{"name": "1bad"}], {}, "name", "Python identifier"),
        ([{"name": "dup"}, {"name": "dup"}], {}, None, "Please correct the duplicate"),
        ([], {}, None, "Please submit at least 1 form"),
    ],
)
def test_invalid_definitions_are_admin_form_errors_never_a_broken_tool(
    staff, fields, overrides, where, message
):
    response = add(staff, fields, **overrides)
    assert response.status_code == 200
    assert message in response.content.decode().replace("&#x27;", "'")
    assert FormDefinition.objects.count() == 0
    assert FieldDefinition.objects.count() == 0


def test_a_duplicate_tool_name_is_an_error(staff):
    add(staff, RSVP_FIELDS)
    response = add(staff, RSVP_FIELDS)
    assert "Form definition with this Tool name already exists." in response.content.decode()


def change(staff: Client, definition: FormDefinition, fields: list[dict[str, Any]], **overrides: Any):
    """Post the change form of ``definition``: its saved rows first, in their order, then any new ones."""
    saved = list(definition.fields.all())
    data = definition_post(fields, **overrides)
    data["fields-INITIAL_FORMS"] = str(len(saved))
    for index, field in enumerate(saved):
        data[f"fields-{index}-id"] = str(field.pk)
        data[f"fields-{index}-definition"] = str(definition.pk)
    return staff.post(reverse("admin:mcpforms_formdefinition_change", args=[definition.pk]), data)


def test_editing_in_the_admin_bumps_the_version(staff):
    add(staff, RSVP_FIELDS)
    definition = FormDefinition.objects.get()
    before = definition.version
    response = change(staff, definition, RSVP_FIELDS, title="Summer party")
    assert response.status_code == 302
    definition.refresh_from_db()
    assert definition.title == "Summer party"
    assert definition.version == before + 1


def test_a_new_definition_is_version_1_and_each_save_adds_one_whatever_its_rows(staff):
    assert add(staff, RSVP_FIELDS).status_code == 302  # one definition and three rows: one change
    definition = FormDefinition.objects.get()
    assert definition.version == 1
    page = staff.get(reverse("admin:mcpforms_formdefinition_change", args=[definition.pk])).content.decode()
    assert '<div class="readonly">1</div>' in page

    # One row edited, one deleted, one added: still one save, one new version.
    fields: list[dict[str, Any]] = [
        {**RSVP_FIELDS[0], "label": "Your name"},
        RSVP_FIELDS[1],
        RSVP_FIELDS[2],
        {"name": "note"},
    ]
    response = change(staff, definition, fields, **{"fields-1-DELETE": "on"})
    assert response.status_code == 302
    definition.refresh_from_db()
    assert [field.name for field in definition.fields.all()] == ["name", "guests", "note"]
    assert definition.fields.get(name="name").label == "Your name"
    assert definition.version == 2

    # Saved again with nothing changed: a save is a save (an earlier requestState is refused either way).
    assert change(staff, definition, [RSVP_FIELDS[0], RSVP_FIELDS[2], {"name": "note"}]).status_code == 302
    definition.refresh_from_db()
    assert definition.version == 3


def test_whole_numbers_show_as_typed_never_as_floats(staff):
    fields = [{"name": "name", "max": 100}, {"name": "score", "type": "number", "min": -1.5, "max": 2}]
    assert add(staff, fields).status_code == 302
    definition = FormDefinition.objects.get()
    page = staff.get(reverse("admin:mcpforms_formdefinition_change", args=[definition.pk])).content.decode()
    assert 'name="fields-0-max" value="100"' in page
    assert 'name="fields-1-min" value="-1.5"' in page  # a fraction stays one
    assert 'name="fields-1-max" value="2"' in page
    assert "100.0" not in page  # nor anywhere else, the schema preview included

    # What staff typed is shown back as typed when the form has an error elsewhere.
    response = add(staff, [{"name": "name", "max": "100.0"}], name="has space")
    assert 'name="fields-0-max" value="100.0"' in response.content.decode()


def test_the_inline_fits_a_window_and_an_error_unfolds_the_options_it_is_in(staff):
    response = add(staff, [{"name": "n", "type": "integer", "min": 5, "max": 1}, {"name": "fine"}])
    assert response.status_code == 200
    (inline,) = response.context["inline_admin_formsets"]
    assert inline.opts.template == "admin/edit_inline/stacked.html"
    # Per field: the main fieldset, then "Step" and "More options", folded unless they hold an error. The
    # last form is the empty one "Add another" copies.
    folded = [[fieldset.is_collapsible for fieldset in form] for form in inline]
    assert folded == [[False, True, False], [False, True, True], [False, True, True]]
    page = response.content.decode()
    assert 'id="id_fields-0-max_error"' in page
    assert "mcpforms/admin.css" in page and "mcpforms/admin.js" in page


def submissions(definition: FormDefinition) -> list[Submission]:
    staff_user = User.objects.get(username="staff")
    return [
        Submission.objects.create(
            definition=definition,
            tool_name="event_rsvp",
            data={"name": "Ada", "attending": "yes", "guests": 2},
            user=staff_user,
        ),
        Submission.objects.create(
            definition=definition,
            tool_name="event_rsvp",
            data={"name": "=HYPERLINK(1)", "attending": "no", "diet": ["veg", "vegan"]},
            status="done",
        ),
    ]


def test_submissions_list_filters_searches_and_shows_read_only_data(staff):
    add(staff, RSVP_FIELDS)
    first, second = submissions(FormDefinition.objects.get())
    changelist = reverse("admin:mcpforms_submission_changelist")
    assert "event_rsvp #" in staff.get(changelist).content.decode()
    done_only = staff.get(changelist, {"status__exact": "done"}).context["cl"].result_list
    assert list(done_only) == [second]
    found = staff.get(changelist, {"q": "Ada"}).context["cl"].result_list
    assert list(found) == [first]

    page = staff.get(reverse("admin:mcpforms_submission_change", args=[first.pk])).content.decode()
    expected = json.dumps({"name": "Ada", "attending": "yes", "guests": 2}, indent=2)  # in form order
    assert expected.replace('"', "&quot;") in page
    assert 'name="data"' not in page  # read-only
    assert staff.get(reverse("admin:mcpforms_submission_add")).status_code == 403


def test_csv_export(staff):
    add(staff, RSVP_FIELDS)
    first, second = submissions(FormDefinition.objects.get())
    response = staff.post(
        reverse("admin:mcpforms_submission_changelist"),
        {"action": "export_csv", "_selected_action": [first.pk, second.pk]},
    )
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="submissions.csv"'
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == ["id", "created", "form", "user", "status", "name", "attending", "guests", "diet"]
    assert rows[1][0] == str(first.pk)
    assert rows[1][2:] == ["event_rsvp", "staff", "new", "Ada", "yes", "2", ""]
    # A formula typed by a user stays text in a spreadsheet; lists are joined.
    assert rows[2][2:] == ["event_rsvp", "", "done", "'=HYPERLINK(1)", "no", "", "veg, vegan"]


def test_deleting_a_definition_in_the_admin_removes_the_tool_and_keeps_its_submissions(staff):
    from mcpforms.protocol.server import default_server
    from tests.core_client import CoreClient

    add(staff, RSVP_FIELDS)
    definition = FormDefinition.objects.get()
    (first, _) = submissions(definition)
    assert default_server.tools.get("event_rsvp") is not None
    response = staff.post(
        reverse("admin:mcpforms_formdefinition_delete", args=[definition.pk]), {"post": "yes"}
    )
    assert response.status_code == 302
    assert FormDefinition.objects.count() == 0
    assert FieldDefinition.objects.count() == 0
    names = [tool["name"] for tool in CoreClient(default_server).result("tools/list")["tools"]]
    assert "event_rsvp" not in names
    first.refresh_from_db()
    assert first.definition is None
    assert first.tool_name == "event_rsvp"  # the record outlives the form


def test_a_username_that_reads_as_a_formula_stays_text_in_the_csv(staff):
    add(staff, RSVP_FIELDS)
    first, _ = submissions(FormDefinition.objects.get())
    first.user = User.objects.create_user("=cmd|'/c calc'!A1")
    first.save()
    response = staff.post(
        reverse("admin:mcpforms_submission_changelist"),
        {"action": "export_csv", "_selected_action": [first.pk]},
    )
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[1][3] == "'=cmd|'/c calc'!A1"


def test_staff_typed_strings_render_as_text_in_every_preview_and_page(staff):
    script = "<script>alert('x')</script>"
    fields = [{"name": "name", "required": True, "help_text": script, "label": script, "placeholder": script}]
    assert add(staff, fields).status_code == 302
    definition = FormDefinition.objects.get()
    page = staff.get(reverse("admin:mcpforms_formdefinition_change", args=[definition.pk])).content.decode()
    assert script not in page  # Django's form template prints help_text |safe: ours escapes anyway
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page

    from mcpforms.protocol.server import default_server
    from tests.core_client import APPS, CoreClient

    (content,) = CoreClient(default_server, capabilities=APPS).result(
        "resources/read", {"uri": "ui://mcpforms/event_rsvp"}
    )["contents"]
    assert script not in content["text"]
    # The text itself reaches the assistant as written: escaping is for HTML only.
    schema = CoreClient(default_server).call("event_rsvp", {})["inputRequests"]["event_rsvp"]["params"]
    assert schema["requestedSchema"]["properties"]["name"]["description"] == script
