"""`make run` installs the `demo` dependency group, not the whole `dev` one: the package and the few
packages the demo's settings name are enough to check, migrate and seed it in a virtualenv of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
SETTINGS = "from project.settings import *\n\nDATABASES['default']['NAME'] = {database!r}\n"


def run(command: list[str], **kwargs: Any) -> str:
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, **kwargs)
    assert done.returncode == 0, done.stdout + done.stderr
    out: str = done.stdout
    return out


def test_the_demo_runs_on_its_own_group(tmp_path):
    python = str(tmp_path / "venv" / "bin" / "python")
    pip = [python, "-m", "pip", "install", "--quiet"]
    run([sys.executable, "-m", "venv", str(tmp_path / "venv")])
    run([*pip, "--upgrade", "pip>=25.1"])  # dependency groups (PEP 735) came in pip 25.1
    run([*pip, "--editable", str(ROOT), "--group", f"{ROOT / 'pyproject.toml'}:demo"])
    installed = run([python, "-m", "pip", "list", "--format=freeze"]).split()
    assert len(installed) < 40, installed  # the dev group is some 170
    assert not any(name.lower().startswith(("pytest", "sphinx", "fastmcp")) for name in installed)
    (tmp_path / "group_demo_settings.py").write_text(SETTINGS.format(database=str(tmp_path / "demo.sqlite3")))
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    env["DJANGO_SETTINGS_MODULE"] = "group_demo_settings"
    env.pop("DATABASE_URL", None)
    for command in (["check"], ["migrate", "--noinput"], ["seed_demo"]):
        run([python, "manage.py", *command], cwd=ROOT, env=env)
