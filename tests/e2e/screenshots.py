"""The docs' approval pictures and transcripts, made by hand (not part of `make test`):

    .venv/bin/python -m tests.e2e.screenshots

Serves the demo on a fresh database, has the real tasks client (task_client.mjs) ask for three refunds as
the staff user, and photographs, in Chromium at 1,280 px as the ``finance`` user, the admin's list of
approval requests and one request's page with its buttons (docs/images/approval-list.png,
approval-request.png). Then finance approves a request the client is following, and the client's JSON
lines from the call to the handler's result go to docs/approval-transcript.txt. Last, the official Python
client walks the multi-step ``travel_request`` on both its paths: what it was asked and answered each round
goes to docs/wizard-transcript.txt (``tests.e2e.travel_transcript``, which makes it alone, without a
browser, as ``python -m tests.e2e.travel_transcript``)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from tests.e2e import travel_transcript
from tests.e2e.demo_server import demo_server
from tests.e2e.task_client import TaskClient, digest, in_the_admin

ROOT = Path(__file__).resolve().parents[2]
IMAGES = ROOT / "docs" / "images"
TRANSCRIPT = ROOT / "docs" / "approval-transcript.txt"
FINANCE = ("finance", "mcpforms-finance")  # seed_demo's approver
WAITING = [
    {"order": "ORD-1042", "amount": "12.50", "reason": "The mug arrived in pieces."},
    {"order": "ORD-1187", "amount": "249.00", "reason": "Returned unopened within 30 days."},
]
FOLLOWED = {"order": "ORD-1203", "amount": "18.90"}  # the reason is asked for: one round before the task
REASON = "Charged twice for the same order."


def main() -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as directory, demo_server(Path(directory)) as demo:
        base = demo.url.removesuffix("/mcp")

        def number(task_id: str) -> int:
            ((pk,),) = demo.rows("SELECT id FROM mcpforms_tooltask WHERE digest = ?", digest(task_id))
            assert isinstance(pk, int)
            return pk

        waiting = []
        for arguments in WAITING:
            client = TaskClient(
                url=demo.url, token=demo.token, tool="refund_request", arguments=arguments, detach=True
            )
            waiting.append(number(client.until("created")["taskId"]))
            client.finish()
        followed = TaskClient(
            url=demo.url,
            token=demo.token,
            tool="refund_request",
            arguments=FOLLOWED,
            answers=[{"action": "accept", "content": {"reason": REASON}}],
        )
        request = number(followed.until("created")["taskId"])
        shots = {"dir": str(IMAGES), "list": "approval-list.png", "request": "approval-request.png"}
        in_the_admin(base, *FINANCE, waiting[-1], shots=shots)
        page = in_the_admin(base, *FINANCE, request, decision="approve")
        assert page["after"]["messages"][0]["level"] == "success", page
        followed.until("outcome")
        lines = followed.finish()
        wizard = travel_transcript.transcript(demo)
    TRANSCRIPT.write_text("".join(json.dumps(line) + "\n" for line in lines))
    travel_transcript.TRANSCRIPT.write_text(wizard)
    print(f"wrote {IMAGES / 'approval-list.png'}, {IMAGES / 'approval-request.png'} and {TRANSCRIPT}")
    print(f"wrote {travel_transcript.TRANSCRIPT}")


if __name__ == "__main__":
    main()
