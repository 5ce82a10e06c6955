"""Sign-in as a new user sets it up, from the built wheel to a signed-in call, and each mistake on the way.

A fresh virtualenv and a project made by ``django-admin startproject`` take docs/installation.md's steps
and the sign-in how-to's (docs/howto/access.md) as the pages show them: each shell block run in a shell
with the virtualenv activated (the wheel standing where the pages say ``path/to/mcpforms``), each
settings.py and urls.py block pasted at the end of its file, then ``migrate``, ``check`` (which must say
what the how-to says it says), ``createsuperuser`` and ``runserver``. The form is the tutorial's
``callback``. Then the how-to's script on the official Python SDK's ``OAuthClientProvider`` registers,
opens the authorization page in "the browser" (``BROWSER`` names tests/install/consent.py, which signs
in at the project's own login and approves its consent page with an HTTP client), takes its code back on
its loopback callback and completes the form tool, on both protocol eras. Only the ports differ from the
pages: the tests' are free ones.

The mistakes issue 35 saw people make then run in the same project, each a settings module, a URLconf
or an app of its own beside the real ones, and each must be told with the message that names its fix:
``check`` and ``mcpforms_tools`` in subprocesses, as a user runs them, and the clients where the symptom
is theirs.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
import pytest

from mcpforms.discovery import USE_A_TOKEN
from tests.conformance.run import free_port, running_server
from tests.docs_examples import DOCS, example
from tests.e2e.terminal import piped
from tests.install.user import CHECKOUT, ROOT, USER_ENV, activated, paste

# runserver's address in the pages; the tests put their own port in its place.
ADDRESS = "127.0.0.1:8000"
# Where the how-to's script takes the code back; a free port in its place too.
CALLBACK = "127.0.0.1:8765"
# What the user types at the form's prompts: the script passed only the topic.
TYPED = [("name: ", "Ada"), ("phone: ", "+44 20 7946 0000")]
# What the how-to says `check` prints once its steps are done.
NO_ISSUES = "System check identified no issues (0 silenced)."
# The run's own Python, which has the SDK and fastmcp: the reader installs them where they run a client.
CLIENTS_PATH = f"{Path(sys.executable).parent}{os.pathsep}{USER_ENV.get('PATH', '')}"


@dataclass
class Walkthrough:
    """The project after the pages' steps, its virtualenv, and how long each command took."""

    home: Path
    port: int
    password: str
    took: dict[str, float] = field(default_factory=dict)

    @property
    def directory(self) -> Path:
        return self.home / "mysite"

    @property
    def env(self) -> dict[str, str]:
        """A shell of the user's with the project's virtualenv activated."""
        return USER_ENV | activated(self.home / ".venv")

    @property
    def python(self) -> str:
        return str(self.home / ".venv" / "bin" / "python")

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def shell(
        self,
        what: str,
        script: str,
        *,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        stdin: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``script`` in bash as the user types it, in the activated shell (``env`` on top); count its
        time towards ``what``; fail with its output unless it succeeds."""
        started = time.monotonic()
        done = subprocess.run(
            ["bash", "-e", "-c", script],
            cwd=cwd or self.directory,
            env=self.env | (env or {}),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=600,
        )
        self.took[what] = self.took.get(what, 0.0) + time.monotonic() - started
        assert done.returncode == 0, f"{what}: {script}\n{done.stdout}\n{done.stderr}"
        return done

    def manage(self, *arguments: str) -> subprocess.CompletedProcess[str]:
        """``manage.py`` as a user runs it, whatever it exits with (for the mistakes)."""
        return subprocess.run(
            [self.python, "manage.py", *arguments],
            cwd=self.directory,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    def settings(self, block: str) -> None:
        paste(self.directory / "mysite" / "settings.py", block.replace(ADDRESS, self.address))

    def urls(self, block: str) -> None:
        paste(self.directory / "mysite" / "urls.py", block)


def installing(block: str, wheel: Path) -> str:
    assert CHECKOUT in block, f"the page no longer installs from {CHECKOUT}: {block}"
    return block.replace(CHECKOUT, str(wheel))


@pytest.fixture(scope="module")
def walkthrough(dist, tmp_path_factory) -> Walkthrough:
    site = Walkthrough(tmp_path_factory.mktemp("signing-in"), free_port(), secrets.token_urlsafe())
    # The user's `python` is this run's interpreter, first on the PATH of the shell that makes .venv.
    user_bin = site.home / "bin"
    user_bin.mkdir()
    (user_bin / "python").symlink_to(sys.executable)
    site.shell(
        "python -m venv",
        example("installation-venv"),
        cwd=site.home,
        env={"PATH": f"{user_bin}{os.pathsep}{USER_ENV.get('PATH', '')}", "VIRTUAL_ENV": ""},
    )
    # Installation's step 1, the how-to's step 1 (the Installation page's sign-in line is the same), and
    # Installation's other extras.
    assert example("installation-oauth-pip") == example("access-oauth-pip")
    installs = [
        example("installation-pip"),
        example("access-oauth-pip"),
        example("installation-background-pip"),
        example("installation-wizards-pip"),
    ]
    for block in installs:
        site.shell("pip install", installing(block, dist.wheel), cwd=site.home)

    # The tutorial's project: startproject, and its app `contact` with its form and its tool.
    site.shell("django-admin startproject", "django-admin startproject mysite", cwd=site.home)
    site.shell("startapp", "python manage.py startapp contact")
    (site.directory / "contact" / "forms.py").write_text(example("your-project-form"))
    (site.directory / "contact" / "mcp_tools.py").write_text(example("your-project-mcp-tools"))
    site.settings(
        "INSTALLED_APPS += [\"contact\"]  # the project's own app, as the tutorial's step 3 lists it\n"
    )

    # Installation's steps 2 and 3, the how-to's steps 2 and 3 (the Installation page's sign-in blocks
    # are the same), Installation's background tools.
    assert example("installation-oauth-settings") == example("access-oauth-settings")
    assert example("installation-oauth-urls") == example("access-oauth-urls")
    site.settings(example("installation-installed-apps"))
    site.settings(example("access-oauth-settings"))
    site.settings(example("installation-background-settings"))
    site.urls(example("installation-urls"))
    site.urls(example("access-oauth-urls"))

    # The how-to's step 4, and the user its walk-through signs in as.
    site.shell("migrate", "python manage.py migrate")
    checked = site.shell("check", "python manage.py check")
    assert (checked.stdout.strip(), checked.stderr) == (NO_ISSUES, ""), checked.stdout + checked.stderr
    site.shell(
        "createsuperuser",
        "python manage.py createsuperuser --noinput --username ada --email ada@example.com",
        env={"DJANGO_SUPERUSER_PASSWORD": site.password},
    )
    return site


@pytest.fixture(scope="module")
def served(walkthrough: Walkthrough) -> Iterator[Walkthrough]:
    """The project under ``runserver``, on its port, until the module ends."""
    started = time.monotonic()
    log = walkthrough.home / "runserver.log"
    with running_server(
        log,
        env=walkthrough.env,
        port=walkthrough.port,
        python=walkthrough.python,
        project=walkthrough.directory,
    ):
        walkthrough.took["runserver"] = time.monotonic() - started
        yield walkthrough
    print(timings(walkthrough.took))


def timings(took: dict[str, float]) -> str:
    """How long the walk-through's commands took, each and in all (``pytest -s`` shows it)."""
    lines = [f"  {what}: {seconds:.1f} s" for what, seconds in took.items()]
    return (
        "\nThe sign-in walk-through's commands:\n"
        + "\n".join(lines)
        + f"\n  in all: {sum(took.values()):.1f} s"
    )


def test_check_says_what_the_how_to_says_it_says():
    assert f"`check` says `{NO_ISSUES}`" in (DOCS / "howto" / "access.md").read_text()


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
def test_the_python_sdk_signs_in_through_the_projects_login_and_consent_and_completes_the_form(served, era):
    site, callback = served, f"127.0.0.1:{free_port()}"
    script = example("access-oauth-sdk-script")
    assert ADDRESS in script and CALLBACK in script
    (site.home / "sign_in.py").write_text(script.replace(ADDRESS, site.address).replace(CALLBACK, callback))
    # The browser webbrowser.open starts returns at once, as a real one does, and goes on in the background.
    log = site.home / f"browser-{era}.log"
    browser = site.home / "consent.sh"
    browser.write_text(
        f'#!/bin/sh\ncd "{ROOT}" && PYTHONPATH="{ROOT}" "{sys.executable}" -m tests.install.consent "$1" '
        f'>> "{log}" 2>&1 &\n'
    )
    browser.chmod(0o755)
    command = "python sign_in.py" if era == "2026-07-28" else "python sign_in.py legacy"
    env = {
        "PATH": CLIENTS_PATH,
        "VIRTUAL_ENV": "",
        "BROWSER": str(browser),
        "CONSENT_USER": "ada",
        "CONSENT_PASSWORD": site.password,
    }
    answers = "".join(f"{answer}\n" for _, answer in TYPED)
    done = site.shell(f"python sign_in.py ({era})", command, cwd=site.home, env=env, stdin=answers)

    shown = example("access-oauth-sdk-output").replace(ADDRESS, site.address)
    if era == "2025-11-25":
        shown = shown.replace("Protocol: 2026-07-28", "Protocol: 2025-11-25")
    said = log.read_text() if log.exists() else ""
    assert done.stdout == piped(shown, TYPED), done.stdout + done.stderr + said
    # The browser went through the project's login and its consent page, and the code came back.
    assert "consent answered http://127.0.0.1" in said and "callback answered 200" in said, said
    tokens = site.manage(
        "shell",
        "--verbosity",
        "0",
        "--command",
        # The tokens for the endpoint (scope mcp); a registration's own management token has no user.
        "from oauth2_provider.models import AccessToken;"
        "print(sorted({token.user.username for token in AccessToken.objects.filter(scope='mcp')}))",
    )
    assert tokens.stdout.strip() == "['ada']", tokens.stdout + tokens.stderr


def test_a_browser_page_behind_an_https_proxy_is_told_the_origin_and_both_fixes(served):
    # Issue 35, item 8: a proxy that ends TLS without SECURE_PROXY_SSL_HEADER; the browser's Origin is https.
    refused = httpx2.post(
        f"http://{served.address}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Origin": f"https://{served.address}"},
        timeout=30,
    )
    assert refused.status_code == 403
    message = refused.json()["error"]["message"]
    assert f"the Origin 'https://{served.address}' is not allowed" in message
    assert f"accepts its own, 'http://{served.address}'" in message
    assert "SECURE_PROXY_SSL_HEADER" in message and "MCPFORMS['ALLOWED_ORIGINS']" in message


# -- the mistakes -----------------------------------------------------------------------------------------

# Each mistake: a settings module beside the project's (`from mysite.settings import *`, then the lines that
# make the mistake), and the words `check` must say, the fix among them.
MISTAKES = {
    # Item 2: no URL of a new project is named `login`.
    "login_url": ('LOGIN_URL = "login"', ["mcpforms.E316", "LOGIN_URL = 'admin:login'"]),
    # Item 3: sign-in without mcpforms.urls.
    "no_page": (
        'ROOT_URLCONF = "mysite.urls_without_the_page"',
        ["mcpforms.W202", 'include("mcpforms.urls")'],
    ),
    # Item 9's order: mcpforms.urls before mcpforms.oauth.urls answers the documents sign-in needs.
    "misordered": ('ROOT_URLCONF = "mysite.urls_misordered"', ["mcpforms.E317"]),
    # Items 4 and 7: BASE_URL left at the example, or at a public name ALLOWED_HOSTS does not list.
    "example_base_url": (
        'MCPFORMS = {**MCPFORMS, "BASE_URL": "https://your-site.example"}',
        [
            "mcpforms.E022",
            "'your-site.example' is not in ALLOWED_HOSTS",
            "Add 'your-site.example' to ALLOWED_HOSTS",
        ],
    ),
    # Item 5: OAuth configured, its app not listed: a check, not a traceback.
    "no_toolkit_app": (
        'INSTALLED_APPS = [app for app in INSTALLED_APPS if app != "oauth2_provider"]',
        ["mcpforms.E304", 'INSTALLED_APPS += ["oauth2_provider"]'],
    ),
    # Item 6: the endpoint in no URLconf.
    "no_endpoint": (
        'ROOT_URLCONF = "mysite.urls_without_the_endpoint"',
        ["mcpforms.W005", "every client gets 404 Not Found", 'path("mcp", mcpforms.api.urls)'],
    ),
    # Item 12: a mistyped key, and the nearest one.
    "typo": (
        'MCPFORMS = {**MCPFORMS, "BASE_ULR": MCPFORMS["BASE_URL"]}',
        ["mcpforms.W001", "Did you mean 'BASE_URL'?"],
    ),
    # Item 10: @mcpforms.register(Form) above a function, as @admin.register(Model) is written.
    "register_as_decorator": (
        'INSTALLED_APPS += ["decorated"]',
        ["RegistrationError", "decorate it with @mcpforms.tool(CallMeForm) instead"],
    ),
    # Item 11: a tool whose options fail their checks.
    "failing_tool": ('INSTALLED_APPS += ["failing"]', ["mcpforms.E401"]),
}
# The URLconfs and apps the mistakes name, each made of the pages' blocks but for the mistake.
URLCONF = """\
from django.contrib import admin
from django.urls import path

urlpatterns = [path("admin/", admin.site.urls)]
"""
OAUTH_URLS_ONLY = """
from django.urls import include

import mcpforms.oauth

urlpatterns += [path("", include(mcpforms.oauth.urls))]
"""
MISORDERED = """
from django.urls import include

import mcpforms.oauth

urlpatterns += [path("", include("mcpforms.urls")), path("", include(mcpforms.oauth.urls))]
"""
DECORATED = """
from django import forms

import mcpforms


class CallMeForm(forms.Form):
    phone = forms.CharField()


@mcpforms.register(CallMeForm)
def call_me(request, form):
    return "We will call."
"""
FAILING = """
import mcpforms

from contact.forms import CallbackForm

mcpforms.register(CallbackForm, name="sometimes", ask="sometimes")
"""


@pytest.fixture(scope="module")
def mistaken(walkthrough: Walkthrough) -> dict[str, subprocess.CompletedProcess[str]]:
    """Each mistake's ``manage.py check``, run side by side."""
    package = walkthrough.directory / "mysite"
    (package / "urls_without_the_page.py").write_text(
        URLCONF + example("installation-urls") + OAUTH_URLS_ONLY
    )
    (package / "urls_misordered.py").write_text(URLCONF + example("installation-urls") + MISORDERED)
    (package / "urls_without_the_endpoint.py").write_text(URLCONF + example("access-oauth-urls"))
    for app, tools in (("decorated", DECORATED), ("failing", FAILING)):
        (walkthrough.directory / app).mkdir(exist_ok=True)
        (walkthrough.directory / app / "__init__.py").write_text("")
        (walkthrough.directory / app / "mcp_tools.py").write_text(tools)
    running = {}
    for name, (lines, _said) in MISTAKES.items():
        (package / f"mistake_{name}.py").write_text(
            f"from mysite.settings import *  # noqa: F403\n\n{lines}\n"
        )
        running[name] = subprocess.Popen(
            [walkthrough.python, "manage.py", "check", "--settings", f"mysite.mistake_{name}"],
            cwd=walkthrough.directory,
            env=walkthrough.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    done = {}
    for name, process in running.items():
        stdout, stderr = process.communicate(timeout=300)
        done[name] = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    return done


@pytest.mark.parametrize("mistake", MISTAKES)
def test_check_names_the_fix_of_each_mistake(mistaken, mistake):
    checked = mistaken[mistake]
    said = " ".join((checked.stdout + checked.stderr).split())  # Django wraps nothing; hints may break lines
    for words in MISTAKES[mistake][1]:
        assert words in said, checked.stdout + checked.stderr
    if (
        mistake != "register_as_decorator"
    ):  # an import that fails is Python's traceback, ending in the message
        assert "Traceback" not in said, checked.stderr


def test_mcpforms_tools_says_what_is_not_served(walkthrough, mistaken):
    # Items 6 and 11: where the endpoint is (or that it is nowhere), and a tool that fails its checks.
    unmounted = walkthrough.manage("mcpforms_tools", "--settings", "mysite.mistake_no_endpoint")
    assert unmounted.stdout.startswith("Not served: no MCP endpoint is in the URLconf"), unmounted.stdout
    failing = walkthrough.manage("mcpforms_tools", "--settings", "mysite.mistake_failing_tool")
    assert failing.stdout.startswith("Served at /mcp\n"), failing.stdout
    assert "sometimes: not served (left out of tools/list" in failing.stdout, failing.stdout


def test_a_client_without_a_token_on_a_token_only_site_is_told_to_send_one(walkthrough, mistaken, tmp_path):
    # Item 9: the Installation page's "without sign-in" lines, and fastmcp called without --auth.
    package = walkthrough.directory / "mysite"
    (package / "urls_token_only.py").write_text(
        URLCONF + example("installation-urls") + "\n" + example("installation-page-urls")
    )
    (package / "token_only.py").write_text(
        "from mysite.settings import *  # noqa: F403\n\n"
        + example("installation-page-settings").replace(ADDRESS, walkthrough.address)
        + '\nROOT_URLCONF = "mysite.urls_token_only"\n'
    )
    checked = walkthrough.manage("check", "--settings", "mysite.token_only")
    assert checked.stdout.strip() == NO_ISSUES, checked.stdout + checked.stderr
    env = walkthrough.env | {"DJANGO_SETTINGS_MODULE": "mysite.token_only"}
    port = free_port()
    with running_server(
        tmp_path / "token-only.log",
        env=env,
        port=port,
        python=walkthrough.python,
        project=walkthrough.directory,
    ):
        listed = subprocess.run(
            ["fastmcp", "list", f"http://127.0.0.1:{port}/mcp"],
            env=USER_ENV | {"PATH": CLIENTS_PATH},
            capture_output=True,
            text=True,
            timeout=120,
        )
    printed = " ".join((listed.stdout + listed.stderr).split())  # fastmcp wraps long lines
    assert listed.returncode != 0
    assert "Registration failed: 404" in printed and " ".join(USE_A_TOKEN.split()) in printed, printed
    assert "<html" not in printed.lower(), printed
