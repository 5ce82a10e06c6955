"""The form UI and the URL-mode page in a real browser (Debian's chromium through playwright-core), hosted
by ext-apps' AppBridge, against a real server process. Screenshots land in artifacts/ (light and dark),
1,280 px wide; ``python -m tests.e2e.screenshots`` takes the docs' pictures of both from the same run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.run import free_port, running_server
from tests.e2e.node import node_report

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
# artifacts/ by default; make matrix gives each of its runs (two at a time) a folder of its own.
ARTIFACTS = Path(os.environ.get("MCPFORMS_ARTIFACTS", ROOT / "artifacts"))
SECRET = "correct horse battery staple"

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium: make installs it")


@contextmanager
def host_site(directory: Path) -> Iterator[str]:
    """The test project with the browser URLconf, on a fresh SQLite file in ``directory``, behind
    ``runserver``; yield its base URL. Everything it logs goes to ``directory/server.log``."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    database = directory / "db.sqlite3"
    (directory / "browser_settings.py").write_text(
        "from tests.settings import *\n"
        f"DATABASES['default'] = {{'ENGINE': 'django.db.backends.sqlite3', 'NAME': {str(database)!r}}}\n"
        "ROOT_URLCONF = 'tests.e2e.browser_urls'\n"
        f"MCPFORMS = {{'BASE_URL': {base!r}, 'ALLOW_ANONYMOUS': True}}\n"
        "LOGGING = {'version': 1, 'root': {'handlers': ['file'], 'level': 'DEBUG'}, 'handlers': "
        f"{{'file': {{'class': 'logging.FileHandler', 'filename': {str(directory / 'server.log')!r}}}}}}}\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": f"{directory}{os.pathsep}{ROOT}",
        "DJANGO_SETTINGS_MODULE": "browser_settings",
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("DATABASE_URL", None)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    with running_server(directory / "runserver.log", env=env, port=port):
        yield base


def host_report(base: str, artifacts: Path) -> dict[str, Any]:
    """What ``browser_host.mjs`` saw of the site at ``base``; its screenshots go to ``artifacts``."""
    return node_report("browser_host.mjs", base, str(artifacts), timeout=120)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    directory = tmp_path_factory.mktemp("browser")
    with host_site(directory) as base:
        yield base, directory


@pytest.fixture(scope="module")
def report(site: tuple[str, Path]) -> dict[str, Any]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob("*.png"):
        old.unlink()
    return host_report(site[0], ARTIFACTS)


def test_the_host_finds_the_form_ui_and_the_app_only_submit_tool(report):
    assert report["tools"]["testapp_signup"]["ui"] == {"resourceUri": "ui://mcpforms/testapp_signup"}
    assert report["tools"]["testapp_signup_submit"]["ui"]["visibility"] == ["app"]
    assert report["resourceMimeType"] == "text/html;profile=mcp-app"
    assert report["toolResult"]["values"] == {"plan": "team"}


def test_tool_input_prefills_the_form(report):
    assert report["prefilledPlan"] == "team"


def test_the_submit_tool_receives_the_typed_values(report):
    # The TypeScript prefab renderer sends empty arguments; ours sends what the user typed, typed.
    first, second = report["calls"]
    assert first == {
        "name": "testapp_signup_submit",
        "arguments": {"plan": "team", "email": "ada@example.invalid", "age": 36, "newsletter": True},
    }
    assert second["arguments"] == {"plan": "team", "email": "ada@example.com", "age": 36, "newsletter": True}


def test_a_django_validation_error_is_shown_inline(report):
    assert report["inlineError"] == "That domain does not receive mail."
    assert report["emailInvalid"] == "true"
    assert "id_email_error" in report["emailDescribedBy"].split()
    assert report["errorRole"] == "alert"
    assert report["focused"] == "id_email"  # focus moves to the first invalid input


def test_a_valid_submission_completes(report):
    done = json.loads(report["done"])
    assert done == {"email": "ada@example.com", "plan": "team", "age": 36, "newsletter": True}
    assert report["errorCleared"] == ""
    assert "consoleErrors" not in report


def test_the_host_theme_applies(report):
    assert report["darkBackground"] == "rgb(21, 23, 28)"  # the host's --color-background-primary


def test_screenshots_light_and_dark_at_1280_px(report):
    for name in ("app-light", "app-dark", "app-dark-done", "url-mode-light", "url-mode-dark"):
        shot = ARTIFACTS / f"{name}.png"
        assert shot.exists() and shot.stat().st_size > 5000, name
        width = int.from_bytes(shot.read_bytes()[16:20], "big")  # the PNG header's IHDR width
        assert width == 1280, (name, width)


def test_url_mode_in_the_browser(report, site):
    url_mode = report["urlMode"]
    assert "a password" in url_mode["message"]
    assert url_mode["prefilled"] == "ada"
    assert url_mode["inlineError"].startswith("Ensure this value has at least 8 characters")
    assert "id_password_error" in url_mode["describedBy"].split()
    assert "Submitted." in url_mode["done"]
    assert url_mode["result"] == [{"type": "text", "text": "Vault unlocked for ada."}]
    # The password typed on the page never reached the MCP side nor the server's log.
    assert SECRET not in json.dumps(report)
    assert SECRET not in (site[1] / "server.log").read_text()
