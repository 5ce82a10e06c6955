"""The demo as an OAuth authorization server on a port of its own, and a browser without a browser that
signs in as the demo's staff user and approves the consent page, for the conformance suite's
``authorization`` mode (``run.py``) and the real OAuth clients of ``tests/e2e/test_oauth_clients.py``.

Nothing here starts a server (``run.running_server`` does): this module only writes the settings, prepares
the database and drives the pages, so that ``run.py`` can import it.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx2

ROOT = Path(__file__).resolve().parents[2]
# The login project/demo/management/commands/seed_demo.py creates, and the home page names.
STAFF = ("staff", "mcpforms-demo")
LOGIN_PATH = "/admin/login/"  # the demo's LOGIN_URL


@dataclass
class OAuthDemo:
    """The demo's settings on a database of its own, its ``BASE_URL`` the port it will be served on."""

    port: int
    database: Path
    env: dict[str, str]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def endpoint(self) -> str:
        return f"{self.base_url}/mcp"

    @property
    def issuer(self) -> str:
        """The authorization server's issuer (RFC 8414 §2): a path issuer below ``BASE_URL``."""
        return f"{self.base_url}/oauth"

    def manage(self, *arguments: str, stdin: str = "") -> str:
        """Run a management command against the same database, in another process."""
        run = subprocess.run(
            [sys.executable, "manage.py", *arguments],
            cwd=ROOT,
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
        )
        assert run.returncode == 0, run.stderr[-4000:]
        return run.stdout

    def register_public_client(self, name: str, redirect_uri: str) -> str:
        """A client an administrator registered by hand (a DOT application): public, authorization code,
        consent asked; its ``client_id``."""
        script = (
            "from oauth2_provider.models import Application as A\n"
            f"app = A.objects.create(name={name!r}, client_type=A.CLIENT_PUBLIC,"
            f" authorization_grant_type=A.GRANT_AUTHORIZATION_CODE, redirect_uris={redirect_uri!r})\n"
            "print(app.client_id)\n"
        )
        return self.manage("shell", "--no-imports", "-c", script).strip().splitlines()[-1]

    def browser(self) -> ConsentBrowser:
        return ConsentBrowser(self.base_url)


def oauth_demo(directory: Path, port: int, *, settings: str = "") -> OAuthDemo:
    """Write a settings module (the demo's, on a fresh SQLite file, ``BASE_URL`` on ``port``, then the
    lines of ``settings``), migrate and seed it: what ``make run`` does, on another port."""
    database = directory / "oauth-demo.sqlite3"
    module = f"oauth_demo_{port}"
    (directory / f"{module}.py").write_text(
        "from project.settings import *\n"
        f"DATABASES['default']['NAME'] = {str(database)!r}\n"
        f"MCPFORMS = {{**MCPFORMS, 'BASE_URL': 'http://127.0.0.1:{port}'}}\n"
        f"{settings}\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": f"{directory}{os.pathsep}{ROOT}",
        "DJANGO_SETTINGS_MODULE": module,
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("DATABASE_URL", None)
    demo = OAuthDemo(port, database, env)
    demo.manage("migrate", "--noinput")
    demo.manage("seed_demo")
    return demo


# ---- the browser ------------------------------------------------------------------------------------------


@dataclass
class Form:
    action: str
    method: str
    fields: list[tuple[str, str]] = field(default_factory=list)
    buttons: list[tuple[str, str]] = field(default_factory=list)  # named submit buttons


class _Forms(HTMLParser):
    """Every ``<form>`` of a page with the fields a browser would send: hidden and text inputs with their
    values, checked boxes, and the named submit buttons (a browser sends only the one clicked)."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[Form] = []
        self.inside = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        if tag == "form":
            self.forms.append(Form(attributes.get("action", ""), attributes.get("method", "get").lower()))
            self.inside = True
            return
        if not self.inside or "name" not in attributes:
            return
        kind = attributes.get("type", "submit" if tag == "button" else "text").lower()
        pair = (attributes["name"], attributes.get("value", ""))
        if tag in ("input", "button") and kind == "submit":
            self.forms[-1].buttons.append(pair)
        elif tag == "input" and (kind not in ("checkbox", "radio") or "checked" in attributes):
            self.forms[-1].fields.append(pair)

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.inside = False


def _multi(pairs: list[tuple[str, str]]) -> dict[str, list[str]]:
    """Form fields as the HTTP client sends them, a name given twice (``resource``, say) kept twice."""
    fields: dict[str, list[str]] = {}
    for name, value in pairs:
        fields.setdefault(name, []).append(value)
    return fields


def forms_of(page: str) -> list[Form]:
    parser = _Forms()
    parser.feed(page)
    return parser.forms


class ConsentError(AssertionError):
    """The authorization server did not end in a redirect to the client."""


def summary(response: httpx2.Response) -> str:
    """What went wrong, in a line or a few: the exception of Django's debug page, else the body's end."""
    text = response.text
    title = re.search(r"<title>(.*?)</title>", text, re.S)
    value = re.search(r'<pre class="exception_value">(.*?)</pre>', text, re.S)
    if title and value:
        return html.unescape(f"{title.group(1).strip()}: {value.group(1).strip()}")
    return text[-2000:]


class ConsentBrowser:
    """A user at the demo's pages, without a browser: signs in with the site's own login, opens the
    authorization URL a client printed, approves the consent form as it is (its CSRF token and hidden
    fields) and reads where the server sends the user next, the client's callback with ``code``."""

    def __init__(self, base_url: str, *, username: str = STAFF[0], password: str = STAFF[1]) -> None:
        self.base_url = base_url
        self.username, self.password = username, password
        self.http = httpx2.Client(follow_redirects=False, timeout=30)
        self.pages: list[str] = []  # every consent page shown, for the tests to read

    def sign_in(self) -> None:
        login = urljoin(self.base_url, LOGIN_PATH)
        page = self.http.get(login)
        assert page.status_code == 200, summary(page)
        (form,) = [form for form in forms_of(page.text) if dict(form.fields).get("username") is not None]
        fields = {**dict(form.fields), "username": self.username, "password": self.password, "next": "/"}
        signed_in = self.http.post(urljoin(login, form.action), data=fields, headers={"Referer": login})
        assert signed_in.status_code == 302, f"could not sign in as {self.username}: {summary(signed_in)}"

    def approve(self, authorization_url: str, *, allow: bool = True) -> str:
        """Open ``authorization_url`` signed in, answer the consent page, and return the ``Location`` the
        server redirects to (the client's redirect URI with ``code`` or ``error``)."""
        page = self.http.get(authorization_url)
        if page.status_code == 302 and urlsplit(page.headers["Location"]).path == LOGIN_PATH:
            self.sign_in()  # the site's own login first, as a person would
            page = self.http.get(authorization_url)
        if page.status_code in (301, 302, 303):
            return page.headers["Location"]  # approved before, or refused without a page
        if page.status_code != 200:
            raise ConsentError(f"{page.status_code} from {authorization_url}: {summary(page)}")
        self.pages.append(page.text)
        consent = [form for form in forms_of(page.text) if any(n == "allow" for n, _ in form.buttons)]
        if not consent:
            raise ConsentError(f"no consent form at {authorization_url}: {summary(page)}")
        form = consent[0]
        fields = list(form.fields)
        if allow:
            fields += [button for button in form.buttons if button[0] == "allow"]
        target = urljoin(authorization_url, form.action) if form.action else authorization_url
        answered = self.http.post(target, data=_multi(fields), headers={"Referer": authorization_url})
        if answered.status_code not in (302, 303):
            raise ConsentError(f"the consent POST answered {answered.status_code}: {summary(answered)}")
        location: str = answered.headers["Location"]
        return location

    def close(self) -> None:
        self.http.close()


def deliver(location: str, *, attempts: int = 50) -> httpx2.Response:
    """Follow the consent page's redirect to the loopback server the client listens on, as the browser
    would; the client's server may still be starting, so a refused connection is tried again."""
    for _ in range(attempts):
        try:
            return httpx2.get(location, timeout=30)
        except httpx2.ConnectError:
            time.sleep(0.1)
    raise ConsentError(f"nobody listens at {location}")
