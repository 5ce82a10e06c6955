"""Server processes for ``bench/http_flow.py``: start one, find its workers, read their CPU and memory."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bench.procfs import children, cpu_ticks, status_kib

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-2000:]


@dataclass
class ServerProcess:
    """One server (a master and its ``workers`` worker processes) listening on ``port``."""

    name: str
    argv: list[str]
    port: int
    workers: int
    env: Mapping[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    worker_pids: list[int] = field(default_factory=list)

    def start(self, log: Path, timeout: float = 60) -> None:
        """Start the server, and return once it accepts connections and all its workers are up."""
        with log.open("wb") as out:
            self.process = subprocess.Popen(
                self.argv, cwd=ROOT, env={**os.environ, **self.env}, stdout=out, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.process.returncode}: {_tail(log)}")
            self.worker_pids = children(self.process.pid)
            if len(self.worker_pids) >= self.workers and self._accepts():
                return
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"{self.name} did not start within {timeout:.0f} s: {_tail(log)}")

    def _accepts(self) -> bool:
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
        except OSError:
            return False
        return True

    def workers_changed(self) -> bool:
        """Whether a worker died or was replaced since the start: its CPU time is then lost."""
        return self.process is None or children(self.process.pid) != self.worker_pids

    def cpu_ticks(self) -> tuple[int, int]:
        return cpu_ticks(self.worker_pids)

    def peak_rss_kib(self) -> list[int]:
        return [status_kib(pid) for pid in self.worker_pids]

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
