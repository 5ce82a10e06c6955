"""What a form tool's handler returns → a CallToolResult: text for every client, structured content for those
that read it (spec §5.2 asks for the JSON in a text block too, for clients that only show text)."""

from __future__ import annotations

import datetime
import decimal
import json
from collections.abc import Iterable, Mapping
from typing import Any

from django.core.exceptions import FieldDoesNotExist
from django.core.files import File
from django.db import models
from django.db.models.fields.files import FieldFile


def to_json(value: Any) -> Any:
    """Return ``value`` as JSON-ready data: dates as ISO strings, model instances as their primary key…"""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Mapping):
        return {str(key): to_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset | models.QuerySet):
        return [to_json(item) for item in value]
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return str(value)  # a float would lose the digits a DecimalField exists to keep
    if isinstance(value, models.Model):
        return value.pk
    if isinstance(value, FieldFile):
        return value.name or None
    if isinstance(value, File):
        return value.name
    return str(value)  # UUIDs, lazy strings, IP addresses…


def model_payload(instance: models.Model, fields: Iterable[str] | None = None) -> dict[str, Any]:
    """Return a saved instance as ``{"pk": ..., field: value, ...}``, many-to-many fields as lists of pks:
    the model ``fields`` named (a name that is no field of the model is left out), or every field for
    None."""
    opts = instance._meta
    if fields is None:
        chosen: list[Any] = [field for field in opts.concrete_fields if not field.primary_key]
        chosen += list(opts.many_to_many)
    else:
        chosen = [field for field in map(_model_field(opts), fields) if field is not None]
    payload: dict[str, Any] = {"pk": to_json(instance.pk)}
    for field in chosen:
        if field.many_to_many:
            payload[field.name] = [to_json(related.pk) for related in getattr(instance, field.name).all()]
        else:
            payload[field.name] = to_json(field.value_from_object(instance))
    return payload


def _model_field(opts: Any) -> Any:
    def field_named(name: str) -> Any:
        try:
            field = opts.get_field(name)
        except FieldDoesNotExist:
            return None
        # A reverse relation has no value of its own on the row; the pk is in every payload already.
        return None if field.auto_created or getattr(field, "primary_key", False) else field

    return field_named


def tool_result(value: Any, *, fields: Iterable[str] | None = None) -> dict[str, Any]:
    """Turn a handler's return value into a complete CallToolResult; a model instance is its pk and the
    model ``fields`` named (every field for None)."""
    if isinstance(value, Mapping) and ("content" in value or "structuredContent" in value):
        return dict(value)  # already a CallToolResult
    if isinstance(value, str):
        return {"content": [{"type": "text", "text": value}]}
    payload = model_payload(value, fields) if isinstance(value, models.Model) else to_json(value)
    result: dict[str, Any] = {"content": [{"type": "text", "text": json.dumps(payload, ensure_ascii=False)}]}
    if isinstance(payload, dict):
        result["structuredContent"] = payload
    return result


def result_text(result: Mapping[str, Any]) -> str:
    """The text blocks of a CallToolResult, joined: what a person reads of it."""
    blocks = result.get("content")
    if not isinstance(blocks, list):
        return ""
    return " ".join(
        block["text"] for block in blocks if isinstance(block, dict) and isinstance(block.get("text"), str)
    )


def error_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}
