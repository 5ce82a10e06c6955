"""A PostgreSQL cluster and a Redis server of a test's own, on free loopback ports, that the test may stop
and start again: the machine's shared servers (127.0.0.1:5432 and :6379) serve other test runs at the
same time, and restarting them would fail those runs."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.conformance.run import free_port, stop_process, wait_until_listening
from tests.e2e.deployment import answers


def postgres_bin() -> Path | None:
    """Where PostgreSQL's server programs are (initdb, pg_ctl), or None when they are not installed."""
    found = shutil.which("pg_ctl") or next(
        iter(sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))[-1:]), None
    )
    return Path(found).parent if found else None


def _as_postgres() -> list[str]:
    # initdb and postgres refuse to run as root: run them as the postgres account then.
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


@dataclass
class Cluster:
    """A PostgreSQL cluster of the test's own; ``stop``/``start`` are the outage."""

    data: Path
    port: int
    bin: Path

    def _ctl(self, *arguments: str) -> None:
        command = [*_as_postgres(), str(self.bin / "pg_ctl"), "-D", str(self.data), "-w", "-t", "30"]
        run = subprocess.run([*command, *arguments], capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stdout + run.stderr

    def start(self) -> None:
        options = f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._ctl("-l", str(self.data / "server.log"), "-o", options, "start")

    def stop(self) -> None:
        # "fast": the server rolls back every open transaction and ends every session at once, as a
        # restart for maintenance or a failover does.
        self._ctl("-m", "fast", "stop")

    def running(self) -> bool:
        return answers(("127.0.0.1", self.port))


@contextmanager
def private_postgres() -> Iterator[Cluster]:
    """A fresh cluster (trust authentication, user postgres) until the block ends; then it is stopped and
    its files removed."""
    bin_dir = postgres_bin()
    assert bin_dir is not None
    # Not under pytest's tmp_path: the postgres account must be able to reach the directory.
    home = Path(tempfile.mkdtemp(prefix="mcpforms-pg-"))
    try:
        if os.geteuid() == 0:
            shutil.chown(home, "postgres")
        data = home / "data"
        initdb = [str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync"]
        run = subprocess.run([*_as_postgres(), *initdb], capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stdout + run.stderr
        cluster = Cluster(data, free_port(), bin_dir)
        cluster.start()
        try:
            yield cluster
        finally:
            if (data / "postmaster.pid").exists():
                cluster.stop()
    finally:
        shutil.rmtree(home, ignore_errors=True)


@dataclass
class Redis:
    """A redis-server of the test's own, in the foreground of a process the test started."""

    port: int
    directory: Path
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log = self.directory / f"redis-{self.port}.log"
        command = [
            "redis-server", "--bind", "127.0.0.1", "--port", str(self.port),
            "--save", "", "--appendonly", "no", "--dir", str(self.directory),
        ]  # fmt: skip
        self.process = subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT)
        wait_until_listening(self.port, self.process, log, timeout=30)

    def stop(self) -> None:
        """Lose everything it holds, as a Redis without persistence does when it restarts."""
        if self.process is not None:
            stop_process(self.process, timeout=10)
            self.process = None
        deadline = time.monotonic() + 10
        while answers(("127.0.0.1", self.port)) and time.monotonic() < deadline:
            time.sleep(0.05)


@contextmanager
def private_redis(directory: Path) -> Iterator[Redis]:
    server = Redis(free_port(), directory)
    server.start()
    try:
        yield server
    finally:
        server.stop()
