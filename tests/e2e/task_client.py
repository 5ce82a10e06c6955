"""Drive the real tasks client (``task_client.mjs``: ext-tasks over the TypeScript SDK) and the admin's
approval page in Chromium (``approval_admin.mjs``) from a test, while both run against a real server."""

from __future__ import annotations

import hashlib
import json
import os
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from tests.conformance.run import NODE_BIN, ROOT
from tests.e2e.node import node_report

HERE = Path(__file__).resolve().parent
CHROMIUM = Path("/usr/bin/chromium")


def digest(task_id: str) -> str:
    """How the server keeps the task ``task_id`` (``mcpforms_tooltask.digest``): never the id itself."""
    return hashlib.sha256(task_id.encode()).hexdigest()


class TaskClient:
    """``task_client.mjs`` running with ``config``; its JSON lines are read as they come."""

    def __init__(self, **config: Any) -> None:
        node = NODE_BIN / "node"
        assert node.exists(), "node_modules is missing: run `npm ci` (make does)"
        env = {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
        self.process = subprocess.Popen(
            [str(node), str(HERE / "task_client.mjs"), json.dumps(config)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[dict[str, Any]] = []
        self._incoming: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._incoming.put(json.loads(line))
        self._incoming.put(None)

    def until(self, event: str, timeout: float = 60, **expected: Any) -> dict[str, Any]:
        """The next line of ``event`` (whose fields include ``expected``), every line before it kept."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._incoming.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {event!r} line within {timeout} s; so far: {self.lines}") from None
            if line is None:
                raise AssertionError(
                    f"the client ended before a {event!r} line: {self.lines}\n{self.stderr()}"
                )
            self.lines.append(line)
            if line["event"] == event and all(line.get(key) == value for key, value in expected.items()):
                return line

    def finish(self, timeout: float = 30) -> list[dict[str, Any]]:
        """Wait for the client to end (it must end well); every line it printed."""
        code = self.process.wait(timeout=timeout)
        assert code == 0, self.stderr()
        while (line := self._incoming.get(timeout=5)) is not None:
            self.lines.append(line)
        return self.lines

    def stderr(self) -> str:
        if self.process.poll() is None or self.process.stderr is None:
            return ""
        return self.process.stderr.read()[-4000:]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def in_the_admin(base: str, username: str, password: str, task: int, **options: Any) -> dict[str, Any]:
    """Sign in to the admin at ``base`` in Chromium and open the request ``task``; ``options`` as
    ``approval_admin.mjs`` takes them (``decision``, ``reason``, ``shots``, ``hold``)."""
    config = {"base": base, "username": username, "password": password, "task": task, **options}
    return node_report("approval_admin.mjs", json.dumps(config), timeout=120)


class HeldPage:
    """``approval_admin.mjs`` with its page open and its decision held until ``go()``."""

    def __init__(self, directory: Path, base: str, username: str, password: str, task: int, **options: Any):
        self.ready, self.go_file = directory / f"ready-{task}", directory / f"go-{task}"
        hold = {"ready": str(self.ready), "go": str(self.go_file)}
        config = {"base": base, "username": username, "password": password, "task": task, "hold": hold}
        env = {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
        self.process = subprocess.Popen(
            [str(NODE_BIN / "node"), str(HERE / "approval_admin.mjs"), json.dumps({**config, **options})],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def opened(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not self.ready.exists():
            assert self.process.poll() is None, self.process.communicate()[1][-4000:]
            assert time.monotonic() < deadline, "the admin page did not open"
            time.sleep(0.1)

    def go(self, timeout: float = 60) -> dict[str, Any]:
        self.go_file.write_text("go")
        out, err = self.process.communicate(timeout=timeout)
        assert self.process.returncode == 0, err[-4000:]
        report: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        return report
