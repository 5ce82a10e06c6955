"""A real server process for the end-to-end tests: the conformance fixtures behind ``manage.py runserver``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.run import free_port, start_server, wait_until_listening


@pytest.fixture(scope="session")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log: Path = tmp_path_factory.mktemp("e2e") / "server.log"
    server = start_server(port, log)
    try:
        wait_until_listening(port, server, log)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        server.wait(timeout=10)
