"""The consent page and the connected-assistants page in a real browser (Debian's chromium through
playwright-core) against a real server, at 1,280 × 800 and at a phone's width: the page fits, the warning
for an app on this computer shows, and Allow sends the browser on to the client's callback (no CSP
``form-action`` in the way). Screenshots land in artifacts/oauth/; ``python -m tests.e2e.screenshots``
takes the docs' picture of the consent page from the same run."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from tests.conformance.run import free_port
from tests.e2e.browser_site import browser_site
from tests.e2e.node import node_report

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("MCPFORMS_ARTIFACTS", ROOT / "artifacts")) / "oauth"
USERNAME, PASSWORD = "ada", "oauth-browser-test-password"
CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"  # RFC 7636 appendix B

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium: make installs it")

SETUP = """
from datetime import timedelta
from django.contrib.auth.models import User
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, RefreshToken
ada = User.objects.get(username="ada")
ada.first_name, ada.last_name = "Ada", "Lovelace"
ada.save()
def app(name, source, redirect, client_id=None):
    extra = {"client_id": client_id} if client_id else {}
    return Application.objects.create(name=name, registration_source=source, redirect_uris=redirect,
        client_type="public", authorization_grant_type="authorization-code", **extra)
claude = app("Claude", "cimd", "https://claude.ai/api/mcp/auth_callback",
    "https://claude.ai/oauth/mcp-oauth-client-metadata")
app("<b>Claude</b> (totally official)", "dcr", "https://claude.ai/api/mcp/auth_callback", "dcr-client")
app("Claude Code", "manual", "http://localhost/callback http://127.0.0.1/callback", "local-client")
cursor = app("Cursor", "dcr", "cursor://anysphere.cursor-mcp/oauth/callback", "cursor-client")
for application, minutes in ((claude, 3), (cursor, 120)):
    access = AccessToken.objects.create(user=ada, application=application, token=f"t-{application.pk}",
        expires=timezone.now() + timedelta(hours=1), scope="mcp", resource=["http://127.0.0.1/mcp"])
    AccessToken.objects.filter(pk=access.pk).update(created=timezone.now() - timedelta(minutes=minutes))
    RefreshToken.objects.create(user=ada, application=application, token=f"r-{application.pk}",
        access_token=access)
"""


def authorize_query(client_id: str, redirect: str, port: int) -> str:
    return urlencode(
        {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": redirect,
            "scope": "mcp",
            "state": "browser-state",
            "code_challenge": CHALLENGE,
            "code_challenge_method": "S256",
            "resource": f"http://127.0.0.1:{port}/mcp",
        }
    )


@contextmanager
def consent_site(directory: Path) -> Iterator[tuple[str, int]]:
    """The test project as an authorization server with the clients of ``SETUP``, on a fresh SQLite file in
    ``directory``, behind ``runserver``; yield its base URL and port."""
    port = free_port()
    settings = (
        f"MCPFORMS = {{'AUTHENTICATION': ['mcpforms.oauth.OAuth2Auth'], 'BASE_URL': 'http://127.0.0.1:{port}'}}\n"
        "OAUTH2_PROVIDER = {'SCOPES': {'mcp': \"Use this site's forms as you\"}, 'DEFAULT_SCOPES': ['mcp'],\n"
        "    'ALLOW_LOCALHOST_LOOPBACK': True, 'ALLOWED_REDIRECT_URI_SCHEMES': ['https', 'http', 'cursor'],\n"
        f"    'COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS': True, 'OIDC_ISS_ENDPOINT': 'http://127.0.0.1:{port}/oauth'}}\n"
    )
    ada = (USERNAME, "ada@example.com", PASSWORD)
    with browser_site(directory, port=port, settings=settings, superuser=ada, setup=SETUP) as url:
        yield url, port


def consent_report(base: str, port: int, artifacts: Path) -> dict[str, Any]:
    """What ``oauth_browser.mjs`` saw of the site at ``base`` signed in as ada: the consent page of each
    client (Claude first), then Allow on the last one; its screenshots go to ``artifacts``."""
    queries = [
        authorize_query(
            "https://claude.ai/oauth/mcp-oauth-client-metadata",
            "https://claude.ai/api/mcp/auth_callback",
            port,
        ),
        authorize_query("dcr-client", "https://claude.ai/api/mcp/auth_callback", port),
        authorize_query("cursor-client", "cursor://anysphere.cursor-mcp/oauth/callback", port),
        authorize_query("local-client", "http://127.0.0.1:8976/callback", port),
    ]
    return node_report("oauth_browser.mjs", base, USERNAME, PASSWORD, str(artifacts), *queries, timeout=180)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    with consent_site(tmp_path_factory.mktemp("oauth-browser")) as running:
        yield running


@pytest.fixture(scope="module")
def report(site: tuple[str, int]) -> dict[str, Any]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob("*.png"):
        old.unlink()
    return consent_report(*site, ARTIFACTS)


def test_nothing_fails_in_the_pages(report):
    assert report["consoleErrors"] == []


@pytest.mark.parametrize("size", ["1280", "phone"])
def test_every_page_fits_the_width(report, size):
    shown = {name: page for name, page in report["pages"].items() if name.endswith(f"-{size}.png")}
    assert len(shown) == 5
    for name, page in shown.items():
        assert page["scrollWidth"] <= page["clientWidth"], name


def test_the_consent_pages_name_the_client_and_warn_for_an_app_on_this_computer(report):
    pages = report["pages"]
    assert pages["consent-1-1280.png"]["heading"] == "Allow Claude to use your account?"
    assert (
        pages["consent-2-1280.png"]["heading"]
        == "Allow <b>Claude</b> (totally official) to use your account?"
    )
    assert pages["consent-1-1280.png"]["warning"] is None
    for name in ("consent-3-1280.png", "consent-4-1280.png", "consent-4-phone.png"):
        assert "an app on this computer" in pages[name]["warning"], name
    assert pages["consent-1-1280.png"]["allowBottom"] <= 800  # Allow is on the first screen of a laptop


def test_allow_sends_the_browser_to_the_clients_callback_with_a_code(report):
    # No CSP form-action stops the redirect after the POST (Chromium enforces it along the chain).
    callback = urlsplit(report["callback"])
    assert callback.path == "/callback" and callback.port == 8976
    answer = parse_qs(callback.query)
    assert answer["code"] and answer["state"] == ["browser-state"]


def test_the_connected_page_lists_the_assistants(report):
    assert report["pages"]["connected-1280.png"]["heading"] == "Connected assistants"
