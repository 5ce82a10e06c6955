"""The supported Django × Python matrix: the test suite on each pair (`make matrix`).

Each Django release is tried on the Pythons it supports: 5.2 LTS on 3.11, 6.0 and 6.1 (the current
release) on 3.12 and 3.13. Django 5.2 on Python 3.11 is the project's own `.venv`, where the main run of
`make test` (coverage, SQLite and PostgreSQL) already covers it; the pairs here run on SQLite, without the
end-to-end tests (`e2e`: real servers and clients whose result does not depend on the Django version),
which the main run runs once.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
# Interpreters come from the machine, never from a download. A pair whose interpreter is missing here is
# skipped with nox's "Python interpreter X not found" line instead of failing the run (nox would fail it
# under CI=true otherwise).
nox.options.download_python = "never"
nox.options.error_on_missing_interpreters = False
nox.options.reuse_venv = "yes"

MATRIX = [("6.0", "3.12"), ("6.0", "3.13"), ("6.1", "3.12"), ("6.1", "3.13")]
# `nox -k py312` runs the pairs of one Python; make matrix runs the two halves side by side.


def interpreter(version: str) -> str:
    """``pythonX.Y`` from PATH when it runs, else pyenv's build of it, else the bare version for nox to
    report as missing. pyenv's shims put every ``pythonX.Y`` on PATH but only run the selected versions."""
    name = f"python{version}"
    found = shutil.which(name)
    if found and subprocess.run([found, "-c", ""], capture_output=True).returncode == 0:
        return found
    pyenv_root = os.environ.get("PYENV_ROOT") or str(Path.home() / ".pyenv")
    builds = sorted(Path(pyenv_root).glob(f"versions/{version}.*/bin/{name}"))
    return str(builds[-1]) if builds else version


@nox.session
@nox.parametrize(
    "python,django",
    [
        nox.param(interpreter(python), django, id=f"django{django}-py{python.replace('.', '')}")
        for django, python in MATRIX
    ],
)
def tests(session: nox.Session, django: str) -> None:
    session.install("--quiet", "--upgrade", "pip>=25.1")  # dependency groups (PEP 735) came in pip 25.1
    session.install("--quiet", "--editable", ".", "--group", "test", f"django=={django}.*")
    version = session.run("python", "-c", "import django; print(django.get_version())", silent=True)
    session.log(f"Django {str(version).strip()}")
    # The install test builds and installs the package itself, and the end-to-end tests need the `e2e`
    # group: the main run covers both, once.
    pytest = [
        "python",
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--ignore=tests/install",
        "--ignore=tests/e2e",
    ]
    session.run(*pytest, "-m", "not e2e", *session.posargs)
