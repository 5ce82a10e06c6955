"""The admin tutorial (docs/tutorials/admin-forms.md) taken as written, against a real demo server: staff
sign in and define the form through the admin's own pages, the check and the call are the page's commands
(fetched by name), what they print is what the page shows, and the submission is in the admin."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from project.demo.management.commands.seed_demo import STAFF_PASSWORD, STAFF_USERNAME
from tests.docs_examples import example
from tests.e2e.demo_server import DemoServer, demo_server

ROOT = Path(__file__).resolve().parents[3]
DOCS_URL = "http://127.0.0.1:8000/mcp"  # where the page's commands point: the demo that make run serves

# The tutorial's steps 2 and 3: the definition and its fields, as the page's tables give them.
DEFINITION = {
    "name": "room_booking",
    "title": "Book a meeting room",
    "description": "Book a meeting room for a day.",
    "message": "Which room, and when?",
    "enabled": "on",
    "ask": "missing",
    "permission": "",
    "email_to": "",
}
FIELDS = [
    {"name": "room", "label": "Room", "type": "text", "required": "on", "order": "0",
     "choices": "oslo|Oslo (8 people)\nbergen|Bergen (4 people)"},
    {"name": "day", "label": "Day", "type": "date", "required": "on", "order": "1"},
    {"name": "people", "label": "People", "type": "integer", "order": "2", "min": "1", "max": "8",
     "default": "2"},
    {"name": "notes", "label": "Notes", "type": "textarea", "order": "3", "max": "500"},
]  # fmt: skip


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoServer]:
    with demo_server(tmp_path_factory.mktemp("admin-tutorial")) as server:
        yield server


def csrf_token(page: httpx2.Response) -> str:
    found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert found, page.text[:2000]
    return found[1]


def signed_in(demo: DemoServer) -> httpx2.Client:
    """Step 1: the admin's own login page, as staff."""
    admin = httpx2.Client(base_url=demo.url.removesuffix("/mcp"), timeout=30)
    login = admin.get("/admin/login/")
    answer = admin.post(
        "/admin/login/?next=/admin/",
        data={
            "csrfmiddlewaretoken": csrf_token(login),
            "username": STAFF_USERNAME,
            "password": STAFF_PASSWORD,
            "next": "/admin/",
        },
    )
    assert answer.status_code == 302, answer.text[:2000]
    return admin


def shell(demo: DemoServer, command: str) -> str:
    """Run a shell command of the page in the checkout, against the demo's database and server."""
    run = subprocess.run(
        ["bash", "-c", command.replace(DOCS_URL, demo.url)],
        cwd=ROOT,
        env=demo.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    return run.stdout


def test_the_admin_tutorial_ends_at_the_stored_submission(demo):
    admin = signed_in(demo)
    # Steps 2 to 4: the add page, its inline fields, "Save and continue editing".
    add = admin.get("/admin/mcpforms/formdefinition/add/")
    assert "Add another Field" in add.text or "Add another" in add.text
    posted = {
        "csrfmiddlewaretoken": csrf_token(add),
        **DEFINITION,
        "fields-TOTAL_FORMS": str(len(FIELDS)),
        "fields-INITIAL_FORMS": "0",
        "fields-MIN_NUM_FORMS": "1",
        "fields-MAX_NUM_FORMS": "1000",
        "_continue": "Save and continue editing",
    }
    for index, field in enumerate(FIELDS):
        posted |= {f"fields-{index}-{key}": value for key, value in field.items()}
    saved = admin.post("/admin/mcpforms/formdefinition/add/", data=posted)
    assert saved.status_code == 302, re.findall(r'class="errorlist[^>]*>(.*?)</ul>', saved.text, re.S)
    change = admin.get(saved.headers["location"])
    assert "Elicitation schema" in change.text and "Oslo (8 people)" in change.text

    # Step 5: the check prints what the page shows (before the schemas).
    shown = example("admin-tutorial-check-output")
    assert shell(demo, example("admin-tutorial-check")).startswith(shown), shown

    # Step 6: the token, then the call, with the answers printf types.
    output = shell(demo, example("admin-tutorial-token") + "\n" + example("admin-tutorial-call"))
    expected = example("admin-tutorial-call-output")
    pattern = re.escape(expected.strip()).replace(r'"submission":\ 1', r'"submission":\ (\d+)')
    found = re.fullmatch(pattern, output.strip())
    assert found, output

    # Step 7: one submission, for staff, with the answers, in the admin's list.
    ((tool, data, user, status),) = demo.rows(
        "select tool_name, data, auth_user.username, status from mcpforms_submission"
        " join auth_user on auth_user.id = user_id where mcpforms_submission.id = ?",
        int(found[1]),
    )
    assert (tool, user, status) == ("room_booking", STAFF_USERNAME, "new")
    assert '"day": "2027-03-04"' in str(data)
    listed = admin.get("/admin/mcpforms/submission/")
    assert f"room_booking #{found[1]}" in listed.text
