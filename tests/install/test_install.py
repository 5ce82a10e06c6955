"""The user's path, from the built package to a completed call.

Build the sdist and the wheel, check them, install the wheel with its runtime dependencies only into a
fresh virtualenv, make a project with ``django-admin startproject``, take the README's "Use it in your
project" steps as written, then serve it and complete an elicitation with the official Python client.
Nothing of this repository's settings, test app or demo is in that project: it is what a user has.

It runs once per ``make test`` (``make install-test``), with the interpreter of the main run and, when
the machine has one, Python 3.13, where pip picks the newest Django.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import textwrap
import tomllib
import zipfile
from dataclasses import dataclass
from email.parser import Parser
from pathlib import Path

import pytest

from noxfile import interpreter
from tests.conformance.run import running_server

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# What a project that installs the wheel gets, and nothing more: no test or typing helpers.
RUNTIME = {"django", "django-ninja", "mcp-types"}
# The user's shell, not this test run's: pytest-django's DJANGO_SETTINGS_MODULE and this checkout on the
# path would hand the new project our settings and our source instead of the wheel.
USER_ENV = {
    name: value
    for name, value in os.environ.items()
    if name not in {"DJANGO_SETTINGS_MODULE", "PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}
}


@dataclass(frozen=True)
class Distributions:
    sdist: Path
    wheel: Path


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Distributions:
    out = tmp_path_factory.mktemp("dist")
    run(sys.executable, "-m", "build", "--outdir", str(out), str(ROOT))  # the wheel is built from the sdist
    (sdist,) = out.glob("*.tar.gz")
    (wheel,) = out.glob("*.whl")
    return Distributions(sdist, wheel)


def run(
    *command: str, cwd: Path | None = None, stdin: str | None = None, env: dict[str, str] | None = None
) -> str:
    done = subprocess.run(
        command, cwd=cwd, env=USER_ENV | (env or {}), input=stdin, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


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
    # (the django-tasks backport Django 5.2 needs), `[wizards]` (django-formtools, for register_wizard).
    assert metadata.get_all("Provides-Extra") == ["oauth", "background", "wizards"]
    assert [line for line in metadata.get_all("Requires-Dist", []) if "extra ==" in line] == [
        'django-oauth-toolkit<4,>=3.4; extra == "oauth"',
        'django-tasks>=0.12; extra == "background"',
        'django-formtools>=2.7; extra == "wizards"',
    ]


def test_the_version_is_the_release_the_changelog_is_preparing():
    version = PYPROJECT["project"]["version"]
    unreleased = re.search(r"^## Unreleased\n\n(.*?)\n", (ROOT / "CHANGELOG.md").read_text(), re.MULTILINE)
    assert unreleased, "CHANGELOG.md lost its Unreleased section"
    release = re.search(r"version (\d+\.\d+\.\d+)", unreleased[1])
    assert release, "the Unreleased section should name the version it becomes"
    assert re.fullmatch(rf"{re.escape(release[1])}(\.dev\d+|a\d+|b\d+|rc\d+)?", version)


# -- a project made by django-admin startproject, as a user has it -----------------------------------------


def readme_step(first_line: str) -> str:
    """The README's code block (in "Use it in your project") whose first line is ``first_line``."""
    section = README.split("## Use it in your project", 1)[1].split("\n## ", 1)[0]
    for block in re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL):
        code = textwrap.dedent(block)
        if code.startswith(first_line + "\n"):
            return code
    raise AssertionError(f"the README's install steps lost the block starting {first_line!r}")


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
    README's steps: mcpforms and an app in ``INSTALLED_APPS``, the URL line, the app's ``mcp_tools.py``."""
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

    directory = home / "shop"
    directory.mkdir()
    run(str(venv / "bin" / "django-admin"), "startproject", "shop", str(directory))
    run(python, "manage.py", "startapp", "contact", cwd=directory)
    settings = directory / "shop" / "settings.py"
    text = settings.read_text()
    assert "'django.contrib.admin'," in text  # the admin every real project has stays installed
    assert '"mcpforms",' in readme_step("INSTALLED_APPS = [")
    settings.write_text(
        text.replace("INSTALLED_APPS = [\n", 'INSTALLED_APPS = [\n    "mcpforms",\n    "contact",\n')
    )
    urls = directory / "shop" / "urls.py"
    urls.write_text(urls.read_text() + "\n" + readme_step("# urls.py"))
    (directory / "contact" / "mcp_tools.py").write_text(readme_step("# contact/mcp_tools.py"))

    checked = subprocess.run(
        [python, "manage.py", "check", "--fail-level", "WARNING"],
        cwd=directory,
        env=USER_ENV,
        capture_output=True,
        text=True,
    )
    migrated = (
        run(python, "manage.py", "migrate", "--noinput", cwd=directory) if checked.returncode == 0 else ""
    )
    return Project(directory, python, checked, migrated)


def test_the_readme_steps_give_a_project_that_checks_and_migrates(project):
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


def test_the_served_tool_is_completed_by_the_official_client(project, tmp_path):
    # README step 6: a user, and a token for them from the management command.
    project.manage(
        "shell", "--command", "from django.contrib.auth.models import User; User.objects.create_user('ada')"
    )
    token = project.manage("mcpforms_token", "create", "ada", "--name", "install test").split("\n")
    raw = next(word for line in token for word in line.split() if word.startswith("mcpf_"))
    log = tmp_path / "server.log"
    with running_server(log, env=USER_ENV, python=project.python, project=project.directory) as port:
        client = readme_step("# call_it.py").replace("127.0.0.1:8000", f"127.0.0.1:{port}")
        (tmp_path / "call_it.py").write_text(client)
        # The model passed only the topic; the user types the rest at the prompts.
        output = run(
            sys.executable,
            str(tmp_path / "call_it.py"),
            stdin="Ada\n+44 20 7946 0000\n",
            env={"MCPFORMS_TOKEN": raw},
        )
    asked, answered = output.splitlines()
    assert asked == "Please fill in: Callback"
    assert answered == "name: phone: We will call Ada on +44 20 7946 0000 about sales."
