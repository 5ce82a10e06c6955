from __future__ import annotations

import datetime
import math
from typing import Any

import pytest
from django import forms
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpforms.answers import (
    InputResponse,
    accepted_form_input,
    accepted_value,
    input_response,
    validate_with_form,
)
from mcpforms.fields import AutoFormField, Option, fields_for_form
from mcpforms.schema import form_mode_fields
from tests.forms import CustomisedForm, PrefixedForm, SignupForm
from tests.testapp.models import Colour, Gadget

SIGNUP = fields_for_form(SignupForm)


def answer(content: Any, action: str = "accept", key: str = "form") -> dict[str, Any]:
    return {key: {"action": action, "content": content}}


@pytest.mark.parametrize(
    ("responses", "expected"),
    [
        (answer({"a": 1}), InputResponse("accept", {"a": 1})),
        ({"form": {"action": "accept"}}, InputResponse("accept", None)),
        (answer({"a": 1}, "decline"), InputResponse("decline", None)),
        ({"form": {"action": "cancel"}}, InputResponse("cancel", None)),
        (None, None),
        ([], None),
        ("form", None),
        ({}, None),
        ({"other": {"action": "accept"}}, None),
        ({"form": 12345}, None),
        ({"form": "accept"}, None),
        ({"form": {"action": "maybe"}}, None),
        ({"form": {"action": ["accept"]}}, None),
        ({"form": {"content": {}}}, None),
        (answer(["not", "a", "dict"]), None),
        (answer("text"), None),
    ],
)
def test_input_response(responses, expected):
    assert input_response(responses, "form") == expected


def test_accepted_form_input_keeps_valid_values_and_drops_the_rest():
    content = {
        "email": "ada@example.com",
        "plan": "team",
        "age": 200,  # outside 18-120
        "newsletter": "yes",  # wrong type
        "is_admin": True,  # never asked
    }
    assert accepted_form_input(answer(content), "form", SIGNUP) == {
        "email": "ada@example.com",
        "plan": "team",
    }


@pytest.mark.parametrize(
    "content",
    [
        {"plan": "pro"},  # email missing
        {"email": "not-an-email", "plan": "pro"},
        {"email": "ada@example.com", "plan": "enterprise"},  # never offered
        {"email": "ada@example.com", "plan": ["pro"]},
        {"email": 5, "plan": "pro"},
    ],
)
def test_a_missing_or_invalid_required_value_fails_the_whole_answer(content):
    assert accepted_form_input(answer(content), "form", SIGNUP) is None


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_declined_and_cancelled_are_none(action):
    assert accepted_form_input(answer({"email": "a@b.co", "plan": "pro"}, action), "form", SIGNUP) is None


def test_accept_without_content_is_none():
    assert accepted_form_input({"form": {"action": "accept"}}, "form", SIGNUP) is None


def test_only_the_named_key_counts():
    responses = answer({"email": "a@b.co", "plan": "pro"}, key="other")
    assert accepted_form_input(responses, "form", SIGNUP) is None


@pytest.mark.parametrize(
    ("field", "value", "accepted"),
    [
        (AutoFormField("n", type="integer", min=1, max=3), 2, 2),
        (AutoFormField("n", type="integer"), 2.0, 2),
        (AutoFormField("n", type="integer"), 2.5, None),
        (AutoFormField("n", type="integer"), True, None),
        (AutoFormField("n", type="number", min=0.5), 0.25, None),
        (AutoFormField("n", type="number"), math.inf, None),
        (AutoFormField("n", type="number"), math.nan, None),
        (AutoFormField("n", type="number"), "3", None),
        (AutoFormField("n", type="range", max=10), 10, 10),
        (AutoFormField("b", type="checkbox"), False, False),
        (AutoFormField("b", type="boolean"), 0, None),
        (AutoFormField("s", min=2, max=3), "a", None),
        (AutoFormField("s", min=2, max=3), "abcd", None),
        (AutoFormField("s", min=2, max=3), "abc", "abc"),
        (AutoFormField("s", type="textarea"), None, None),
        (AutoFormField("u", type="url"), "https://example.com/x", "https://example.com/x"),
        (AutoFormField("u", type="url"), "javascript:alert(1)", None),
        (AutoFormField("d", type="date"), "2026-02-30", None),
        (AutoFormField("d", type="date"), "2026-02-28", "2026-02-28"),
        (AutoFormField("d", type="datetime"), "2026-02-28T10:00:00Z", "2026-02-28T10:00:00Z"),
        (AutoFormField("d", type="datetime"), "yesterday", None),
        (AutoFormField("m", options=(Option("a"), Option("b")), multiple=True), ["a", "a", "b"], ["a", "b"]),
        (AutoFormField("m", options=(Option("a"), Option("b")), multiple=True, min=2), ["a", "a"], None),
        (AutoFormField("m", options=(Option("a"), Option("b")), multiple=True, max=1), ["a", "b"], None),
        (AutoFormField("m", options=(Option("a"),), multiple=True), ["a", "z"], None),
        (AutoFormField("m", options=(Option("a"),), multiple=True), "a", None),
        (AutoFormField("m", options=(Option("a"),), multiple=True), [], []),
    ],
)
def test_accepted_value(field, value, accepted):
    expected = {} if accepted is None else {field.name: accepted}
    assert accepted_form_input(answer({field.name: value}), "form", [field]) == expected
    if accepted is not None:
        assert accepted_value(field, value) == accepted


def test_password_and_file_values_are_never_taken_from_form_mode():
    fields = [
        AutoFormField("pw", type="password"),
        AutoFormField("doc", type="file"),
        AutoFormField("h", type="hidden"),
    ]
    assert accepted_form_input(answer({"pw": "hunter2", "doc": "x", "h": "y"}), "form", fields) == {}


# ---- hypothesis: untrusted JSON never breaks accepted_form_input --------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)

FIELDS = [
    AutoFormField("email", type="email", required=True, max=40),
    AutoFormField("plan", options=(Option("pro", "Pro"), Option("team", "Team")), required=True),
    AutoFormField("age", type="integer", min=18, max=120),
    AutoFormField("score", type="number", min=-1.5, max=1.5),
    AutoFormField("ok", type="boolean"),
    AutoFormField("tags", options=(Option("a"), Option("b"), Option("c")), multiple=True, min=1, max=2),
    AutoFormField("note", type="textarea", min=1, max=5),
    AutoFormField("day", type="date"),
    AutoFormField("secret", type="password"),
]
field_values = {
    "email": st.emails() | json_values,
    "plan": st.sampled_from(["pro", "team", "free"]) | json_values,
    "age": st.integers(0, 200) | st.floats() | json_values,
    "score": st.floats() | st.integers(-3, 3) | json_values,
    "ok": st.booleans() | json_values,
    "tags": st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=4) | json_values,
    "note": st.text(max_size=8) | json_values,
    "day": st.dates().map(datetime.date.isoformat) | json_values,
    "secret": json_values,
}
contents = st.fixed_dictionaries({}, optional=field_values) | json_values
responses = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {
            "form": st.fixed_dictionaries(
                {"action": st.sampled_from(["accept", "decline", "cancel", "x"]) | json_values},
                optional={"content": contents},
            )
        }
    ),
)


def _conforms(field: AutoFormField, value: Any) -> bool:
    """An independent reading of the schema each field advertises."""
    low = -math.inf if field.min is None else field.min
    high = math.inf if field.max is None else field.max
    if field.options:
        offered = {o.value for o in field.options}
        if field.multiple:
            return isinstance(value, list) and set(value) <= offered and low <= len(value) <= high
        return value in offered
    if field.type == "boolean":
        return type(value) is bool
    if field.type in ("integer", "number"):
        return type(value) in (int, float) and math.isfinite(value) and low <= value <= high
    if not isinstance(value, str):
        return False
    if field.type == "date":
        datetime.date.fromisoformat(value)
    if field.type == "email":
        return "@" in value and len(value) <= high
    return low <= len(value) <= high


@settings(max_examples=400, deadline=None)
@given(responses)
def test_accepted_form_input_never_raises_and_never_returns_a_value_outside_the_schema(responses):
    accepted = accepted_form_input(responses, "form", FIELDS)
    if accepted is None:
        return
    by_name = {f.name: f for f in form_mode_fields(FIELDS)}
    assert set(accepted) <= set(by_name)
    assert {"email", "plan"} <= set(accepted)
    for name, value in accepted.items():
        assert _conforms(by_name[name], value), (name, value)


@settings(max_examples=200, deadline=None)
@given(json_values, st.text(max_size=5))
def test_input_response_never_raises(responses, key):
    result = input_response(responses, key)
    assert result is None or result.action in ("accept", "decline", "cancel")


# ---- the Django form has the last word ---------------------------------------------------------------


def test_validate_with_form_returns_cleaned_data():
    outcome = validate_with_form(SignupForm, {"email": "ada@example.com", "plan": "pro", "newsletter": True})
    assert outcome.is_valid
    assert outcome.cleaned_data == {
        "email": "ada@example.com",
        "plan": "pro",
        "age": None,
        "newsletter": True,
    }


def test_validate_with_form_reports_djangos_messages_per_field():
    outcome = validate_with_form(SignupForm, {"email": "ada@example.invalid", "age": 12})
    assert not outcome.is_valid
    assert outcome.errors == {
        "email": ["That domain does not receive mail."],
        "plan": ["This field is required."],
        "age": ["Ensure this value is greater than or equal to 18."],
    }


def test_validate_with_form_runs_init_customisations():
    assert validate_with_form(CustomisedForm, {"plan": "pro"}).is_valid
    assert validate_with_form(CustomisedForm, {"plan": "free"}).errors == {
        "plan": ["Select a valid choice. free is not one of the available choices."]
    }


def test_validate_with_form_handles_prefixes_and_split_datetimes():
    outcome = validate_with_form(PrefixedForm, {"name": "Ada", "when": "2026-03-04T05:06:00"})
    assert outcome.is_valid, outcome.errors
    assert outcome.cleaned_data["when"] == datetime.datetime(2026, 3, 4, 5, 6, tzinfo=datetime.UTC)


def test_validate_with_form_passes_initial_and_files():
    class Upload(forms.Form):
        doc = forms.FileField()
        note = forms.CharField(required=False)

    outcome = validate_with_form(
        Upload, {}, files={"doc": SimpleUploadedFile("a.txt", b"hi")}, initial={"note": "x"}
    )
    assert outcome.is_valid
    assert outcome.cleaned_data["doc"].name == "a.txt"
    assert outcome.form.initial == {"note": "x"}


@pytest.mark.django_db
def test_validate_with_form_keeps_model_uniqueness_and_updates_instances():
    form_class = forms.modelform_factory(Gadget, fields=["name", "slug", "stock"])
    first = validate_with_form(form_class, {"name": "Lamp", "slug": "lamp", "stock": 3})
    assert first.is_valid
    first.form.save()  # type: ignore[attr-defined]
    again = validate_with_form(form_class, {"name": "Lamp", "slug": "lamp2", "stock": 1})
    assert again.errors == {"name": ["Gadget with this Name already exists."]}
    lamp = Gadget.objects.get()
    update = validate_with_form(form_class, {"name": "Lamp", "slug": "lamp", "stock": 9}, instance=lamp)
    assert update.is_valid
    update.form.save()  # type: ignore[attr-defined]
    assert Gadget.objects.get().stock == 9


@pytest.mark.django_db
def test_model_choice_answers_bind_to_instances():
    red = Colour.objects.create(name="Red", code="#f00")
    form_class = forms.modelform_factory(Gadget, fields=["name", "slug", "colour", "tags"])
    outcome = validate_with_form(
        form_class, {"name": "Pen", "slug": "pen", "colour": str(red.pk), "tags": [str(red.pk)]}
    )
    assert outcome.is_valid, outcome.errors
    assert outcome.cleaned_data["colour"] == red
    assert list(outcome.cleaned_data["tags"]) == [red]


@pytest.mark.parametrize(
    ("field", "value", "accepted"),
    [
        (AutoFormField("n", type="integer", min=18), 18, 18),
        (AutoFormField("n", type="integer", min=18), 17, None),
        (AutoFormField("n", type="integer", min=18), -5, None),
        (AutoFormField("n", type="integer", max=120), 120, 120),
        (AutoFormField("n", type="integer", max=120), 121, None),
        (AutoFormField("n", type="integer", min=0), 0, 0),
        (AutoFormField("n", type="integer", min=0), -1, None),
        (AutoFormField("n", type="number", max=0), 0.5, None),
        (AutoFormField("n", type="number", min=0.5), 0.5, 0.5),
        (AutoFormField("n", type="number", min=0.5), 0.49, None),
        (AutoFormField("n", type="number", min=0.5), 1, 1),
        (AutoFormField("s", max=0), "a", None),
        (AutoFormField("m", options=(Option("a"), Option("b")), multiple=True, min=1), [], None),
        (AutoFormField("m", options=(Option("a"), Option("b")), multiple=True, max=0), ["a"], None),
    ],
)
def test_bounds_are_inclusive_and_a_bound_of_zero_or_a_fraction_is_enforced(field, value, accepted):
    expected = {} if accepted is None else {field.name: accepted}
    assert accepted_form_input(answer({field.name: value}), "form", [field]) == expected


def test_an_age_below_the_forms_minimum_is_not_accepted():
    content = {"email": "ada@example.com", "plan": "pro", "age": 17}
    assert accepted_form_input(answer(content), "form", SIGNUP) == {"email": "ada@example.com", "plan": "pro"}
    content["age"] = 18
    assert accepted_form_input(answer(content), "form", SIGNUP) == content


@pytest.mark.parametrize("kind", ["integer", "number", "range"])
def test_an_integer_too_large_for_a_float_never_raises(kind):
    fields = [AutoFormField("n", type=kind, max=10)]
    responses = {"k": {"action": "accept", "content": {"n": 10**400}}}
    assert accepted_form_input(responses, "k", fields) == {}  # out of bounds: dropped, not an OverflowError
    unbounded = [AutoFormField("n", type=kind)]
    assert accepted_form_input(responses, "k", unbounded) == {"n": 10**400}


class TextFieldsForm(forms.Form):
    """Fields whose Django cleaning reads text (str.strip()), as every value a browser posts is."""

    day = forms.DateField(required=False)
    moment = forms.DateTimeField(required=False)
    at = forms.TimeField(required=False)
    address = forms.GenericIPAddressField(required=False)
    payload = forms.JSONField(required=False)
    agree = forms.BooleanField(required=False)


@pytest.mark.parametrize("value", [True, 5, int("9" * 400), 2.5, [1], {"a": 1}])
@pytest.mark.parametrize("name", ["day", "moment", "at", "address"])
def test_a_json_value_of_another_type_is_the_fields_error_not_a_crash(name, value):
    # A client's JSON can put a number where Django reads a date: it is that field's error, as the text
    # a browser would post ("5") is. It once raised AttributeError ('int' object has no attribute 'strip').
    outcome = validate_with_form(TextFieldsForm, {name: value})
    assert list(outcome.errors) == [name] and "valid" in outcome.errors[name][0]


def test_json_booleans_and_structures_reach_the_fields_that_read_them():
    outcome = validate_with_form(
        TextFieldsForm, {"payload": {"a": [1, None]}, "agree": True, "day": "2026-01-02"}
    )
    assert outcome.is_valid, outcome.errors
    assert outcome.cleaned_data["payload"] == {"a": [1, None]} and outcome.cleaned_data["agree"] is True
    assert outcome.cleaned_data["day"] == datetime.date(2026, 1, 2)


class PaintForm(forms.Form):
    colour = forms.ModelChoiceField(queryset=Colour.objects.all())
    palette = forms.ModelMultipleChoiceField(queryset=Colour.objects.all(), required=False)


HUGE = int("9" * 400)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("values", "refused"),
    [
        ({"colour": HUGE}, "colour"),
        ({"colour": str(HUGE)}, "colour"),
        ({"colour": -(2**63) - 1}, "colour"),
        ({"palette": [HUGE]}, "palette"),
        ({"palette": ["1", str(2**63)]}, "palette"),
    ],
)
def test_a_key_no_database_holds_is_an_invalid_choice_not_a_crash(values, refused):
    red = Colour.objects.create(name="Red", code="#f00")
    outcome = validate_with_form(PaintForm, {"colour": red.pk} | values)
    assert list(outcome.errors) == [refused]
    assert "valid choice" in outcome.errors[refused][0]
    # The largest key a database holds is still looked up, and simply not found.
    assert list(validate_with_form(PaintForm, {"colour": 2**63 - 1}).errors) == ["colour"]


class KeysForm(forms.Form):
    palette = forms.ModelMultipleChoiceField(
        queryset=Colour.objects.all(),
        required=False,
        error_messages={"invalid_choice": "No colour has the key %(value)s."},
    )


# Where SQLite overflows, mcpforms names the culprit; elsewhere Django's own lookup names the first key it
# did not find, which is the same one when its neighbours exist, and is "+1" itself below.
ONLY_ON_SQLITE = pytest.mark.skipif(connection.vendor != "sqlite", reason="Django names '+1' elsewhere")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("palette", "named"),
    [
        pytest.param(["1", str(2**63)], "9223372036854775808", id="past-the-top"),
        pytest.param(["+1", str(2**63)], "9223372036854775808", id="signed-neighbour", marks=ONLY_ON_SQLITE),
        pytest.param([str(2**63 - 1), str(2**63)], "9223372036854775808", id="largest-neighbour"),
        pytest.param([str(-(2**63)), str(-(2**63) - 1)], "-9223372036854775809", id="past-the-bottom"),
        pytest.param([HUGE], str(HUGE), id="huge"),
    ],
)
def test_a_key_no_database_holds_is_named_in_the_fields_own_invalid_choice_message(palette, named):
    # The user is told which pick is wrong (not its neighbour, not the whole list), in the form's words.
    for key in (1, 2**63 - 1, -(2**63)):  # the neighbours exist: only the culprit is not found
        Colour.objects.create(pk=key, name=f"colour {key}", code=f"#{key % 999_999:06}")
    outcome = validate_with_form(KeysForm, {"palette": palette})
    assert outcome.errors == {"palette": [f"No colour has the key {named}."]}
    assert outcome.form.has_error("palette", code="invalid_choice")


@pytest.mark.django_db
def test_a_key_past_64_bits_in_other_digits_is_an_invalid_choice_not_a_crash():
    # int() reads Arabic-Indic digits as a number, and SQLite overflows on it as on ASCII digits.
    outcome = validate_with_form(KeysForm, {"palette": ["\u0661" * 20]})
    assert list(outcome.errors) == ["palette"]
    assert outcome.form.has_error("palette", code="invalid_choice")


def test_a_number_past_a_double_for_a_float_field_is_that_fields_error_not_a_crash():
    class PriceForm(forms.Form):
        price = forms.FloatField(required=False)

    # An unbounded number field accepts any JSON integer; Django's float() of one past 1.8e308 overflows.
    outcome = validate_with_form(PriceForm, {"price": 10**400})
    assert outcome.errors == {"price": ["Enter a number."]}
    # The bound form a page shows again carries Django's own code for it.
    assert [error.code for error in outcome.form.errors.as_data()["price"]] == ["invalid"]


def test_a_field_of_no_kind_that_overflows_says_its_value_is_not_valid():
    class RatioField(forms.Field):
        def to_python(self, value: Any) -> float:
            return float(value)  # an integer past a double overflows

    class RatioForm(forms.Form):
        ratio = RatioField()

    outcome = validate_with_form(RatioForm, {"ratio": 10**400})
    assert outcome.errors == {"ratio": ["Enter a valid value."]}


class TagsField(forms.Field):
    """Several free-text values, posted as a ``<select multiple>`` posts them."""

    widget = forms.SelectMultiple

    def to_python(self, value: Any) -> list[str]:
        return [str(item) for item in value or ()]


class TaggedForm(forms.Form):
    tags = TagsField(required=False)


def test_a_field_whose_widget_posts_several_values_gets_the_list():
    outcome = validate_with_form(TaggedForm, {"tags": ["red", "blue"]})
    assert outcome.cleaned_data == {"tags": ["red", "blue"]}


class OneValueForm(forms.Form):
    colour = forms.ChoiceField(choices=[("red", "Red")], required=False)
    note = forms.CharField(required=False)


@pytest.mark.parametrize(("value", "quoted"), [(["red"], '["red"]'), ({"pick": "red"}, '{"pick": "red"}')])
def test_a_structure_for_a_field_of_one_value_is_refused_quoting_its_json(value, quoted):
    # The model reads back what it sent, as JSON, in Django's own message.
    outcome = validate_with_form(OneValueForm, {"colour": value})
    assert outcome.errors == {
        "colour": [f"Select a valid choice. {quoted} is not one of the available choices."]
    }


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ([datetime.date(2026, 1, 2)], '["2026-01-02"]'),
        ({"on": datetime.date(2026, 1, 2)}, '{"on": "2026-01-02"}'),
    ],
)
def test_a_python_value_inside_a_structure_is_bound_as_its_text(value, text):
    # validate_with_form is public: a caller's own values (a date in a list) bind, they do not raise.
    assert validate_with_form(OneValueForm, {"note": value}).cleaned_data["note"] == text


def test_an_invalid_outcome_keeps_the_bound_form_to_show_it_again():
    outcome = validate_with_form(SignupForm, {"email": "ada@example.com"})
    assert not outcome.is_valid
    assert outcome.form.is_bound
    assert outcome.form.errors["plan"] == ["This field is required."]
