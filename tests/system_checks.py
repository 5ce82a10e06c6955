"""What the tests of system checks share: the ids a check reported, and ``manage.py check`` in a process
of its own, which proves a check is registered with Django and not merely importable."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.core.checks import CheckMessage

ROOT = Path(__file__).resolve().parent.parent


def ids(messages: Iterable[CheckMessage]) -> list[str | None]:
    return [message.id for message in messages]


def manage_py_check(directory: Path, mcpforms: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    """Run ``manage.py check`` on the test settings with ``MCPFORMS = mcpforms`` (a settings module
    written to ``directory``)."""
    (directory / "check_settings.py").write_text(f"from tests.settings import *\nMCPFORMS = {mcpforms!r}\n")
    return subprocess.run(
        [sys.executable, "-m", "django", "check"],
        cwd=ROOT,
        env={"PYTHONPATH": f"{directory}:{ROOT}", "DJANGO_SETTINGS_MODULE": "check_settings", "PATH": ""},
        capture_output=True,
        text=True,
        check=False,
    )
