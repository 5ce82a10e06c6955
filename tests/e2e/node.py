"""Run one of the end-to-end node scripts on the pinned node 22 and read the JSON report it prints last."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.conformance.run import NODE_BIN, ROOT


def node_report(script: str | Path, *arguments: str, timeout: float = 60) -> dict[str, Any]:
    """Run ``script`` (a path, or a name in tests/e2e) with ``arguments``; fail with its stderr unless it
    exits 0."""
    node = NODE_BIN / "node"
    assert node.exists(), "node_modules is missing: run `npm ci` (make does)"
    env = {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    run = subprocess.run(
        [str(node), str(Path(__file__).parent / script), *arguments],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    report: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    return report
