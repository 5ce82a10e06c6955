"""A real server process for the end-to-end tests: the conformance fixtures behind ``manage.py runserver``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conformance.run import running_server


@pytest.fixture(scope="session")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_server(tmp_path_factory.mktemp("e2e") / "server.log") as port:
        yield f"http://127.0.0.1:{port}/mcp"
