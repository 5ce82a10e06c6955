"""What every test run from this checkout shares, the package's (tests/) and the demo's (project/tests/)."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test in an ``e2e`` folder ``e2e``: real processes, browsers and clients, whose result
    depends neither on the suite's database nor on the Django version. ``make test`` runs them once, and
    ``make check`` (``-m "not e2e"``) leaves them out."""
    for item in items:
        if "e2e" in item.path.relative_to(item.config.rootpath).parent.parts:
            item.add_marker(pytest.mark.e2e)
