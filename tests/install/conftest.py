from __future__ import annotations

import pytest

from tests.install.user import Distributions, build


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Distributions:
    """The sdist and the wheel, built once for every install test."""
    return build(tmp_path_factory.mktemp("dist"))
