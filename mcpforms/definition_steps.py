"""The steps of an admin-defined form: its field rows read as steps, each with the condition it is asked on.

A row with a step title starts a step, which holds it and the rows below it up to the next titled row;
rows before the first titled row form an untitled first step, and a form with no titled row is one page.
The row that starts a step may carry its condition: a field of an earlier step that must equal a value,
be one of several, or be true. The admin and the tool built from a definition read rows with the same
functions, so what the admin accepts always becomes a working wizard. Nothing here touches the database.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from django.utils.text import slugify

from mcpforms.field_rows import DefinitionError, FieldRow, auto_field_from_row, parse_value
from mcpforms.fields import AutoFormField
from mcpforms.output import to_json

#: The conditions a step can be asked on, in the words a reader sees (``FieldDefinition.Condition``).
CONDITIONS = {"equals": "equals", "one_of": "is one of", "true": "is true"}


class StepRow(FieldRow, Protocol):
    """What is read of a row for its step: the step columns of ``mcpforms.models.FieldDefinition``."""

    step: str
    condition_field: str
    condition: str
    condition_value: str


class StepError(DefinitionError):
    """A row whose step or condition cannot be read; ``row`` is its index among the rows read."""

    def __init__(self, message: str, *, field: str | None, row: int) -> None:
        super().__init__(message, field=field)
        self.row = row


@dataclass(frozen=True)
class StepCondition:
    """When a step is asked: ``field`` of the earlier step ``step`` equals one of ``values`` (the JSON of
    what staff typed, read as that field's type), or for ``kind == "true"`` is true."""

    field: str
    kind: str
    step: str
    values: tuple[Any, ...] = ()

    def holds(self, cleaned: Mapping[str, Mapping[str, Any]]) -> bool:
        """Whether the step is asked, given the cleaned data of the active steps before it, by step: a
        field of a step that was skipped holds nothing, so the condition is false."""
        if self.step not in cleaned:
            return False
        value = cleaned[self.step].get(self.field)
        if self.kind == "true":
            return bool(value)
        answered = to_json(value)
        # A multiple choice holds when one of its picks is among the values.
        picks = answered if isinstance(answered, list) else [answered]
        return not {_text(pick) for pick in picks}.isdisjoint(_text(value) for value in self.values)

    def describe(self) -> str:
        """The condition in words: "when plan is one of pro, team"."""
        if self.kind == "true":
            return f"when {self.field} is true"
        return f"when {self.field} {CONDITIONS[self.kind]} {', '.join(_text(v) for v in self.values)}"


@dataclass(frozen=True)
class Step:
    """One step: its name (for the requestState and readers), the title the user reads ("" for rows
    before the first titled one), its fields and its condition (None: always asked)."""

    name: str
    title: str
    fields: tuple[AutoFormField, ...]
    condition: StepCondition | None = None


def starts_step(row: StepRow) -> bool:
    """Whether ``row`` starts a step; a definition with no such row is a one-page form."""
    return bool(row.step.strip())


def read_steps(rows: Sequence[StepRow]) -> list[Step]:
    """The steps of ``rows`` (in their order); raise the first ``DefinitionError`` of a row that cannot
    become a field, then the first ``StepError``."""
    fields = [auto_field_from_row(row) for row in rows]
    steps, problems = _read(rows, fields)
    if problems:
        raise problems[0]
    return steps


def step_problems(rows: Sequence[StepRow], *, ask: str = "missing") -> list[StepError]:
    """Every step or condition problem of ``rows``, for the admin; a row that cannot become a field is
    its own form's error, and a condition on it is read as text. ``ask`` is the definition's: a form with
    steps asks the user one step per round, so it cannot be a plain tool that never asks."""
    fields = [_field_or_none(row) for row in rows]
    problems = _read(rows, fields)[1]
    first_titled = next((index for index, row in enumerate(rows) if starts_step(row)), None)
    if first_titled is not None and ask == "never":
        problems.append(
            StepError(
                "A form with steps asks the user one step per round, so it cannot be a plain tool that "
                "never asks: set Ask (under Behaviour) to “Ask for what is missing” or “Always let the "
                "user confirm”, or clear the step titles.",
                field="step",
                row=first_titled,
            )
        )
    return problems


def _field_or_none(row: StepRow) -> AutoFormField | None:
    try:
        return auto_field_from_row(row)
    except DefinitionError:
        return None


def _read(
    rows: Sequence[StepRow], fields: Sequence[AutoFormField | None]
) -> tuple[list[Step], list[StepError]]:
    steps: list[_Building] = []
    problems: list[StepError] = []
    earlier: dict[str, tuple[str, AutoFormField | None]] = {}  # a field of an earlier step → its step
    names = {row.name for row in rows}
    for index, (row, auto) in enumerate(zip(rows, fields, strict=True)):
        conditioned = any(
            value.strip() for value in (row.condition_field, row.condition, row.condition_value)
        )
        if index == 0 or starts_step(row):
            if steps:  # the step that ends here: its fields are what the next steps' conditions read
                earlier |= {row_name: (steps[-1].name, read) for row_name, read in steps[-1].rows}
            condition = None
            if conditioned and index == 0:
                problems.append(
                    StepError(
                        "The first step is always asked: a condition reads a field of an earlier step, "
                        "and there is none before it. Clear the condition.",
                        field=_first_set(row),
                        row=index,
                    )
                )
            elif conditioned:
                condition = _condition(row, index, earlier, names, problems)
            title = row.step.strip()
            name = _step_name(title, len(steps) + 1, {step.name for step in steps})
            steps.append(_Building(name, title, condition))
        elif conditioned:
            problems.append(
                StepError(
                    "A condition decides whether a whole step is asked, so it belongs on the row that "
                    "starts the step: give this row a step title (a new step then starts here), or clear "
                    "the condition.",
                    field="step",
                    row=index,
                )
            )
        steps[-1].rows.append((row.name, auto))
    return [step.built() for step in steps], problems


@dataclass
class _Building:
    """A step being read: its rows by name, each with its field (None for a row that is not one)."""

    name: str
    title: str
    condition: StepCondition | None
    rows: list[tuple[str, AutoFormField | None]] = field(default_factory=list)

    def built(self) -> Step:
        autos = tuple(auto for _, auto in self.rows if auto is not None)
        return Step(self.name, self.title, autos, self.condition)


def _first_set(row: StepRow) -> str:
    for name in ("condition_field", "condition", "condition_value"):
        if str(getattr(row, name)).strip():
            return name
    return "condition_field"


def _condition(
    row: StepRow,
    index: int,
    earlier: Mapping[str, tuple[str, AutoFormField | None]],
    names: set[str],
    problems: list[StepError],
) -> StepCondition | None:
    def problem(message: str, field: str) -> None:
        problems.append(StepError(message, field=field, row=index))

    kind, name, text = row.condition, row.condition_field.strip(), row.condition_value.strip()
    found = len(problems)
    if not kind:
        problem("Choose when the step is asked: “equals”, “is one of” or “is true”.", "condition")
    elif kind not in CONDITIONS:
        problem(f"Unknown condition {kind!r}; choose one of: {', '.join(CONDITIONS)}.", "condition")
    readable = ", ".join(earlier) or "none"
    if not name:
        problem(f"Name the field of an earlier step the condition reads: {readable}.", "condition_field")
    elif name not in earlier:
        where = "is in this step or a later one" if name in names else "is no field of this form"
        problem(
            f"{name!r} {where}: a condition reads a field of an earlier step ({readable}).",
            "condition_field",
        )
    values: list[Any] = []
    if kind == "true" and text:
        problem("“is true” compares with no value: clear it, or choose “equals”.", "condition_value")
    elif kind in ("equals", "one_of"):
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if not lines:
            wanted = "the value to compare with" if kind == "equals" else "the values, one per line"
            problem(f"“{CONDITIONS[kind]}” needs {wanted}.", "condition_value")
        elif kind == "equals" and len(lines) > 1:
            problem("“equals” compares with one value; for several, choose “is one of”.", "condition_value")
        source = earlier.get(name, ("", None))[1]
        for line in lines:
            values.append(_typed(source, line, name, index, problems))
    if len(problems) > found:
        return None
    return StepCondition(field=name, kind=kind, step=earlier[name][0], values=tuple(values))


def _typed(source: AutoFormField | None, text: str, name: str, index: int, problems: list[StepError]) -> Any:
    """``text`` read as a value of the field ``source`` (text when it could not be read), as JSON."""
    if source is None:
        return text
    try:
        single = replace(source, multiple=False)  # each value is one pick of a multiple choice
        return to_json(parse_value(single, text, noun=f"value of {name}", admin_field="condition_value"))
    except DefinitionError as error:
        problems.append(StepError(str(error), field=error.field, row=index))
        return text


def _step_name(title: str, number: int, taken: set[str]) -> str:
    """``"Passport details"`` → ``passport_details``; the step's number keeps names apart."""
    name = slugify(title).replace("-", "_") or f"step_{number}"
    return name if name not in taken else f"{name}_{number}"


def _text(value: Any) -> str:
    """The one text form values are compared in: booleans as JSON, whole numbers without ".0"."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "" if value is None else str(value)
