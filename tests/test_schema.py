from __future__ import annotations

import json
import sys
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
from tests.wire import meta

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


# 309, 400, 4,000 and 4,300 digits, and the infinity float() makes of the first.
HUGE: dict[str, int | float] = {
    "309 digits": int("9" * 309),
    "-400 digits": -(10**399),
    "4000 digits": 10**3999,
}
HUGE |= {"4300 digits": 9 * 10**4299, "inf": 1e308 * 10}


@pytest.mark.parametrize("field_type", ["integer", "number", "range"])
@pytest.mark.parametrize("default", list(HUGE.values()), ids=list(HUGE))
def test_a_number_no_double_holds_is_not_offered_as_a_default(field_type, default):
    # A client's answer is offered back as the default of the field it failed: one of 309 digits once
    # crashed float() here, and a number past ±1.8e308 is no number every client can read (RFC 8259 §6).
    schema = property_schema(AutoFormField("age", type=field_type, min=18, max=120, default=default))
    assert_wire_valid(schema)
    assert "default" not in schema


@pytest.mark.parametrize("bound", [10**400, -(10**400)], ids=["401 digits", "-401 digits"])
def test_a_bound_no_double_holds_is_not_emitted(bound):
    assert "maxLength" not in property_schema(AutoFormField("s", max=bound))
    assert "maximum" not in property_schema(AutoFormField("n", type="integer", max=bound))


VERSION = "2026-07-28"
ELICITATION: dict[str, Any] = {"elicitation": {"form": {}}}


def mcp_post(message: dict[str, Any], **headers: Any) -> Any:
    from django.test import RequestFactory

    from mcpforms.api import serve
    from mcpforms.protocol.server import default_server

    request = RequestFactory().post("/mcp", json.dumps(message), content_type="application/json", **headers)
    return serve(default_server, request)


def signup_call(arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "testapp_signup", "arguments": arguments},
    }


def elicitation_of_2026_call(arguments: dict[str, Any]) -> dict[str, Any]:
    message = signup_call(arguments)
    message["params"]["_meta"] = meta(ELICITATION)
    response = mcp_post(
        message,
        HTTP_MCP_PROTOCOL_VERSION=VERSION,
        HTTP_MCP_METHOD="tools/call",
        HTTP_MCP_NAME="testapp_signup",
    )
    body = json.loads(response.content)
    assert "result" in body, body
    assert body["result"]["resultType"] == "input_required"
    params: dict[str, Any] = body["result"]["inputRequests"]["testapp_signup"]["params"]
    return params


def elicitation_of_2025_call(arguments: dict[str, Any]) -> dict[str, Any]:
    opened = mcp_post(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": ELICITATION,
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
    )
    response = mcp_post(signup_call(arguments), HTTP_MCP_SESSION_ID=opened["Mcp-Session-Id"])
    assert response["Content-Type"] == "text/event-stream", response.content
    text = response.content.decode()
    (asking,) = [json.loads(frame.split("data: ", 1)[1]) for frame in text.split("\n\n") if "data: " in frame]
    assert asking["method"] == "elicitation/create", asking
    params: dict[str, Any] = asking["params"]
    return params


# A 2025-era call runs on a worker thread (it may log to the stream), which sees only committed rows.
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("digits", [309, 400, 4000])
@pytest.mark.parametrize("era", [elicitation_of_2026_call, elicitation_of_2025_call])
def test_a_huge_integer_answer_is_asked_again_without_it_as_the_default(era, digits):
    asked = era({"email": "ada@example.com", "plan": "pro", "age": int("9" * digits)})
    assert "Age (age)" in asked["message"] and "less than or equal to 120" in asked["message"]
    age = asked["requestedSchema"]["properties"]["age"]
    assert age == {"type": "integer", "minimum": 18, "maximum": 120, "title": "Age"}


def test_the_largest_double_is_still_a_bound():
    # The edge of what every client reads (RFC 8259 §6) is inside it, not past it.
    largest = sys.float_info.max
    schema = property_schema(AutoFormField("n", type="number", min=-largest, max=largest))
    assert (schema["minimum"], schema["maximum"]) == (-largest, largest)


PICKS = (Option("a"), Option("b"), Option("c"))


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        (AutoFormField("s", min=2.0, max=5.0), {"minLength": 2, "maxLength": 5}),
        (AutoFormField("m", options=PICKS, multiple=True, min=1.0, max=2.0), {"minItems": 1, "maxItems": 2}),
    ],
)
def test_a_whole_float_count_is_sent_as_an_integer(field, expected):
    # minLength and minItems are integers in JSON Schema: a client validating strictly refuses "2.0".
    sent = json.loads(json.dumps(property_schema(field)))
    counts = {key: value for key, value in sent.items() if key in expected}
    assert counts == expected
    assert all(type(value) is int for value in counts.values())


@pytest.mark.parametrize("bound", [-1, 1.5, True, "3"])
def test_item_bounds_that_are_not_counts_are_not_emitted(bound):
    schema = property_schema(AutoFormField("m", options=PICKS, multiple=True, min=bound, max=bound))
    assert "minItems" not in schema
    assert "maxItems" not in schema


def test_form_input_request_says_what_to_do_instead_of_asking_nothing():
    with pytest.raises(ValueError) as empty:
        form_input_request([], message="m")
    assert str(empty.value) == "form_input_request needs at least one field."
    with pytest.raises(ValueError) as unaskable:
        form_input_request(
            [AutoFormField("pw", type="password"), AutoFormField("doc", type="file")], message="m"
        )
    assert str(unaskable.value) == (
        "None of these fields can be asked in form mode (pw, doc): passwords, files and hidden inputs need "
        "URL mode or the HTML form."
    )
