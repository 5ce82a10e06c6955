"""What a real client is asked and what it answers, round by round, on the demo's multi-step
``travel_request``, on its two paths: the docs' wizard transcript (docs/wizard-transcript.txt, which
docs/howto/wizards.md includes). ``python -m tests.e2e.screenshots`` writes it with the other pictures
and transcripts of the docs; this module alone, without a browser:

    .venv/bin/python -m tests.e2e.travel_transcript

project/tests/e2e/test_travel_clients.py checks that the file is what the demo does today."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

import mcp_types as types

from tests.e2e.demo_server import DemoServer, demo_server

ROOT = Path(__file__).resolve().parents[2]
TRANSCRIPT = ROOT / "docs" / "wizard-transcript.txt"
DATES = {"departure": "2027-03-01", "return_date": "2027-03-08", "budget": 1800}
CONFIRMED = {"confirmed": True}
# Each path: what it shows, and the user's answer to each step asked, in order.
PATHS: list[tuple[str, list[dict[str, Any]]]] = [
    (
        "A trip abroad: the passport step is asked.",
        [
            {"destination": "Tokyo", "international": True},
            {"passport_number": "X1234567", "passport_expiry": "2030-05-31"},
            DATES,
            CONFIRMED,
        ],
    ),
    (
        "A domestic trip: the passport step is skipped; a return before the departure is asked again.",
        [
            {"destination": "Bergen", "international": False},
            {**DATES, "departure": "2027-03-08", "return_date": "2027-03-01"},
            DATES,
            CONFIRMED,
        ],
    ),
]
HEADER = """\
The demo's travel_request (project/demo/mcp_tools.py), called with no arguments by the official Python
client (mcp 2.3) on 2026-07-28: each round is an input_required result asking one step (the form
elicitation's message and requested fields), and the client's next call answers it. A 2025-11-25 client is
sent the same steps, one elicitation/create each. Made by `python -m tests.e2e.screenshots`.
"""


def field(name: str, schema: dict[str, Any], required: bool) -> str:
    kind = schema.get("format") or schema["type"]  # a date is a string of the "date" format
    return f"{name} ({kind}{', required' if required else ''})"


def walk(demo: DemoServer, answers: list[dict[str, Any]]) -> list[str]:
    """One call of ``travel_request`` answered from ``answers``: the transcript's lines of it."""
    lines: list[str] = []
    script = list(answers)

    def entry(label: str, text: str) -> None:
        first, *rest = text.splitlines()
        lines.append(f"  {label:<9} {first}")
        lines.extend(f"  {'':<9} {line}" for line in rest)

    async def answer(context: Any, params: Any) -> types.ElicitResult:
        schema = params.requested_schema
        required = set(schema.get("required", ()))
        fields = [field(name, spec, name in required) for name, spec in schema["properties"].items()]
        entry("asked", params.message)
        entry("", ", ".join(fields))
        content = script.pop(0)
        entry("answers", json.dumps(content))
        return types.ElicitResult(action="accept", content=content)

    async def call() -> tuple[str | None, types.CallToolResult]:
        async with demo.client(mode="auto", elicitation_callback=answer, cache=None) as client:
            return client.protocol_version, await client.call_tool("travel_request", {})

    version, result = asyncio.run(call())
    assert version == "2026-07-28" and not result.is_error and not script, (version, result, script)
    entry("result", "\n".join(block.text for block in result.content if isinstance(block, types.TextContent)))
    return lines


def transcript(demo: DemoServer) -> str:
    """Both paths on ``demo`` (a fresh demo database: the requests stored are #1 and #2)."""
    sections = [HEADER]
    for heading, answers in PATHS:
        sections.append("\n".join([heading, *walk(demo, answers)]) + "\n")
    return "\n".join(sections)


def main() -> None:
    with tempfile.TemporaryDirectory() as directory, demo_server(Path(directory)) as demo:
        TRANSCRIPT.write_text(transcript(demo))
    print(f"wrote {TRANSCRIPT}")


if __name__ == "__main__":
    main()
