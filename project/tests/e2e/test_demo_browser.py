"""The demo's home page in a real browser (Debian's chromium through playwright-core) against a real demo
server: every tool's form calls the tool over /mcp, anonymously and as the signed-in staff user; the
URL-mode confirmation; the ui:// page opened outside a host. Screenshots land in artifacts/demo/."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.demo_server import DemoServer, demo_server
from tests.e2e.node import node_report

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
CHROMIUM = Path("/usr/bin/chromium")
# A folder of its own: test_browser.py clears the *.png at the top of the artifacts folder.
ARTIFACTS = Path(os.environ.get("MCPFORMS_ARTIFACTS", ROOT / "artifacts")) / "demo"
SECRET = "correct horse battery staple"
SCREENSHOTS = (
    "home-light",
    "home-light-full",
    "home-dark",
    "home-dark-full",
    "home-staff",
    "signup-invalid",
    "signup-done",
    "ticket-done",
    "vpn-asked",
    "url-mode-form",
    "url-mode-done-light",
    "url-mode-done-dark",
    "ui-outside-host",
)

# An admin-defined form with a password, which only its URL-mode page may collect, and a multi-select.
VPN_FORM = """
from mcpforms.models import FieldDefinition, FormDefinition
definition = FormDefinition.objects.create(
    name="vpn_access", title="VPN access", message="Request VPN access",
    description="Ask IT for VPN access, confirmed with your password.",
)
fields = [
    {"name": "username", "type": "text", "required": True},
    {"name": "teams", "type": "text", "choices": "eng|Engineering\\nsales|Sales\\nops|Operations",
     "multiple": True},
    {"name": "password", "label": "Your password", "type": "password", "required": True},
]
for order, field in enumerate(fields):
    FieldDefinition.objects.create(definition=definition, order=order, **field)
"""

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium: make installs it")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoServer]:
    with demo_server(tmp_path_factory.mktemp("demo-browser")) as running:
        running.manage("shell", "-c", VPN_FORM)
        yield running


@pytest.fixture(scope="module")
def tickets_before(server: DemoServer) -> int:
    return len(server.rows("SELECT id FROM demo_ticket"))


@pytest.fixture(scope="module")
def report(server: DemoServer, tickets_before: int) -> dict[str, Any]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob("*.png"):
        old.unlink()
    base = server.url.removesuffix("/mcp")
    return node_report(HERE / "demo_browser.mjs", base, str(ARTIFACTS), timeout=180)


def test_the_home_page_lists_every_tool_and_what_an_anonymous_visitor_may_try(report):
    assert report["title"].startswith("mcpforms")
    gated = {
        "create_ticket",
        "event_rsvp",
        "export_tickets",
        "feedback",
        "refund_request",
        "travel_request",
        "vpn_access",
    }
    assert set(report["tools"]) == {"signup", *gated}
    assert report["tools"][0] == "signup"  # what the visitor can try comes first
    assert set(report["anonymousGates"]) == gated
    assert report["staffGates"] == 0


def test_a_copy_button_copies_the_endpoint(report, server):
    assert report["copied"] == server.url
    assert report["copyLabel"] == "Copied"


def test_the_curl_snippet_calls_signup(report, server):
    assert report["curl"].startswith(f"curl -s {server.url} ")
    if shutil.which("curl") is None:
        pytest.skip("no curl on this machine")
    run = subprocess.run(["bash", "-c", report["curl"]], capture_output=True, text=True, timeout=30)
    result = json.loads(run.stdout)["result"]
    assert result["structuredContent"] == {"created": True, "email": "ada@example.com", "plan": "pro"}


def test_signup_shows_djangos_error_next_to_the_field_then_the_result(report):
    signup = report["signup"]
    assert signup["inlineError"] == "Enter a valid email address."
    assert signup["invalid"] == "true"
    assert "signup-email_error" in signup["describedBy"].split()
    assert signup["focused"] == "signup-email"
    assert "One field needs your attention" in signup["summary"]
    assert signup["outcome"] == "Sign up: done"
    assert signup["result"] == {"created": True, "email": "ada@example.com", "plan": "team"}
    assert signup["errorCleared"] == ""


def test_a_signed_in_user_opens_a_ticket_through_the_page(report, server, tickets_before):
    assert report["signedIn"] == "Signed in as staff"
    ticket = report["ticket"]
    assert ticket["subject"] == "Lift stuck"
    assert ticket["priority"] == "high"
    assert ticket["due"] == "2027-01-15"
    rows = server.rows("SELECT subject, body, priority, due FROM demo_ticket WHERE id = ?", ticket["pk"])
    assert rows == [("Lift stuck", "The lift is stuck on floor 3.", "high", "2027-01-15")]
    assert len(server.rows("SELECT id FROM demo_ticket")) == tickets_before + 1


def test_a_password_form_is_finished_on_its_url_mode_page(report, server):
    assert "Filled on the URL-mode page" in report["vpnNote"]
    assert "a password" in report["vpnAsked"]
    assert report["linkTarget"] == "_blank"
    page = report["urlPage"]
    assert page["prefilled"] == "ada"
    assert page["checkboxes"] == 3  # a multi-select is checkboxes, not a ctrl-click list box
    assert page["checked"] == ["eng", "ops"]
    assert "Submitted." in page["done"]
    assert "You can close this page and return to your assistant." in page["done"]
    assert page["values"] == {"Username": "ada", "Teams": "Engineering, Operations"}
    assert report["vpnResult"]["data"] == {"username": "ada", "teams": ["eng", "ops"]}
    (data,) = server.rows("SELECT data FROM mcpforms_submission WHERE tool_name = 'vpn_access'")
    assert json.loads(str(data[0])) == {"username": "ada", "teams": ["eng", "ops"]}
    assert SECRET not in json.dumps(report)


def test_the_ui_page_outside_a_host_says_so(report):
    assert report["alone"]["notice"].startswith("This form runs inside an MCP host.")
    assert report["alone"]["submitDisabled"] is True
    assert report["framedDisabled"] is True  # a parent that never answers the handshake


def test_no_console_errors(report):
    assert report["consoleErrors"] == []
    assert report["pageErrors"] == []


def test_screenshots(report):
    for name in SCREENSHOTS:
        picture = ARTIFACTS / f"{name}.png"
        assert picture.exists() and picture.stat().st_size > 5000, name
