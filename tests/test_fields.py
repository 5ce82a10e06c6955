from __future__ import annotations

import datetime

import pytest
from django import forms
from django.core.checks import run_checks
from django.core.validators import (
    MaxLengthValidator,
    MaxValueValidator,
    MinLengthValidator,
    MinValueValidator,
)
from django.test import override_settings

import mcpforms.fields as fields
from mcpforms.fields import (
    AutoFormField,
    FormConversionError,
    Option,
    auto_field_from_form_field,
    fields_for_form,
    fields_for_model,
    register_converter,
)
from tests.forms import CustomisedForm, EveryFieldForm, SignupForm
from tests.testapp.models import Colour, Gadget


@pytest.fixture
def colours(db):
    return [
        Colour.objects.create(name="Red", code="#f00"),
        Colour.objects.create(name="Green", code="#0f0"),
    ]


@pytest.fixture
def every(colours) -> dict[str, AutoFormField]:
    return {field.name: field for field in fields_for_form(EveryFieldForm)}


def test_fields_keep_form_order(every):
    assert list(every) == list(EveryFieldForm.base_fields)


def test_char_field_reads_lengths_help_text_and_initial(every):
    assert every["char"] == AutoFormField(
        name="char",
        label="Char",
        type="text",
        required=True,
        min=2,
        max=20,
        description="Some text",
        default="hello",
    )


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("secret", "password"),
        ("essay", "textarea"),
        ("email", "email"),
        ("website", "url"),
        ("slug", "text"),
        ("postcode", "text"),
        ("count", "integer"),
        ("ratio", "number"),
        ("price", "number"),
        ("agree", "boolean"),
        ("day", "date"),
        ("moment", "datetime"),
        ("split_moment", "datetime"),
        ("at", "time"),
        ("upload", "file"),
        ("picture", "file"),
        ("token", "hidden"),
        ("ident", "text"),
        ("address", "text"),
        ("wait", "text"),
        ("payload", "text"),
    ],
)
def test_each_field_class_maps_to_its_type(every, name, kind):
    assert every[name].type == kind
    assert not every[name].options


def test_bounds_come_from_arguments_and_validators(every):
    assert (every["essay"].min, every["essay"].max) == (None, 500)
    assert (every["postcode"].min, every["postcode"].max) == (None, 4)
    assert (every["count"].min, every["count"].max) == (1, 10)
    assert (every["ratio"].min, every["ratio"].max) == (0.5, None)
    assert (every["price"].min, every["price"].max) == (0.5, 99)
    assert isinstance(every["price"].max, int)


def test_tightest_validator_wins():
    class Tight(forms.Form):
        n = forms.IntegerField(
            min_value=1, max_value=100, validators=[MinValueValidator(5), MaxValueValidator(50)]
        )

    (field,) = fields_for_form(Tight)
    assert (field.min, field.max) == (5, 50)


def test_callable_limits_are_called():
    class Form(forms.Form):
        n = forms.IntegerField(validators=[MaxValueValidator(lambda: 7)])

    assert fields_for_form(Form)[0].max == 7


def test_choices_keep_labels_flatten_groups_and_drop_the_empty_choice(every):
    assert every["size"].options == (Option("s", "Small"), Option("l", "Large"), Option("xl", "Huge"))
    assert every["size"].default == "s"
    assert not every["size"].multiple
    assert every["typed"].options == (Option("1", "One"), Option("2", "Two"))


def test_file_path_field_lists_files(every):
    values = {option.value for option in every["path"].options}
    assert any(value.endswith("models.py") for value in values)


def test_multiple_choice_fields_are_multi_selects(every):
    assert every["toppings"].multiple
    assert every["toppings"].default == ["egg"]
    assert [o.value for o in every["toppings"].options] == ["ham", "egg", "cheese"]
    assert every["numbers"].multiple
    assert every["numbers"].options == (Option("1", "One"), Option("2", "Two"))


def test_model_choices_use_pk_or_to_field_name_and_the_instance_label(every, colours):
    green, red = sorted(colours, key=lambda c: c.name)
    assert every["colour"].options == (Option(str(green.pk), "Green"), Option(str(red.pk), "Red"))
    assert every["colour_by_code"].options == (Option("#0f0", "Green"), Option("#f00", "Red"))
    assert every["palette"].multiple
    assert len(every["palette"].options) == 2


def test_model_choices_over_the_cap_become_plain_text_with_one_warning(colours, caplog):
    fields._grown.clear()
    with override_settings(MCPFORMS={"MAX_MODEL_CHOICES": 1}):
        converted = {auto.name: auto for auto in fields_for_form(EveryFieldForm)}
        fields_for_form(EveryFieldForm)  # read again: told once
    assert converted["colour"].type == "text" and converted["colour"].options == ()
    assert converted["palette"].multiple and converted["palette"].options == ()
    told = [record.getMessage() for record in caplog.records if "MAX_MODEL_CHOICES" in record.getMessage()]
    assert [message.split(" has ")[0] for message in told] == [
        "A ModelChoiceField over testapp.Colour",
        "A ModelMultipleChoiceField over testapp.Colour",
    ]


@pytest.mark.parametrize("malformed", ["many", None, True, 0])
def test_a_malformed_choice_limit_is_reported_by_its_check_not_by_a_crash(colours, malformed):
    with override_settings(MCPFORMS={"MAX_MODEL_CHOICES": malformed}):
        converted = {auto.name: auto for auto in fields_for_form(EveryFieldForm)}
        reported = {message.id for message in run_checks()}
    assert len(converted["colour"].options) == 2  # the default limit holds meanwhile
    assert "mcpforms.E002" in reported


def test_null_boolean_offers_true_false_unknown(every):
    assert [o.value for o in every["maybe"].options] == ["true", "false", "unknown"]
    assert every["maybe"].default == "false"


def test_initial_values_become_json_defaults(every):
    assert every["count"].default == 3
    assert every["price"].default == 2.5
    assert every["agree"].default is True
    assert every["day"].default == "2026-01-02"
    assert every["moment"].default == "2026-01-02T03:04:00+00:00"
    assert every["at"].default == "09:30:00"
    assert every["token"].default == "abc"


def test_label_placeholder_and_humanized_names(every):
    assert every["nickname"].label == "Nick"
    assert every["nickname"].placeholder == "e.g. Ada"
    assert every["split_moment"].label == "Split moment"


def test_required_follows_the_form(every):
    assert every["secret"].required
    assert not every["email"].required


@pytest.mark.parametrize(
    ("field", "initial"),
    [
        (forms.IntegerField(), "three"),
        (forms.IntegerField(), True),
        (forms.FloatField(), "1.5"),
        (forms.BooleanField(), "yes"),
        (forms.CharField(), 12),
        (forms.ChoiceField(choices=[("a", "A")]), "zzz"),
        (forms.MultipleChoiceField(choices=[("a", "A")]), ["a", "zzz"]),
        (forms.MultipleChoiceField(choices=[("a", "A")]), "a"),
        (forms.DateField(), datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)),
        (forms.DateField(), "not a date object"),
        (forms.TimeField(), 930),
        (forms.DateTimeField(), datetime.datetime(2026, 1, 1)),  # naive: no RFC 3339 offset
        (forms.DateTimeField(), datetime.date(2026, 1, 1)),
        (forms.TimeField(), datetime.date(2026, 1, 1)),
        (forms.CharField(widget=forms.PasswordInput), "hunter2"),
        (forms.FileField(), "file.txt"),
    ],
)
def test_initial_is_dropped_when_it_does_not_fit(field, initial):
    assert auto_field_from_form_field("x", field, initial=initial).default is None


def test_initial_model_instance_and_callable(colours):
    red = colours[0]

    class Form(forms.Form):
        colour = forms.ModelChoiceField(queryset=Colour.objects.all(), initial=lambda: red)
        palette = forms.ModelMultipleChoiceField(queryset=Colour.objects.all(), initial=[red])

    colour, palette = fields_for_form(Form)
    assert colour.default == str(red.pk)
    assert palette.default == [str(red.pk)]


def test_form_level_initial_counts():
    form = SignupForm(initial={"plan": "team", "age": 30})
    by_name = {f.name: f for f in fields_for_form(form)}
    assert by_name["plan"].default == "team"
    assert by_name["age"].default == 30


def test_init_customisations_count():
    (plan,) = fields_for_form(CustomisedForm)
    assert plan.options == (Option("pro", "Pro only"),)
    assert plan.description == "Chosen in __init__"


def test_unmapped_field_names_the_form_and_the_field():
    class Odd(forms.Field):
        pass

    class OddForm(forms.Form):
        fine = forms.CharField()
        odd = Odd()

    with pytest.raises(FormConversionError, match=r"^OddForm\.odd: Odd has no mapping"):
        fields_for_form(OddForm)


def test_users_extend_the_mapping_and_subclasses_inherit_it():
    class Colourful(forms.Field):
        pass

    class VeryColourful(Colourful):
        pass

    register_converter(Colourful)(lambda field: {"type": "text", "max": 7})

    class Form(forms.Form):
        shade = VeryColourful()

    assert fields_for_form(Form)[0].max == 7


def test_subclass_of_a_mapped_class_inherits_its_mapping():
    class CompanyEmail(forms.EmailField):
        pass

    class Form(forms.Form):
        email = CompanyEmail()

    assert fields_for_form(Form)[0].type == "email"


def test_fields_for_model_follows_the_model_form(colours):
    by_name = {f.name: f for f in fields_for_model(Gadget)}
    assert list(by_name) == [
        "name",
        "slug",
        "price",
        "stock",
        "active",
        "released",
        "colour",
        "tags",
        "token",
        "manual",
        "notes",
    ]
    assert by_name["name"].description == "Unique among gadgets."
    assert by_name["name"].max == 40
    assert by_name["stock"].min == 0
    assert by_name["price"].type == "number"
    assert by_name["price"].default == 1
    assert by_name["colour"].options[0].label == "Green"
    assert by_name["tags"].multiple
    assert by_name["manual"].type == "file"
    assert by_name["notes"].type == "textarea"


def test_fields_for_model_with_fields_and_exclude():
    assert [f.name for f in fields_for_model(Gadget, fields=["stock", "name"])] == ["stock", "name"]
    excluded = [f.name for f in fields_for_model(Gadget, exclude=["colour", "tags", "manual"])]
    assert "colour" not in excluded
    assert "name" in excluded


def test_auto_form_field_validates_and_normalises():
    field = AutoFormField("plan", options=[Option("a"), Option("b", "Bee")])
    assert field.options == (Option("a", "a"), Option("b", "Bee"))
    assert field.label == "Plan"
    hash(field)
    with pytest.raises(ValueError, match="valid types: boolean, checkbox"):
        AutoFormField("x", type="colour")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs a name"):
        AutoFormField("")


def test_signup_form_from_the_issue():
    assert fields_for_form(SignupForm) == [
        AutoFormField("email", "Email", "email", required=True, max=320),
        AutoFormField(
            "plan", "Plan", "text", required=True, options=(Option("pro", "Pro"), Option("team", "Team"))
        ),
        AutoFormField("age", "Age", "integer", min=18, max=120),
        AutoFormField("newsletter", "Newsletter", "boolean"),
    ]


@pytest.mark.parametrize(
    ("field", "initial", "default"),
    [
        (forms.DateField(), "2026-03-04", "2026-03-04"),
        (forms.DateField(), "04/03/2026", None),
        (forms.TimeField(), "09:30", "09:30:00"),
        (forms.DateTimeField(), "2026-03-04T05:06:00+01:00", "2026-03-04T05:06:00+01:00"),
        (forms.DateTimeField(), "2026-03-04T05:06:00", None),  # naive: no RFC 3339 offset
    ],
)
def test_initial_text_in_iso_form_is_a_temporal_default(field, initial, default):
    assert auto_field_from_form_field("x", field, initial=initial).default == default


def test_a_slider_is_a_range_and_multi_select_length_validators_count_picks():
    slider = forms.FloatField(widget=forms.NumberInput(attrs={"type": "range"}), min_value=0, max_value=1)
    assert auto_field_from_form_field("x", slider).type == "range"
    picks = forms.MultipleChoiceField(
        choices=[("a", "A"), ("b", "B")], validators=[MinLengthValidator(1), MaxLengthValidator(2)]
    )
    field = auto_field_from_form_field("x", picks)
    assert (field.min, field.max, field.multiple) == (1, 2, True)


class InitForm(forms.Form):
    name = forms.CharField()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["name"].help_text = "set in __init__"


@pytest.mark.parametrize(
    ("form_class", "static"),
    [
        (SignupForm, True),
        (InitForm, False),  # its own __init__
        (CustomisedForm, False),
        (EveryFieldForm, False),  # model and file-path choices
        (
            type("CallableInitial", (forms.Form,), {"day": forms.DateField(initial=datetime.date.today)}),
            False,
        ),
        (
            type("CallableChoices", (forms.Form,), {"c": forms.ChoiceField(choices=lambda: [("a", "A")])}),
            False,
        ),
    ],
)
def test_form_fields_remembers_only_forms_that_cannot_change(form_class, static):
    from mcpforms.fields import is_static_form

    assert is_static_form(form_class) is static


@pytest.mark.django_db
def test_form_fields_is_fields_for_form_and_caches_plain_forms_per_language():
    from django.utils import translation

    from mcpforms.fields import form_fields

    assert form_fields(SignupForm) == fields_for_form(SignupForm)
    assert form_fields(SignupForm) is form_fields(SignupForm)
    with translation.override("de"):
        german = form_fields(SignupForm)
    assert german is not form_fields(SignupForm)
    assert form_fields(SignupForm, initial={"plan": "team"})[1].default == "team"  # arguments: read anew
    assert form_fields(InitForm)[0].description == "set in __init__"

    def colour_options() -> int:
        return len(next(f for f in form_fields(EveryFieldForm) if f.name == "colour").options)

    before = colour_options()
    Colour.objects.create(name="Violet", code="#90f")
    assert colour_options() == before + 1  # database choices are read on every call
