"""What the install tests share: the user's shell, the built distributions, a new project of the user's.

Nothing of this repository's settings, test app or demo is in a project made here: it is what a user
has, a virtualenv holding the wheel and a project ``django-admin startproject`` made.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The user's shell, not this test run's: pytest-django's DJANGO_SETTINGS_MODULE and this checkout on the
# path would hand the new project our settings and our source instead of the wheel.
USER_ENV = {
    name: value
    for name, value in os.environ.items()
    if name not in {"DJANGO_SETTINGS_MODULE", "PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}
}
# Where the pages say mcpforms' checkout is, in their install commands: the tests put the wheel there.
CHECKOUT = "path/to/mcpforms"


@dataclass(frozen=True)
class Distributions:
    sdist: Path
    wheel: Path


def build(out: Path) -> Distributions:
    """The sdist and the wheel of this checkout, built in ``out`` (the wheel from the sdist)."""
    run(sys.executable, "-m", "build", "--outdir", str(out), str(ROOT))
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


def activated(venv: Path) -> dict[str, str]:
    """The environment of a shell in which ``source venv/bin/activate`` ran."""
    return {"VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}{os.pathsep}{USER_ENV.get('PATH', '')}"}


def paste(file: Path, block: str) -> None:
    """Paste ``block`` at the end of ``file``, as a reader does, after a blank line."""
    file.write_text(file.read_text().rstrip() + "\n\n" + block)


def replace_list(file: Path, name: str, block: str) -> None:
    """Put ``block`` in place of the list ``name = [...]`` of ``file`` (startproject's ``INSTALLED_APPS``)."""
    text = file.read_text()
    listed = re.search(rf"^{name} = \[\n.*?^\]\n", text, flags=re.DOTALL | re.MULTILINE)
    assert listed, f"{file.name} no longer has a {name} list"
    file.write_text(text.replace(listed[0], block))
