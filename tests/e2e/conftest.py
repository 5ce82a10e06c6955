"""A real server process for the end-to-end tests: the conformance fixtures behind ``manage.py runserver``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conformance.run import free_port, start_server, wait_until_listening


@pytest.fixture(scope="session")
def server_url() -> Iterator[str]:
    port = free_port()
    server = start_server(port)
    try:
        wait_until_listening(port, server)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        server.wait(timeout=10)
