"""The docs' pictures and transcripts, made by hand (not part of `make test`):

    .venv/bin/python -m tests.e2e.screenshots

Every picture is a PNG in docs/images/, taken in Debian's chromium at 1,280 px in the light theme by the
browser tests' own scripts, each on a fresh database:

- The demo, served on seed_demo's data: the first screen of its home page, read as if at `make run`'s
  address, http://127.0.0.1:8000 (demo-home.png), and, signed in as the staff user, the whole admin
  change page of seed_demo's "Product feedback" form definition (admin-form-definition.png), both by
  demo_pictures.mjs.
- The demo's approvals: the real tasks client (task_client.mjs) asks for three refunds as the staff user;
  as the ``finance`` user, the admin's list of approval requests and one request's page with its buttons
  (approval-list.png, approval-request.png, by approval_admin.mjs). Then finance approves a request the
  client is following, and the client's JSON lines from the call to the handler's result go to
  docs/approval-transcript.txt.
- test_browser.py's run of browser_host.mjs against the test project: its signup form as an MCP App in the
  host, after Django refused the address typed (apps-form.png), and the vault's password asked through
  URL-mode elicitation, on the page the user opens, after a password too short (url-mode-page.png).
- test_oauth_browser.py's run of oauth_browser.mjs: the consent page Claude sends the user to
  (oauth-consent.png).

Last, the official Python client walks the demo's multi-step ``travel_request`` on both its paths: what it
was asked and answered each round goes to docs/wizard-transcript.txt (``tests.e2e.travel_transcript``,
which makes it alone, without a browser, as ``python -m tests.e2e.travel_transcript``)."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from project.settings import MCPFORMS as DEMO_SETTINGS
from tests.e2e import travel_transcript
from tests.e2e.demo_server import DEMO_TOOLS, DemoServer, demo_server
from tests.e2e.node import node_report
from tests.e2e.task_client import TaskClient, digest, in_the_admin
from tests.e2e.test_browser import host_report, host_site
from tests.e2e.test_oauth_browser import consent_report, consent_site

ROOT = Path(__file__).resolve().parents[2]
IMAGES = ROOT / "docs" / "images"
TRANSCRIPT = ROOT / "docs" / "approval-transcript.txt"
WIDTH = 1280
MAKE_RUN = "http://127.0.0.1:8000"  # where `make run` serves the demo
DEFINITION = "feedback"  # seed_demo's shorter admin-defined form: its whole page stays readable
STAFF = ("staff", "mcpforms-demo")  # seed_demo's superuser
FINANCE = ("finance", "mcpforms-finance")  # seed_demo's approver
WAITING = [
    {"order": "ORD-1042", "amount": "12.50", "reason": "The mug arrived in pieces."},
    {"order": "ORD-1187", "amount": "249.00", "reason": "Returned unopened within 30 days."},
]
FOLLOWED = {"order": "ORD-1203", "amount": "18.90"}  # the reason is asked for: one round before the task
REASON = "Charged twice for the same order."


def demo_pictures(demo: DemoServer) -> None:
    """demo-home.png and admin-form-definition.png, of the demo as seed_demo left it."""
    ((definition, title),) = demo.rows(
        "SELECT id, title FROM mcpforms_formdefinition WHERE name = ?", DEFINITION
    )
    fields = demo.rows(
        'SELECT name FROM mcpforms_fielddefinition WHERE definition_id = ? ORDER BY "order"', definition
    )
    config = {
        "base": demo.url.removesuffix("/mcp"),
        "shownAs": MAKE_RUN,
        "username": STAFF[0],
        "password": STAFF[1],
        "definition": definition,
        "dir": str(IMAGES),
        "home": "demo-home.png",
        "admin": "admin-form-definition.png",
    }
    anonymous = DEMO_SETTINGS["ALLOW_ANONYMOUS"]  # the tools anyone may call
    assert isinstance(anonymous, list)
    seen = node_report("demo_pictures.mjs", json.dumps(config), timeout=120)
    assert seen["consoleErrors"] == [], seen
    assert seen["endpoint"] == f"{MAKE_RUN}/mcp", seen
    assert seen["stats"] == {
        "Tools": len(DEMO_TOOLS),
        "From the admin": len(demo.rows("SELECT id FROM mcpforms_formdefinition")),
        "Open to anyone": len(anonymous),
    }
    assert seen["heading"] == title, seen
    assert seen["fields"] == [name for (name,) in fields], seen


def approvals(demo: DemoServer) -> list[dict[str, Any]]:
    """approval-list.png and approval-request.png; the followed client's JSON lines."""

    def number(task_id: str) -> int:
        ((pk,),) = demo.rows("SELECT id FROM mcpforms_tooltask WHERE digest = ?", digest(task_id))
        assert isinstance(pk, int)
        return pk

    base = demo.url.removesuffix("/mcp")
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
    return followed.finish()


def host_pictures(directory: Path) -> None:
    """apps-form.png and url-mode-page.png, from test_browser.py's host and flow."""
    shots = directory / "shots"
    shots.mkdir()
    with host_site(directory) as base:
        seen = host_report(base, shots)
    assert seen["inlineError"] == "That domain does not receive mail.", seen
    assert seen["urlMode"]["inlineError"].startswith("Ensure this value has at least 8 characters"), seen
    shutil.copyfile(shots / "app-light.png", IMAGES / "apps-form.png")
    shutil.copyfile(shots / "url-mode-light.png", IMAGES / "url-mode-page.png")


def consent_picture(directory: Path) -> None:
    """oauth-consent.png, from test_oauth_browser.py's site and flow."""
    shots = directory / "shots"
    shots.mkdir()
    with consent_site(directory) as (base, port):
        seen = consent_report(base, port, shots)
    assert seen["consoleErrors"] == [], seen
    assert seen["pages"]["consent-1-1280.png"]["heading"] == "Allow Claude to use your account?", seen
    shutil.copyfile(shots / "consent-1-1280.png", IMAGES / "oauth-consent.png")


def main() -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        for name in ("demo", "host", "oauth"):
            (root / name).mkdir()
        with demo_server(root / "demo") as demo:
            demo_pictures(demo)  # first: the demo exactly as seed_demo left it
            lines = approvals(demo)
            wizard = travel_transcript.transcript(demo)
        host_pictures(root / "host")
        consent_picture(root / "oauth")
    TRANSCRIPT.write_text("".join(json.dumps(line) + "\n" for line in lines))
    travel_transcript.TRANSCRIPT.write_text(wizard)
    for name in (
        "demo-home",
        "admin-form-definition",
        "approval-list",
        "approval-request",
        "apps-form",
        "url-mode-page",
        "oauth-consent",
    ):
        picture = IMAGES / f"{name}.png"
        width = int.from_bytes(picture.read_bytes()[16:20], "big")  # the PNG header's IHDR width
        assert width == WIDTH, (picture, width)
        print(f"wrote {picture} ({picture.stat().st_size // 1024} KB)")
    print(f"wrote {TRANSCRIPT} and {travel_transcript.TRANSCRIPT}")


if __name__ == "__main__":
    main()
