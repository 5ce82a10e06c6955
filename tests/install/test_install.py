"""The user's path, from the built package to a completed call.

Build the sdist and the wheel, check them, install the wheel with its runtime dependencies only into a
fresh virtualenv, make a project with ``django-admin startproject``, and follow
docs/tutorials/your-project.md step by step, each step's block as the page shows it (fetched by name):
the form, ``INSTALLED_APPS``, the URL line, ``contact/mcp_tools.py``, ``migrate``, what
``mcpforms_tools`` prints, the token line, the one-line ``fastmcp call`` against the running server, and
the Python SDK script that answers the elicitation. The README's short example is the tutorial's code.
Nothing of this repository's settings, test app or demo is in that project: it is what a user has.

It runs once per ``make test`` (``make install-test``), with the interpreter of the main run and, when
the machine has one, Python 3.13, where pip picks the newest Django.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
import tarfile
import textwrap
import tomllib
import zipfile
from dataclasses import dataclass
from email.parser import Parser
from importlib.metadata import version
from pathlib import Path

import pytest

from noxfile import interpreter
from tests.conformance.run import running_server
from tests.docs_examples import example, pages
from tests.e2e.terminal import piped
from tests.install.user import USER_ENV, run

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
# The tutorial's server, as `python manage.py runserver` serves it; the tests put their port in its place.
TUTORIAL_ADDRESS = "127.0.0.1:8000"
# What the tutorial's user types at the prompts: the model passed only the topic.
TYPED = [("name", "Ada"), ("phone", "+44 20 7946 0000")]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# What a project that installs the wheel gets, and nothing more: no test or typing helpers.
RUNTIME = {"django", "django-ninja", "mcp-types"}


def test_both_distributions_pass_twine_check(dist):
    output = run(sys.executable, "-m", "twine", "check", "--strict", str(dist.sdist), str(dist.wheel))
    assert output.count("PASSED") == 2


def test_the_wheel_holds_templates_migrations_and_py_typed(dist):
    names = set(zipfile.ZipFile(dist.wheel).namelist())
    assert "mcpforms/py.typed" in names
    assert "mcpforms/templates/mcpforms/form.html" in names
    assert {"mcpforms/migrations/__init__.py", "mcpforms/migrations/0001_initial.py"} <= names
    assert not [name for name in names if name.startswith(("tests/", "project/", "bench/"))]


def test_the_sdist_is_the_package_and_its_documents_only(dist):
    with tarfile.open(dist.sdist) as archive:
        names = [name.split("/", 1)[1] for name in archive.getnames() if "/" in name]
    top = {name.split("/")[0] for name in names}
    assert top == {"mcpforms", "mcpforms.egg-info", "PKG-INFO", "README.md", "CHANGELOG.md", "LICENSE"} | {
        "pyproject.toml",
        "setup.cfg",
        "MANIFEST.in",
    }
    assert not [name for name in names if "__pycache__" in name or name.endswith((".pyc", ".sqlite3"))]


def test_the_metadata_names_the_supported_range_and_where_to_look(dist):
    with zipfile.ZipFile(dist.wheel) as wheel:
        (metadata_name,) = [name for name in wheel.namelist() if name.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(wheel.read(metadata_name).decode())
    classifiers = metadata.get_all("Classifier", [])
    for django in ("5.2", "6.0", "6.1"):
        assert f"Framework :: Django :: {django}" in classifiers
    for python in ("3.11", "3.12", "3.13"):
        assert f"Programming Language :: Python :: {python}" in classifiers
    assert "Typing :: Typed" in classifiers
    assert metadata["License-Expression"] == "MIT"
    assert {url.split(",")[0] for url in metadata.get_all("Project-URL", [])} >= {"Source", "Changelog"}
    required = {
        re.split(r"[<>=!~ ;\[]", line, maxsplit=1)[0].lower()
        for line in metadata.get_all("Requires-Dist", [])
        if "extra ==" not in line
    }
    assert required == RUNTIME
    # The optional parts come only with their extras: `pip install "mcpforms[oauth]"`, `[background]`
    # (the django-tasks backport Django 5.2 needs), `[wizards]` (django-formtools, for register_wizard),
    # `[wizard-pages]` (cryptography, which encrypts what a wizard's URL-mode page keeps).
    assert metadata.get_all("Provides-Extra") == ["oauth", "background", "wizards", "wizard-pages"]
    assert [line for line in metadata.get_all("Requires-Dist", []) if "extra ==" in line] == [
        'django-oauth-toolkit<4,>=3.4; extra == "oauth"',
        'django-tasks>=0.12; extra == "background"',
        'django-formtools>=2.7; extra == "wizards"',
        'cryptography>=47; extra == "wizard-pages"',
    ]


def test_the_version_is_the_release_the_changelog_is_preparing():
    version = PYPROJECT["project"]["version"]
    unreleased = re.search(r"^## Unreleased\n\n(.*?)\n", (ROOT / "CHANGELOG.md").read_text(), re.MULTILINE)
    assert unreleased, "CHANGELOG.md lost its Unreleased section"
    release = re.search(r"version (\d+\.\d+\.\d+)", unreleased[1])
    assert release, "the Unreleased section should name the version it becomes"
    assert re.fullmatch(rf"{re.escape(release[1])}(\.dev\d+|a\d+|b\d+|rc\d+)?", version)


# -- a project made by django-admin startproject, as a user has it -----------------------------------------


def readme_block(first_line: str) -> str:
    """The README's python block whose first line is ``first_line`` (a file name comment), without it."""
    blocks: list[str] = re.findall(r"^```python\n(.*?)^```", README, flags=re.DOTALL | re.MULTILINE)
    for block in blocks:
        if block.startswith(first_line + "\n"):
            return block.removeprefix(first_line + "\n")
    raise AssertionError(f"the README lost its example starting {first_line!r}")


def test_the_readme_example_is_the_tutorials_code():
    # The README's short example is what the tutorial's steps 4 and 5 have the user write, so the project
    # below proves both.
    assert readme_block("# contact/mcp_tools.py") == example("your-project-mcp-tools")
    assert readme_block("# urls.py") == example("your-project-urls")


def interpreters() -> list[str]:
    """This run's Python, and 3.13 (where pip picks the newest Django) when the machine has it."""
    newest = interpreter("3.13")
    runs = Path(newest).is_absolute() and subprocess.run([newest, "-c", ""]).returncode == 0
    return [sys.executable, newest] if runs and newest != sys.executable else [sys.executable]


@dataclass(frozen=True)
class Project:
    directory: Path
    python: str
    checked: subprocess.CompletedProcess[str]
    migrated: str

    def manage(self, *arguments: str) -> str:
        return run(self.python, "manage.py", *arguments, cwd=self.directory)


@pytest.fixture(scope="module", params=interpreters(), ids=lambda python: Path(python).name)
def project(request, dist, tmp_path_factory) -> Project:
    """A fresh virtualenv holding the wheel and its runtime dependencies, and a new project that took the
    tutorial's steps 1 to 6, each block as the page shows it."""
    home = tmp_path_factory.mktemp("user")
    venv = home / "venv"
    run(request.param, "-m", "venv", str(venv))
    python = str(venv / "bin" / "python")
    run(python, "-m", "pip", "install", "--quiet", str(dist.wheel))
    installed = run(
        python, "-m", "pip", "list", "--format=freeze", "--exclude", "pip", "--exclude", "setuptools"
    )
    names = {line.split("==")[0].lower().replace("_", "-") for line in installed.splitlines()}
    assert RUNTIME | {"mcpforms"} <= names
    assert not names & {"django-stubs-ext", "django-stubs", "mcp", "pytest"}

    # Step 1: `django-admin startproject mysite`, `cd mysite`, `startapp contact`, and the app's form.
    run(str(venv / "bin" / "django-admin"), "startproject", "mysite", cwd=home)
    directory = home / "mysite"
    run(python, "manage.py", "startapp", "contact", cwd=directory)
    (directory / "contact" / "forms.py").write_text(example("your-project-form"))
    # Step 3: the tutorial's INSTALLED_APPS in place of startproject's, which it must keep whole.
    settings = directory / "mysite" / "settings.py"
    text = settings.read_text()
    listed = re.search(r"^INSTALLED_APPS = \[\n.*?^\]\n", text, flags=re.DOTALL | re.MULTILINE)
    assert listed, "startproject's settings.py no longer has an INSTALLED_APPS list"
    ours = example("your-project-installed-apps")
    theirs = set(re.findall(r"'([\w.]+)'", listed[0]))
    assert "django.contrib.admin" in theirs and theirs <= set(re.findall(r'"([\w.]+)"', ours))
    settings.write_text(text.replace(listed[0], ours))
    # Step 4: the URL line at the end of urls.py. Step 5: contact/mcp_tools.py.
    urls = directory / "mysite" / "urls.py"
    urls.write_text(urls.read_text() + "\n" + example("your-project-urls"))
    (directory / "contact" / "mcp_tools.py").write_text(example("your-project-mcp-tools"))

    checked = subprocess.run(
        [python, "manage.py", "check", "--fail-level", "WARNING"],
        cwd=directory,
        env=USER_ENV,
        capture_output=True,
        text=True,
    )
    # Step 6.
    migrated = (
        run(python, "manage.py", "migrate", "--noinput", cwd=directory) if checked.returncode == 0 else ""
    )
    return Project(directory, python, checked, migrated)


def test_the_tutorials_steps_give_a_project_that_checks_and_migrates(project):
    # Before 0.1.0 this failed at `check`: mcpforms.admin subscripted ModelForm when imported.
    assert project.checked.returncode == 0, project.checked.stderr
    assert "System check identified no issues" in project.checked.stdout
    assert "Applying mcpforms.0001_initial... OK" in project.migrated


def test_the_admin_pages_of_mcpforms_open(project):
    script = textwrap.dedent(
        """
        from django.contrib.auth.models import User
        from django.test import Client

        staff = User.objects.create_superuser("staff", "staff@example.com", "not-used")
        browser = Client(HTTP_HOST="localhost")
        browser.force_login(staff)
        for page in ("formdefinition/add/", "formdefinition/", "submission/", "accesstoken/add/"):
            print(page, browser.get("/admin/mcpforms/" + page).status_code)
        """
    )
    assert project.manage("shell", "--verbosity", "0", "--command", script).split() == [
        "formdefinition/add/",
        "200",
        "formdefinition/",
        "200",
        "submission/",
        "200",
        "accesstoken/add/",
        "200",
    ]


def test_mcpforms_tools_prints_what_the_tutorial_shows(project):
    # Step 7: the check before any client.
    assert project.manage("mcpforms_tools") == example("your-project-tools-output")


def test_without_a_token_the_endpoint_answers_401(project, tmp_path):
    script = textwrap.dedent(
        """
        from django.test import Client

        response = Client(HTTP_HOST="localhost").post("/mcp", "{}", content_type="application/json")
        print(response.status_code, response["WWW-Authenticate"])
        """
    )
    assert (
        project.manage("shell", "--verbosity", "0", "--command", script).strip() == '401 Bearer realm="mcp"'
    )


def test_the_tutorials_token_fastmcp_call_and_script_complete_the_call(project, tmp_path):
    # Step 8: a user (the tutorial's createsuperuser, without its prompts), then the token line as written,
    # run with the project's virtualenv first on PATH, as an activated one is.
    run(
        project.python,
        *("manage.py", "createsuperuser", "--noinput", "--username", "ada", "--email", "ada@example.com"),
        cwd=project.directory,
        env={"DJANGO_SUPERUSER_PASSWORD": secrets.token_urlsafe()},
    )
    path = f"{Path(project.python).parent}{os.pathsep}{USER_ENV.get('PATH', '')}"
    shell = ["bash", "-e", "-c", example("your-project-token") + '\nprintf %s "$MCPFORMS_TOKEN"']
    token = run(*shell, cwd=project.directory, env={"PATH": path})
    assert token.startswith("mcpf_")

    log = tmp_path / "server.log"
    with running_server(log, env=USER_ENV, python=project.python, project=project.directory) as port:
        address = f"127.0.0.1:{port}"
        # Step 9: the one-line fastmcp call (from this run's environment, where pip put fastmcp); the user
        # types the name and the phone at its prompts.
        call = example("your-project-fastmcp-call")
        assert TUTORIAL_ADDRESS in call
        fastmcp = f"{Path(sys.executable).parent}{os.pathsep}{path}"
        answers = "".join(f"{answer}\n" for _, answer in TYPED)
        output = run(
            "bash",
            "-c",
            call.replace(TUTORIAL_ADDRESS, address),
            stdin=answers,
            env={"PATH": fastmcp, "MCPFORMS_TOKEN": token},
        )
        prompts = [(f"  {name} (string) *: ", answer) for name, answer in TYPED]
        assert output.strip() == piped(example("your-project-fastmcp-output"), prompts).strip()

        # Step 10: the Python SDK script, which asks the same questions with input().
        client = example("your-project-call-it")
        assert TUTORIAL_ADDRESS in client
        (tmp_path / "call_it.py").write_text(client.replace(TUTORIAL_ADDRESS, address))
        output = run(
            sys.executable, str(tmp_path / "call_it.py"), stdin=answers, env={"MCPFORMS_TOKEN": token}
        )
    prompts = [(f"{name}: ", answer) for name, answer in TYPED]
    assert output == piped(example("your-project-call-it-output"), prompts)


# Every client a page has the reader install, at the version this run tests it with: `pip install fastmcp`
# alone would give tomorrow's release, which the page's output was never checked against.
CLIENT_INSTALL = re.compile(r"pip install (?P<name>fastmcp|mcp)\b(?P<pin>==[\w.]+)?")


def test_the_pages_pin_the_clients_they_install_to_the_versions_tested():
    found = {
        f"{path.relative_to(ROOT)}: {match[0]}": match
        for path in pages()
        for match in CLIENT_INSTALL.finditer(path.read_text(encoding="utf-8"))
    }
    assert found, "no page installs fastmcp or mcp any more"
    unpinned = {where for where, match in found.items() if match["pin"] != f"=={version(match['name'])}"}
    assert not unpinned, f"pin these to the installed versions: {sorted(unpinned)}"
    assert (
        example("your-project-fastmcp-install").strip()
        == f"python -m pip install fastmcp=={version('fastmcp')}"
    )
