"""The demo project works as `make run` uses it: migrate, seed, serve the home page; and the home page shows
every tool as a form that calls it over MCP."""

from __future__ import annotations

import html
import json
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings

import mcpforms
from mcpforms.models import FieldDefinition, FormDefinition
from mcpforms.protocol.server import default_server
from tests.core_client import APPS, CoreClient

ROOT = Path(__file__).resolve().parents[2]

TOOLS_CHECK = """
import django
django.setup()
from django.test import Client
from mcpforms.protocol.server import default_server
from tests import wire
from django.contrib.auth.models import User
request = wire.message("tools/list")
for user in (None, User.objects.get(username="staff")):
    reply = default_server.handle(request, user=user)
    print(" ".join(tool["name"] for tool in reply.body["result"]["tools"]))
assert Client().login(username="staff", password="mcpforms-demo")
"""

PAGE_CHECK = """
import django
django.setup()
from django.test import Client
response = Client().get("/", HTTP_HOST="127.0.0.1")
assert response.status_code == 200, response.status_code
print(response.content.decode())
"""


@pytest.fixture
def demo(tmp_path):
    settings = tmp_path / "demo_settings.py"
    settings.write_text(
        f"from project.settings import *\nDATABASES['default']['NAME'] = {str(tmp_path / 'db.sqlite3')!r}\n"
    )
    env = {"PYTHONPATH": f"{tmp_path}:{ROOT}", "DJANGO_SETTINGS_MODULE": "demo_settings", "PATH": ""}

    def run(*args: str) -> str:
        result = subprocess.run(
            [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, result.stderr
        return result.stdout

    return run


def test_demo_migrates_seeds_idempotently_serves_its_tools_and_shows_the_derived_schemas(demo):
    demo("manage.py", "migrate", "--noinput")
    assert "2 ticket(s), 2 admin-defined form(s) added" in demo("manage.py", "seed_demo")
    assert "0 ticket(s), 0 admin-defined form(s) added" in demo("manage.py", "seed_demo")
    anonymous, staff = demo("-c", TOOLS_CHECK).splitlines()
    # The demo lets anonymous callers sign up, and nothing else.
    assert anonymous.split() == ["signup"]
    assert {"create_ticket", "event_rsvp", "feedback", "signup"} <= set(staff.split())
    page = demo("-c", PAGE_CHECK)
    # Every tool of the seeded demo has its card, form and schema, the admin-defined ones too.
    for name in ("signup", "create_ticket", "event_rsvp", "feedback"):
        assert f'<article class="card tool" id="tool-{name}"' in page, name
        assert f'<form class="tool-form" data-tool="{name}"' in page, name
    assert "&quot;format&quot;: &quot;email&quot;" in page
    assert "&quot;const&quot;: &quot;high&quot;" in page


# The home page, in process -------------------------------------------------------------------------------


@pytest.fixture
def site() -> Iterator[None]:
    """The demo's anonymous policy (anyone may sign up, every other tool needs a user), without its OAuth
    and its BASE_URL: the test client's host is the page's."""
    with override_settings(MCPFORMS={"ALLOW_ANONYMOUS": ["signup"]}):
        yield


@pytest.fixture
def staff(db) -> User:
    return User.objects.create_superuser("staff", "staff@example.com", "mcpforms-demo")


@pytest.fixture
def room_booking(db) -> FormDefinition:
    """A form defined in the admin, with a required field, a multi-select and a password."""
    definition = FormDefinition.objects.create(
        name="room_booking", title="Room booking", description="Book a meeting room.", message="Which room?"
    )
    rows: list[dict[str, Any]] = [
        {"name": "room", "type": "text", "required": True, "choices": "blue|Blue room\nred|Red room"},
        {"name": "needs", "type": "text", "choices": "tv|TV\ntea|Tea", "multiple": True},
        {"name": "pin", "label": "Door PIN", "type": "password", "required": True},
    ]
    for order, row in enumerate(rows):
        FieldDefinition.objects.create(definition=definition, order=order, **row)
    return definition


def cards(page: str) -> dict[str, str]:
    """Each tool's card on the page, by tool name."""
    found = re.findall(r'<article class="card tool" id="tool-([\w.-]+)".*?</article>', page, re.S)
    bodies = re.split(r'<article class="card tool" id="tool-[\w.-]+"', page)[1:]
    return dict(zip(found, bodies, strict=True))


def config(page: str) -> dict[str, Any]:
    found = re.search(r'<script id="demo-config" type="application/json">(.*?)</script>', page, re.S)
    assert found is not None
    loaded: dict[str, Any] = json.loads(found.group(1))
    return loaded


@pytest.mark.django_db
def test_the_home_page_lists_every_tool_including_one_defined_in_the_admin(site, staff, room_booking):
    listed = CoreClient(default_server, capabilities=APPS, user=staff).result("tools/list")["tools"]
    # The app-only submit tools are part of their form's card.
    expected = {
        tool["name"] for tool in listed if tool.get("_meta", {}).get("ui", {}).get("visibility") != ["app"]
    }
    assert {"signup", "create_ticket", "room_booking"} <= expected
    page = Client().get("/").content.decode()
    shown = cards(page)
    assert set(shown) == expected
    booking = shown["room_booking"]
    assert "Room booking" in booking and "Book a meeting room." in booking
    assert "Defined in the admin" in booking and "Signed-in users" in booking
    assert "Registered in code" in shown["signup"] and "Open to anyone" in shown["signup"]
    assert 'href="/admin/mcpforms/formdefinition/' in booking  # edit it where it was defined
    # Which paths each tool offers: the App UI, a form elicitation, the URL-mode page. A required password
    # sends every call to the page at once: no form elicitation asks for the room.
    assert re.findall(r'badge-path">([^<]+)<', shown["signup"]) == ["MCP Apps UI", "Form elicitation"]
    assert re.findall(r'badge-path">([^<]+)<', booking) == ["URL-mode page"]
    assert config(page)["tools"]["room_booking"]["fields"] == [
        {"name": "room", "id": "room_booking-room", "kind": "text"},
        {"name": "needs", "id": "room_booking-needs", "kind": "multiple"},
    ]


@pytest.mark.django_db
def test_each_card_shows_the_description_the_model_reads(site, staff, room_booking):
    # What a tool promises about asking the user is part of what it is: the page shows it as listed.
    FormDefinition.objects.filter(pk=room_booking.pk).update(ask="never")
    listed = CoreClient(default_server, capabilities=APPS, user=staff).result("tools/list")["tools"]
    descriptions = {tool["name"]: tool["description"] for tool in listed}
    shown = cards(Client().get("/").content.decode())
    for name in ("signup", "create_ticket", "room_booking"):
        paragraph = re.search(r'<p class="tool-desc">(.*?)</p>', shown[name], re.S)
        assert paragraph is not None and html.unescape(paragraph.group(1)) == descriptions[name], name
    assert "Missing details are asked from the user." in descriptions["signup"]
    assert "asked from the user" not in descriptions["room_booking"]


@pytest.mark.django_db
def test_each_form_is_real_with_required_fields_marked_and_its_schema_beside_it(site, room_booking):
    page = Client().get("/").content.decode()
    signup = cards(page)["signup"]
    assert (
        '<label for="signup-email">Email <span class="required" aria-hidden="true">*</span></label>' in signup
    )
    assert '<input type="email" name="email"' in signup and 'id="signup-email"' in signup
    assert 'aria-describedby="signup-email_helptext signup-email_error"' in signup
    assert '<div class="error" id="signup-email_error" role="alert"></div>' in signup
    assert '<label for="signup-age">Age</label>' in signup  # optional: no marker
    assert "Call <code>signup</code>" in signup
    schema = re.search(r'<pre class="code schema"><code>(.*?)</code></pre>', signup, re.S)
    assert schema is not None
    assert json.loads(html.unescape(schema.group(1)))["required"] == ["email", "plan"]
    booking = cards(page)["room_booking"]
    # A multi-select is checkboxes; a password is filled on the URL-mode page, never on this one.
    assert re.findall(r'type="checkbox" name="needs" value="(\w+)"', booking) == ["tv", "tea"]
    assert 'name="pin"' not in booking
    assert "Door PIN" in booking and "Filled on the URL-mode page" in booking
    assert "Continue on the URL-mode page" in booking


@pytest.mark.django_db
def test_an_anonymous_visitor_may_try_signup_and_is_told_to_sign_in_for_the_rest(site):
    page = Client().get("/").content.decode()
    shown = cards(page)
    assert list(shown)[0] == "signup"  # what the visitor can try comes first
    assert "gate" not in shown["signup"]
    assert '<fieldset class="tool-fields">' in shown["signup"]
    ticket = shown["create_ticket"]
    assert '<fieldset class="tool-fields" disabled>' in ticket
    assert 'href="/admin/login/?next=/%23tool-create_ticket">Sign in to the admin</a>' in ticket
    assert "(<code>staff</code> / <code>mcpforms-demo</code>) to try this tool" in ticket
    assert 'href="/admin/login/?next=/">Sign in</a>' in page


@pytest.mark.django_db
def test_a_signed_in_user_may_try_every_tool(site, staff):
    browser = Client()
    browser.force_login(staff)
    page = browser.get("/").content.decode()
    assert 'class="gate"' not in page
    assert "disabled" not in re.sub(r"<button[^>]*>", "", page)
    assert "Signed in as <strong>staff</strong>" in page
    assert config(page)["signedIn"] is True
    assert browser.cookies["csrftoken"].value  # the page's calls send it as X-CSRFToken


@pytest.mark.django_db
def test_the_page_shows_the_endpoint_the_token_command_and_copyable_snippets(site):
    page = Client().get("/").content.decode()
    assert '<code id="endpoint-url">http://testserver/mcp</code>' in page
    assert ".venv/bin/python manage.py mcpforms_token create staff" in page
    assert 'href="/admin/"' in page  # the admin, with the demo login next to it
    assert "<code>staff</code> / <code>mcpforms-demo</code>" in page
    for target in re.findall(r'data-copy="([\w-]+)"', page):
        assert f'id="{target}"' in page, target
    assert len(re.findall(r'data-copy="', page)) >= 4
    settings = config(page)
    assert settings["endpoint"] == "/mcp" and settings["protocolVersion"] == "2026-07-28"
    assert '<link rel="stylesheet" href="/static/demo/home.css">' in page
    assert '<script src="/static/demo/home.js"></script>' in page


@pytest.mark.django_db
def test_the_curl_snippet_is_a_working_call(site):
    page = Client().get("/").content.decode()
    found = re.search(r'<code id="curl-snippet">(.*?)</code>', page, re.S)
    assert found is not None
    words = shlex.split(html.unescape(found.group(1)).replace("\\\n", " "))
    assert words[:3] == ["curl", "-s", "http://testserver/mcp"]
    headers: dict[str, str] = {}
    body = ""
    for flag, value in zip(words[3::2], words[4::2], strict=True):
        if flag == "-H":
            name, _, text = value.partition(": ")
            headers[name] = text
        else:
            assert flag == "-d"
            body = value
    content_type = headers.pop("Content-Type")
    response = Client().post("/mcp", body, content_type=content_type, headers=headers)
    result = response.json()["result"]
    assert result["structuredContent"] == {"created": True, "email": "ada@example.com", "plan": "pro"}


def test_the_favicon_is_the_demos(site):
    response = Client().get("/favicon.ico")
    assert response.status_code == 301
    assert response["Location"] == "/static/demo/favicon.svg"


@pytest.mark.django_db
def test_a_form_that_cannot_be_built_does_not_take_the_page_down(site, staff):
    from mcpforms.registry import register, registry_for
    from project.demo.forms import SignupForm

    class Fussy(mcpforms.FormTool):
        form_class = SignupForm
        name = "fussy"

        def get_form_kwargs(self, request):
            raise RuntimeError("needs a tenant")

    register(Fussy)
    try:
        browser = Client()
        browser.force_login(staff)
        response = browser.get("/")
        assert response.status_code == 200
        fussy = cards(response.content.decode())["fussy"]
        assert "This form cannot be shown: its form could not be built" in fussy
        assert "<form" not in fussy
        assert "signup" in cards(response.content.decode())
    finally:
        registry_for(default_server).unregister("fussy")


# The demo signs in with OAuth (issue 21) ----------------------------------------------------------------

OAUTH_CHECK = """
import django
django.setup()
import json
from django.conf import settings
from django.test import Client
import mcpforms.oauth
from mcpforms.oauth.resource import OAuth2Auth
from tests import wire
browser = Client(HTTP_HOST="127.0.0.1:8000")
call = wire.message("tools/call", {"name": "create_ticket", "arguments": {"subject": "Printer"}})
answer = browser.post("/mcp", json.dumps(call), content_type="application/json", headers=wire.headers(call))
resource = browser.get("/.well-known/oauth-protected-resource/mcp")
server = browser.get("/.well-known/oauth-authorization-server/oauth")
print(json.dumps({
    "preset": settings.OAUTH2_PROVIDER == mcpforms.oauth.settings(),
    "call": [answer.status_code, answer.headers.get("WWW-Authenticate", "")],
    "resource": resource.json() if resource.status_code == 200 else resource.status_code,
    "server": server.json() if server.status_code == 200 else server.status_code,
    "consent": browser.get("/oauth/authorize/").status_code,
    "login": browser.login(username="staff", password="mcpforms-demo"),
}))
"""


def test_the_demo_serves_oauth_so_clients_sign_in_as_staff_with_nothing_to_paste(demo):
    demo("manage.py", "migrate", "--noinput")
    demo("manage.py", "seed_demo")
    report = json.loads(demo("-c", OAUTH_CHECK).splitlines()[-1])
    assert report["preset"]  # OAUTH2_PROVIDER = mcpforms.oauth.settings(), as docs/howto/access.md recommends
    # A tool that acts for a user answers an anonymous call with the 401 that starts a client's sign-in.
    status, challenge = report["call"]
    assert status == 401
    metadata = "http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"
    assert f'resource_metadata="{metadata}"' in challenge
    assert report["resource"]["resource"] == "http://127.0.0.1:8000/mcp"
    assert report["resource"]["authorization_servers"] == ["http://127.0.0.1:8000/oauth"]
    assert report["server"]["issuer"] == "http://127.0.0.1:8000/oauth"
    assert report["server"]["registration_endpoint"] == "http://127.0.0.1:8000/oauth/register/"
    assert report["consent"] == 302  # to the demo's login, where staff / mcpforms-demo signs in
    assert report["login"]


@pytest.mark.django_db
def test_the_home_page_says_how_a_client_signs_in(site, staff):
    oauth = {
        "ALLOW_ANONYMOUS": ["signup"],
        "AUTHENTICATION": ["mcpforms.auth.AccessTokenAuth", "mcpforms.oauth.OAuth2Auth"],
        "BASE_URL": "http://127.0.0.1:8000",
    }
    with override_settings(MCPFORMS=oauth):
        page = Client().get("/").content.decode()
    found = re.search(r'<p class="hint" id="oauth-sign-in">(.*?)</p>', page, re.S)
    assert found is not None
    paragraph = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", found.group(1)))
    assert "npx -y mcp-remote@0.15.1 http://127.0.0.1:8000/mcp" in paragraph
    assert "log in as staff / mcpforms-demo and approve" in paragraph
    # Without OAuth the page does not promise it.
    assert 'id="oauth-sign-in"' not in Client().get("/").content.decode()
