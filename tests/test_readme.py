"""The README's Python examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)


def test_the_core_api_example_runs():
    blocks = python_blocks()
    assert blocks, "the README lost its examples"
    for block in blocks:
        exec(compile(block, str(README), "exec"), {"__name__": "readme"})
