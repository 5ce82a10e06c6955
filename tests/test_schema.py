from __future__ import annotations

from typing import Any

import mcp_types._v2026_07_28 as wire
import pytest
from pydantic import BaseModel, TypeAdapter

from mcpforms.fields import AutoFormField, Option, fields_for_form
from mcpforms.schema import (
    form_input_request,
    form_mode_fields,
    form_schema,
    property_schema,
)
from tests.forms import EveryFieldForm, SignupForm
from tests.testapp.models import Colour

PRIMITIVE = TypeAdapter(wire.PrimitiveSchemaDefinition)


def _wire_model(schema: dict[str, Any]) -> Any:
    """The one PrimitiveSchemaDefinition member a property must be, judged by its shape."""
    if schema["type"] == "array":
        return wire.TitledMultiSelectEnumSchema
    if "oneOf" in schema:
        return wire.TitledSingleSelectEnumSchema
    return {
        "string": wire.StringSchema,
        "number": wire.NumberSchema,
        "integer": wire.NumberSchema,
        "boolean": wire.BooleanSchema,
    }[schema["type"]]


def _allowed_keywords(model: type[BaseModel]) -> set[str]:
    return {field.alias or name for name, field in model.model_fields.items()}


def assert_wire_valid(schema: dict[str, Any]) -> None:
    """Validate against the official model, and allow no keyword that model does not define.

    The mcp_types models ignore unknown keys, so validation alone would let extra keywords through.
    """
    PRIMITIVE.validate_python(schema)
    model = _wire_model(schema)
    model.model_validate(schema)
    assert set(schema) <= _allowed_keywords(model), set(schema) - _allowed_keywords(model)
    if model is wire.TitledMultiSelectEnumSchema:
        for choice in schema["items"]["anyOf"]:
            assert set(choice) == {"const", "title"}


@pytest.fixture
def every_schema(db) -> dict[str, Any]:
    Colour.objects.create(name="Red", code="#f00")
    return form_schema(fields_for_form(EveryFieldForm))


def test_every_django_field_type_yields_a_wire_valid_property(every_schema):
    assert every_schema["type"] == "object"
    assert set(every_schema) == {"type", "properties", "required"}
    for name, prop in every_schema["properties"].items():
        try:
            assert_wire_valid(prop)
        except AssertionError as error:  # pragma: no cover - the message names the failing property
            raise AssertionError(f"{name}: {prop}") from error
    wire.ElicitRequestFormParams.model_validate({"message": "m", "requestedSchema": every_schema})


def test_password_file_and_hidden_fields_are_left_out(every_schema):
    for name in ("secret", "upload", "picture", "token"):
        assert name not in every_schema["properties"]
    assert "secret" not in every_schema["required"]


def test_form_mode_leaves_out_passwords_files_and_hidden_fields(db):
    fields = fields_for_form(EveryFieldForm)
    asked = {f.name for f in form_mode_fields(fields)}
    assert [f.name for f in fields if f.name not in asked] == ["secret", "upload", "picture", "token"]


def test_signup_schema_exactly():
    assert form_schema(fields_for_form(SignupForm)) == {
        "type": "object",
        "properties": {
            "email": {"type": "string", "format": "email", "maxLength": 320, "title": "Email"},
            "plan": {
                "type": "string",
                "oneOf": [{"const": "pro", "title": "Pro"}, {"const": "team", "title": "Team"}],
                "title": "Plan",
            },
            "age": {"type": "integer", "minimum": 18, "maximum": 120, "title": "Age"},
            "newsletter": {"type": "boolean", "title": "Newsletter"},
        },
        "required": ["email", "plan"],
    }


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        (AutoFormField("u", type="url"), {"type": "string", "format": "uri"}),
        (AutoFormField("d", type="date"), {"type": "string", "format": "date"}),
        (AutoFormField("d", type="datetime"), {"type": "string", "format": "date-time"}),
        (AutoFormField("t", type="time", max=8), {"type": "string", "maxLength": 8}),
        (AutoFormField("r", type="range", min=0, max=1.5), {"type": "number", "minimum": 0, "maximum": 1.5}),
        (AutoFormField("c", type="checkbox", default=True), {"type": "boolean", "default": True}),
        (
            AutoFormField("t", type="textarea", min=1, max=10.0),
            {"type": "string", "minLength": 1, "maxLength": 10},
        ),
        (
            AutoFormField(
                "m", options=(Option("a", "A"), Option("b")), multiple=True, min=1, max=2, default=["b"]
            ),
            {
                "type": "array",
                "items": {"anyOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "b"}]},
                "minItems": 1,
                "maxItems": 2,
                "default": ["b"],
            },
        ),
        (
            AutoFormField("n", type="integer", options=(Option("1", "One"),)),
            {"type": "string", "oneOf": [{"const": "1", "title": "One"}]},
        ),
    ],
)
def test_mapping_table(field, expected):
    schema = property_schema(field)
    assert_wire_valid(schema)
    assert {k: v for k, v in schema.items() if k != "title"} == expected


@pytest.mark.parametrize(
    "field",
    [
        AutoFormField("n", type="number", default="3"),
        AutoFormField("n", type="number", default=True),
        AutoFormField("n", type="integer", default=2.5),
        AutoFormField("b", type="boolean", default=1),
        AutoFormField("s", default=3),
        AutoFormField("o", options=(Option("a"),), default="b"),
        AutoFormField("o", options=(Option("a"),), default=["a"]),
        AutoFormField("m", options=(Option("a"),), multiple=True, default=["a", "z"]),
        AutoFormField("m", options=(Option("a"),), multiple=True, default="a"),
    ],
)
def test_defaults_of_the_wrong_type_are_not_carried(field):
    assert "default" not in property_schema(field)


@pytest.mark.parametrize("bound", [-1, 2.5, True, "3"])
def test_length_bounds_that_are_not_counts_are_not_emitted(bound):
    schema = property_schema(AutoFormField("s", min=bound, max=bound))
    assert "minLength" not in schema
    assert "maxLength" not in schema


def test_labels_and_descriptions_become_title_and_description():
    schema = property_schema(AutoFormField("email_address", description="Where we write"))
    assert schema["title"] == "Email address"
    assert schema["description"] == "Where we write"


def test_form_input_request_shape_is_a_valid_input_required_result():
    fields = fields_for_form(SignupForm)
    result = form_input_request(fields, key="signup", message="Create your account", request_state="tok")
    assert result == {
        "resultType": "input_required",
        "inputRequests": {
            "signup": {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "Create your account",
                    "requestedSchema": form_schema(fields),
                },
            }
        },
        "requestState": "tok",
    }
    wire.InputRequiredResult.model_validate(result)
    wire.ElicitRequest.model_validate(result["inputRequests"]["signup"])


def test_form_input_request_without_state_has_no_request_state_key():
    result = form_input_request([AutoFormField("name")], message="Name?")
    assert "requestState" not in result
    assert list(result["inputRequests"]) == ["form"]


def test_form_input_request_refuses_nothing_to_ask():
    with pytest.raises(ValueError, match="at least one field"):
        form_input_request([], message="m")
    with pytest.raises(ValueError, match=r"\(pw, doc\).*URL mode"):
        form_input_request(
            [AutoFormField("pw", type="password"), AutoFormField("doc", type="file")], message="m"
        )


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        (AutoFormField("n", type="integer", min=18), {"type": "integer", "minimum": 18}),
        (AutoFormField("n", type="integer", min=0, max=0), {"type": "integer", "minimum": 0, "maximum": 0}),
        (AutoFormField("n", type="number", min=-1, max=0), {"type": "number", "minimum": -1, "maximum": 0}),
        (AutoFormField("n", type="number", min=0.5), {"type": "number", "minimum": 0.5}),
        (AutoFormField("s", min=0, max=0), {"type": "string", "minLength": 0, "maxLength": 0}),
        (
            AutoFormField("m", options=(Option("a"),), multiple=True, min=0),
            {"type": "array", "items": {"anyOf": [{"const": "a", "title": "a"}]}, "minItems": 0},
        ),
    ],
)
def test_lower_bounds_including_zero_and_fractions_are_emitted(field, expected):
    schema = property_schema(field)
    assert_wire_valid(schema)
    assert {k: v for k, v in schema.items() if k != "title"} == expected


@pytest.mark.parametrize(
    ("field", "default"),
    [
        (AutoFormField("s", default="hello"), "hello"),
        (AutoFormField("e", type="email", default="ada@example.com"), "ada@example.com"),
        (AutoFormField("o", options=(Option("s"), Option("l")), default="l"), "l"),
        (AutoFormField("n", type="integer", min=1, default=3), 3),
        (AutoFormField("n", type="integer", default=0), 0),
        (AutoFormField("n", type="number", default=2.5), 2.5),
        (AutoFormField("n", type="number", default=0), 0),
        (AutoFormField("b", type="boolean", default=False), False),
    ],
)
def test_defaults_that_fit_the_type_are_emitted_even_when_falsy(field, default):
    schema = property_schema(field)
    assert_wire_valid(schema)
    assert schema["default"] == default
    assert type(schema["default"]) is type(default)


def test_a_django_forms_fractional_minimums_and_initials_reach_the_schema(every_schema):
    properties = every_schema["properties"]
    assert properties["ratio"] == {"type": "number", "minimum": 0.5, "title": "Ratio"}
    assert properties["price"] == {
        "type": "number",
        "minimum": 0.5,
        "maximum": 99,
        "title": "Price",
        "default": 2.5,
    }
    assert properties["count"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 10,
        "title": "Count",
        "default": 3,
    }
    assert properties["char"]["default"] == "hello"
    assert properties["size"]["default"] == "s"
